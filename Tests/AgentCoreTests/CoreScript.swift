import AgentCore
import AgentStore
import Foundation
import LiveActivity
import MyelineWire
import Location
import Logging
import Tracking

/// A test's view of the core: fixed ids, a clock that is a number of seconds, and what came out.
struct CoreScript {
    /// The test's epoch: 2026-01-01T00:00:00Z.
    static let epoch = Date(timeIntervalSince1970: 1_767_225_600)
    static let device = try! DeviceID("van-7")
    static let topics = TopicTree(prefix: .default)

    var core: AgentCore
    /// Every action so far, in order.
    var actions: [AgentCore.Action] = []
    /// The current time, seconds after ``epoch`` on the monotonic clock (`uptime`).
    var seconds: Double
    /// How far the wall clock has been stepped from the monotonic one, seconds.
    var wallStep: Double = 0

    /// A core with `settings` (the defaults of ``settings(_:)``), at `seconds` after the epoch.
    init(_ settings: AgentCoreSettings = Self.settings(), at seconds: Double = 0) {
        self.seconds = seconds
        let ids = IDs()
        core = AgentCore(settings: settings, now: Self.epoch + seconds, uptime: seconds) { ids.next() }
    }

    /// Settings for van-7 with a policy that publishes every change (no minimum distance or
    /// interval), a 60 s heartbeat, a live receiver and no autostart unless changed.
    static func settings(
        autostart: Bool = true, source: AgentCoreSettings.SourceKind = .receiver,
        dismissal: DismissalSetting = .immediate, endOnExit: Bool = false, maximumActivities: Int = 8,
        silence: AgentCoreSettings.SilenceTimeout = .default, messageExpiry: Bool = true,
        policy: TrackingPolicy = TrackingPolicy(minimumDistance: 0, minimumInterval: 0, heartbeat: 60)
    ) -> AgentCoreSettings {
        AgentCoreSettings(
            device: device, topics: topics, attributes: LocationActivityAttributes(deviceID: device, name: "Van 7"),
            policy: policy, maximumActivities: maximumActivities, dismissal: dismissal, endOnExit: endOnExit,
            autostart: autostart, source: source, silence: silence, instance: "mine", messageExpiry: messageExpiry,
            stateDirectory: "/state")
    }

    /// Fixed activity ids: `a1`, `a2`, ...
    final class IDs: @unchecked Sendable {
        private var count = 0
        private let lock = NSLock()
        func next() -> String {
            lock.lock()
            defer { lock.unlock() }
            count += 1
            return "a\(count)"
        }
    }

    /// Handles events at `seconds` (the clocks move there first); returns their actions.
    @discardableResult
    mutating func at(_ seconds: Double, _ events: AgentCore.Event...) -> [AgentCore.Action] {
        self.seconds = seconds
        let new = core.handle(events, now: Self.epoch + seconds + wallStep, uptime: seconds)
        actions += new
        return new
    }

    /// Starts the core with nothing saved.
    @discardableResult
    mutating func start(
        saved: [AgentCore.Record] = [], outbox: [OutboxRecord] = [], dropped: UInt64 = 0, powerLosses: UInt64 = 0
    ) -> [AgentCore.Action] {
        at(seconds, .started(saved: saved, outboxTail: outbox, dropped: dropped, powerLosses: powerLosses))
    }

    /// A 3D fix at `seconds`, `north` metres north of 52.52 N 13.40 E.
    static func fix(_ seconds: Double, north: Double = 0, speed: Double? = nil) -> LocationFix {
        LocationFix(
            time: epoch + seconds, latitude: 52.52 + north / 111_195, longitude: 13.40, speed: speed,
            horizontalAccuracy: 3, mode: .threeDimensional, satellitesUsed: 9)
    }

    static func location(_ seconds: Double, north: Double = 0) -> AgentCore.Event {
        .location(LocationUpdate(fix: fix(seconds, north: north)))
    }

    static func command(_ intent: Command.Intent, activity: String? = nil, new: Bool = false, id: String = "c1")
        -> AgentCore.Event
    {
        .command(try! Command(id: id, intent: intent, activity: activity, new: new, timestamp: epoch))
    }
}

extension Array where Element == AgentCore.Action {
    /// The messages published, in order.
    var published: [AgentCore.Outgoing] {
        compactMap { if case .publish(let message) = $0 { message } else { nil } }
    }

    /// The envelopes published: event and seq, `clear` for a clear.
    var envelopes: [String] {
        published.compactMap { message in
            switch message {
            case .envelope(let envelope, _):
                "\(envelope.header.activity) \(envelope.header.event.rawValue) \(envelope.header.seq)"
            case .clear(let activityID): "\(activityID) clear"
            case .status, .reply: nil
            }
        }
    }

    /// The envelopes published, decoded.
    var envelopeValues: [ActivityEnvelope<LocationActivityAttributes>] {
        published.compactMap { if case .envelope(let envelope, _) = $0 { envelope } else { nil } }
    }

    /// The statuses published.
    var statuses: [StatusMessage] {
        published.compactMap { if case .status(let status) = $0 { status } else { nil } }
    }

    /// The command results published.
    var replies: [CommandResult] {
        published.compactMap { if case .reply(let result) = $0 { result } else { nil } }
    }

    /// The records saved.
    var savedRecords: [AgentCore.Record] {
        flatMap { action -> [AgentCore.Record] in
            if case .persist(_, let records, _) = action { records } else { [] }
        }
    }

    /// The activities whose saved change is a milestone.
    var milestones: Set<String> {
        reduce(into: []) { milestones, action in
            if case .persist(_, _, let more) = action { milestones.formUnion(more) }
        }
    }

    /// The track points appended to the outbox.
    var points: [AgentCore.TrackPointEntry] {
        flatMap { action -> [AgentCore.TrackPointEntry] in
            if case .persist(let points, _, _) = action { points } else { [] }
        }
    }

    /// The events (docs/logging.md) of the log lines at `level`.
    func logs(_ level: Logger.Level) -> [String] {
        compactMap { if case .log(let entry) = $0, entry.level == level { entry.metadata["event"] } else { nil } }
    }

    /// Whether the actions contain `action`.
    func has(_ action: AgentCore.Action) -> Bool { contains(action) }

    /// The finish, if any.
    var finish: (failure: String?, farewell: StatusMessage)? {
        for case .finish(let failure, let farewell) in self { return (failure, farewell) }
        return nil
    }
}
