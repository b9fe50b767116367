import Foundation
import LiveActivity
import TestSupport
import Testing

/// The center's registry, limits and run loop; the run loop is observed through the manual
/// clock's sleepers and the activities' streams, never through time.
@Suite("ActivityCenter", .timeLimit(.minutes(1)))
struct ActivityCenterTests {
    typealias State = LocationActivityAttributes.ContentState

    @Test("the maximum counts ended activities until they are dismissed")
    func tooManyActivities() throws {
        let (center, clock) = Fixtures.center(maximumActivities: 2)
        let first = try Fixtures.startActivity(in: center, id: "trip-1")
        _ = try Fixtures.startActivity(in: center, id: "trip-2")

        let refused = #expect(throws: ActivityError.self) { try Fixtures.startActivity(in: center, id: "trip-3") }
        #expect(refused?.code == .tooManyActivities)
        #expect(refused?.message == "cannot start activity \"trip-3\": 2 activities are live, the maximum is 2")

        try first.end(nil)
        #expect(throws: ActivityError.self) { try Fixtures.startActivity(in: center, id: "trip-3") }
        clock.advance(by: 4 * 3600)
        let third = try Fixtures.startActivity(in: center, id: "trip-3")

        #expect(first.activityState == .dismissed, "request applies time first")
        #expect(center.activities(of: LocationActivityAttributes.self).map(\.id) == ["trip-2", "trip-3"])
        #expect(third.activityState == .active)
    }

