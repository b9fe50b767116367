import Foundation
import Locking

/// The live activities of one device, as ActivityKit's `Activity.activities` and its limit on
/// how many may run at once; ``run()`` lets time act on them (stale, dismissed).
///
/// Safe to use from any task. An activity counts as live until it is dismissed, so an ended one
/// still counts during its dismissal delay, as on iOS.
public final class ActivityCenter: Sendable {
    /// The clock that dates every change and decides staleness and dismissal.
    public let clock: any WallClock
    /// How many activities may be live at once.
    public let maximumActivities: Int

    private let live = Locked<[any ActivityLifecycle]>([])
    private let wakers = Locked(Registrations<AsyncStream<Void>.Continuation>())

    /// Creates a center with a clock and a limit on live activities (8 by default).
    public init(clock: any WallClock, maximumActivities: Int = 8) {
        self.clock = clock
        self.maximumActivities = maximumActivities
    }

    /// Starts an activity with attributes and first content; its start is event 1 of its `events`.
    ///
    /// Time is applied to the other activities first, so that those past their dismissal date no
    /// longer count.
    ///
    /// - Parameter id: the activity's id; nil for a lowercased UUID.
    /// - Throws: `ActivityError` `.tooManyActivities` when `maximumActivities` are live,
    ///   `.duplicateActivityID` when a live activity has `id`, `.invalidActivityID` when `id` is not
    ///   1-64 characters a-z, 0-9, `.`, `_` or `-` starting with a letter or digit.
    public func request<Attributes: ActivityAttributes>(
        attributes: Attributes, content: ActivityContent<Attributes.ContentState>, id: String? = nil
    ) throws(ActivityError) -> Activity<Attributes> {
        try add(attributes: attributes, content: content, id: id ?? UUID().uuidString.lowercased(), resumingAfter: nil)
    }

    /// Takes back an activity that was running before a restart (its id and the seq of its last
    /// event were saved): its first event is an update with `content`, numbered `lastSeq + 1`, so
    /// its sequence continues where it stopped.
    ///
    /// - Throws: as ``request(attributes:content:id:)``, and `.invalidActivityID` when `lastSeq` is below 1.
    public func resume<Attributes: ActivityAttributes>(
        attributes: Attributes, content: ActivityContent<Attributes.ContentState>, id: String, lastSeq: Int
    ) throws(ActivityError) -> Activity<Attributes> {
        guard lastSeq >= 1 else {
            throw ActivityError(
                .invalidActivityID, "cannot resume activity \"\(id)\" after seq \(lastSeq): seq starts at 1")
        }
        return try add(attributes: attributes, content: content, id: id, resumingAfter: lastSeq)
    }

    private func add<Attributes: ActivityAttributes>(
        attributes: Attributes, content: ActivityContent<Attributes.ContentState>, id: String, resumingAfter: Int?
    ) throws(ActivityError) -> Activity<Attributes> {
        try ActivityModel<Attributes>.validate(id: id)
        tickAll()
        let activity = try live.withLock { live throws(ActivityError) in
            live.removeAll { $0.isDismissed }
            guard !live.contains(where: { $0.id == id }) else {
                throw ActivityError(.duplicateActivityID, "cannot start activity \"\(id)\": one with that id is live")
            }
            guard live.count < maximumActivities else {
                throw ActivityError(
                    .tooManyActivities,
                    "cannot start activity \"\(id)\": \(live.count) activities are live, "
                        + "the maximum is \(maximumActivities)")
            }
            let activity = Activity(
                id: id, attributes: attributes, content: content, clock: clock, resumingAfter: resumingAfter
            ) { [weak self] in
                self?.wake()
            }
            live.append(activity)
            return activity
        }
        wake()
        return activity
    }

    /// The live (not dismissed) activities with attributes of type `type`, oldest first.
    public func activities<Attributes: ActivityAttributes>(of type: Attributes.Type) -> [Activity<Attributes>] {
        live.withLock { $0.compactMap { $0 as? Activity<Attributes> } }.filter { !$0.isDismissed }
    }

    /// Applies the current time to every activity at once: those past their stale date turn
    /// stale, ended ones past their dismissal date are dismissed.
    public func refresh() {
        tickAll()
    }

    /// Keeps applying time to the activities: sleeps on the clock until the earliest stale or
    /// dismissal date of any activity, and wakes early whenever an activity changes or starts.
    ///
    /// Run it for as long as the center is in use; several calls may run at once.
    /// Returns when the calling task is cancelled.
    ///
    /// - Throws: what the clock's `sleep(until:)` throws, other than `CancellationError`.
    public func run() async throws {
        let (wakeups, wakeup) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let token = wakers.withLock { $0.add(wakeup) }
        defer {
            wakers.withLock { $0.remove(token) }
            wakeup.finish()
        }
        var iterator = wakeups.makeAsyncIterator()
        while !Task.isCancelled {
            let deadline = tickAll()
            try await withThrowingTaskGroup(of: Void.self) { group in
                if let deadline {
                    group.addTask { [clock] in
                        do {
                            try await clock.sleep(until: deadline)
                            wakeup.yield()
                        } catch is CancellationError {
                            return
                        } catch {
                            wakeup.yield()
                            throw error
                        }
                    }
                }
                _ = await iterator.next()
                group.cancelAll()
                try await group.waitForAll()
            }
        }
    }

    /// Ticks every activity, forgets the dismissed ones and returns the earliest next deadline.
    @discardableResult
    private func tickAll() -> Date? {
        let now = clock.now
        let activities = live.withLock { $0 }
        let deadline = activities.compactMap { $0.tick(now: now) }.min()
        live.withLock { $0.removeAll { $0.isDismissed } }
        return deadline
    }

    private func wake() {
        wakers.withLock { wakers in
            for wakeup in wakers.all { wakeup.yield() }
        }
    }
}

/// What the center needs of an activity, whatever its attributes type.
protocol ActivityLifecycle: AnyObject, Sendable {
    var id: String { get }
    var isDismissed: Bool { get }
    func tick(now: Date) -> Date?
}

extension Activity: ActivityLifecycle {
    var isDismissed: Bool { activityState == .dismissed }
}