    @Test("ids must be valid and unique among live activities")
    func activityIDs() throws {
        let (center, _) = Fixtures.center()
        let first = try Fixtures.startActivity(in: center, id: "trip-1")

        let duplicate = #expect(throws: ActivityError.self) { try Fixtures.startActivity(in: center, id: "trip-1") }
        let invalid = #expect(throws: ActivityError.self) { try Fixtures.startActivity(in: center, id: "Trip/1") }
        try first.end(nil, dismissalPolicy: .immediate)

        #expect(duplicate?.code == .duplicateActivityID)
        #expect(duplicate?.message == "cannot start activity \"trip-1\": one with that id is live")
        #expect(invalid?.code == .invalidActivityID)
        #expect(invalid?.message == "invalid activity id \"Trip/1\": \(Fixtures.idRule)")
        #expect(
            try Fixtures.startActivity(in: center, id: "trip-1").activityState == .active, "reusable once dismissed")
    }

    /// An attributes type whose name cannot go on the wire.
    struct BadlyNamedAttributes: ActivityAttributes {
        static let typeName = "Com.Example/Pin"
        typealias ContentState = PinAttributes.ContentState
    }

    @Test("a content state over ActivityKit's 4 KiB is refused at the request, update and end, changing nothing")
    func contentTooLarge() throws {
        let (center, _) = Fixtures.center()
        let large = ActivityContent(
            state: PinAttributes.ContentState(count: 1, note: String(repeating: "x", count: 4096)), staleDate: nil)
        let message =
            "the content state is 4117 bytes as JSON, over the 4096 bytes (4 KiB) ActivityKit also allows: shorten its texts"
        let requested = #expect(throws: ActivityError.self) {
            try center.request(attributes: PinAttributes(label: "bay 3"), content: large)
        }
        #expect(requested?.code == .contentTooLarge)
        #expect(requested?.message == message)
        #expect(center.activities(of: PinAttributes.self).isEmpty)

        // Exactly 4096 bytes: allowed.
        let fits = ActivityContent(
            state: PinAttributes.ContentState(count: 1, note: String(repeating: "x", count: 4075)), staleDate: nil)
        let pin = try center.request(attributes: PinAttributes(label: "bay 3"), content: fits)
        let updated = #expect(throws: ActivityError.self) { try pin.update(large) }
        let ended = #expect(throws: ActivityError.self) { try pin.end(large, dismissalPolicy: .immediate) }
        #expect([updated?.message, ended?.message] == [message, message])
        #expect(pin.content == fits)
        #expect(pin.activityState == .active)
        #expect(pin.lastEvent.seq == 1)
    }

    @Test("an attributes type whose name is not an id is refused at the request, naming it and the rule")
    func invalidTypeName() throws {
        let (center, _) = Fixtures.center()
        let refused = #expect(throws: ActivityError.self) {
            try center.request(
                attributes: BadlyNamedAttributes(),
                content: ActivityContent(state: .init(count: 0, note: ""), staleDate: nil))
        }
        #expect(refused?.code == .invalidAttributesType)
        #expect(
            refused?.message
                == "cannot start an activity of BadlyNamedAttributes: invalid attributes type \"Com.Example/Pin\": "
                + "\(Fixtures.idRule) (name your own types with a reversed domain name, such as \"com.example.pin\")")
        #expect(center.activities(of: BadlyNamedAttributes.self).isEmpty)
        let pin = try center.request(
            attributes: PinAttributes(label: "bay 3"),
            content: ActivityContent(state: .init(count: 0, note: ""), staleDate: nil))
        #expect(pin.activityState == .active, "a well-named type of another program starts")
    }

    @Test("a resumed activity keeps its id and continues its sequence with an update")
    func resume() async throws {
        let (center, _) = Fixtures.center()
        let content = ActivityContent(state: State(distance: 1200, elapsed: 300), staleDate: nil)
        let resumed = try center.resume(
            attributes: try Fixtures.attributes(), content: content, id: "trip-7", lastSeq: 41)
        let events = await resumed.events.first(1)
        #expect(events.map(\.seq) == [42])
        #expect(events.first?.kind == .update(content, alert: nil))
        #expect(resumed.id == "trip-7")
        #expect(resumed.activityState == .active)
        try resumed.update(content)
        try resumed.end(nil, dismissalPolicy: .immediate)
        #expect(
            await resumed.events.collect().map(\.seq) == [42, 43, 44, 45],
            "the first update 42, update 43, end 44, dismissed 45")

        let refused = #expect(throws: ActivityError.self) {
            try center.resume(attributes: try Fixtures.attributes(), content: content, id: "trip-8", lastSeq: 0)
        }
        #expect(refused?.code == .invalidActivityID)
        let duplicate = try center.resume(
            attributes: try Fixtures.attributes(), content: content, id: "trip-9", lastSeq: 1)
        #expect(throws: ActivityError.self) {
            try center.resume(attributes: try Fixtures.attributes(), content: content, id: duplicate.id, lastSeq: 3)
        }
    }

    @Test("activities(of:) lists the live activities of one attributes type")
    func activitiesOfType() throws {
        let (center, _) = Fixtures.center()
        let location = try Fixtures.startActivity(in: center)
        let timer = try center.request(
            attributes: TimerAttributes(label: "break"),
            content: ActivityContent(state: TimerAttributes.ContentState(seconds: 900), staleDate: nil))

        #expect(center.activities(of: LocationActivityAttributes.self).map(\.id) == [location.id])
        #expect(center.activities(of: TimerAttributes.self).map(\.id) == [timer.id])
    }

    @Test("the timer sleeps until the earliest deadline, earlier when an update brings one nearer")
    func timerFollowsDeadlines() async throws {
        let (center, clock) = Fixtures.center()
        let staleDate = Fixtures.t0.addingTimeInterval(60)
        let activity = try Fixtures.startActivity(in: center, staleDate: staleDate)
        let states = activity.activityStateUpdates

        try await clock.waitForSleeper(until: staleDate)
        let earlier = Fixtures.t0.addingTimeInterval(30)
        try activity.update(ActivityContent(state: State(), staleDate: earlier))
        try await clock.waitForSleeper(until: earlier)
        #expect(clock.sleeperDeadlines == [earlier], "the later sleep was replaced")
        clock.advance(by: 30)
        #expect(await states.first(1) == [.stale])

        try activity.end(nil)
        let dismissal = clock.now.addingTimeInterval(4 * 3600)
        try await clock.waitForSleeper(until: dismissal)
        clock.set(to: dismissal)
        #expect(await states.collect() == [.ended, .dismissed])
        #expect(center.activities(of: LocationActivityAttributes.self).isEmpty)
    }

    @Test("a stale date that moves on at every update does not restart the timer: it wakes once and sleeps on")
    func timerSleepsOnForLaterDeadlines() async throws {
        let (center, clock) = Fixtures.center()
        let first = Fixtures.t0.addingTimeInterval(60)
        let activity = try Fixtures.startActivity(in: center, staleDate: first)
        try await clock.waitForSleeper(until: first)

        for _ in 1...10 {
            clock.advance(by: 1)
            try activity.update(ActivityContent(state: State(), staleDate: clock.now.addingTimeInterval(60)))
        }
        #expect(clock.sleeperDeadlines == [first])
        clock.set(to: first)
        let moved = Fixtures.t0.addingTimeInterval(70)
        try await clock.waitForSleeper(until: moved)
        #expect(activity.activityState == .active)
        #expect(clock.sleeperDeadlines == [moved])
        try activity.end(nil, dismissalPolicy: .immediate)
        #expect(clock.sleeperDeadlines.isEmpty, "no deadline left, no sleeper")
    }

    @Test("the timer wakes for the earliest deadline of several activities")
    func timerSeveralActivities() async throws {
        let (center, clock) = Fixtures.center()
        let later = try Fixtures.startActivity(in: center, staleDate: Fixtures.t0.addingTimeInterval(120), id: "later")
        let sooner = try Fixtures.startActivity(in: center, staleDate: Fixtures.t0.addingTimeInterval(60), id: "sooner")
        let laterStates = later.activityStateUpdates
        let soonerStates = sooner.activityStateUpdates

        try await clock.waitForSleeper(until: Fixtures.t0.addingTimeInterval(60))
        clock.advance(by: 60)
        #expect(await soonerStates.first(1) == [.stale])
        try await clock.waitForSleeper(until: Fixtures.t0.addingTimeInterval(120))
        #expect(later.activityState == .active)
        clock.advance(by: 60)
        #expect(await laterStates.first(1) == [.stale])
    }

    @Test("no timer runs without a deadline, nor once the center is gone")
    func timerStops() async throws {
        let clock = ManualWallClock(now: Fixtures.t0)
        var center: ActivityCenter? = ActivityCenter(clock: clock)
        let timeless = try Fixtures.startActivity(in: center!, id: "timeless")
        #expect(clock.sleeperDeadlines.isEmpty)
        let staleDate = Fixtures.t0.addingTimeInterval(60)
        let timed = try Fixtures.startActivity(in: center!, staleDate: staleDate, id: "timed")
        try await clock.waitForSleeper(until: staleDate)

        center = nil
        #expect(clock.sleeperDeadlines.isEmpty, "the center's timer ends with it")
        #expect(timeless.activityState == .active)
        #expect(timed.activityState == .active)
    }
}
