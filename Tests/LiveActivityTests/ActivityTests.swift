import Foundation
import LiveActivity
import Testing
import TestSupport

/// One activity's lifecycle, observed through its streams; time moves only through `refresh()`.
@Suite("Activity", .timeLimit(.minutes(1)))
struct ActivityTests {
    typealias State = LocationActivityAttributes.ContentState

    @Test("a new activity is active, with a lowercased UUID id and a start event numbered 1")
    func start() async throws {
        let (center, _) = Fixtures.center()
        let activity = try Activity.request(
            attributes: try Fixtures.attributes(), content: ActivityContent(state: State(), staleDate: nil),
            in: center)

        #expect(activity.activityState == .active)
        #expect(activity.id == activity.id.lowercased())
        #expect(UUID(uuidString: activity.id) != nil)
        #expect(activity.content.state == State())
        let events = await activity.events.first(1)
        #expect(events.map(\.seq) == [1])
        #expect(events.first?.kind == .start(ActivityContent(state: State(), staleDate: nil)))
        #expect(events.first?.timestamp == Fixtures.t0)
        #expect(events.first?.activityID == activity.id)
    }

    @Test("every change is one event, numbered from 1 in order")
    func seqNumbering() async throws {
        let (center, clock) = Fixtures.center()
        let activity = try Fixtures.startActivity(in: center)
        let events = activity.events
        let located = ActivityContent(state: Fixtures.fullState, staleDate: nil, relevanceScore: 50)
        let alert = AlertConfiguration(title: "Arriving", body: "Van 7 is 5 minutes away", sound: "chime")
        let final = ActivityContent(state: State(), staleDate: nil)

        clock.advance(by: 1)
        try activity.update(located)
        clock.advance(by: 1)
        try activity.update(located, alertConfiguration: alert)
        clock.advance(by: 1)
        try activity.end(final, dismissalPolicy: .immediate)

        let received = await events.collect()
        #expect(received.map(\.seq) == [1, 2, 3, 4, 5])
        #expect(
            received.map(\.kind) == [
                .start(ActivityContent(state: State(), staleDate: nil)), .update(located, alert: nil),
                .update(located, alert: alert), .end(final, dismissalDate: Fixtures.t0.addingTimeInterval(3)),
                .dismissed,
            ])
        #expect(received.map(\.timestamp) == [0, 1, 2, 3, 3].map { Fixtures.t0.addingTimeInterval($0) })
    }

    @Test("a late consumer of events gets the history in brief (start, latest update), then the later ones")
    func lateEventConsumer() async throws {
        let (center, _) = Fixtures.center()
        let activity = try Fixtures.startActivity(in: center)
        try activity.update(ActivityContent(state: Fixtures.fullState, staleDate: nil))
        let events = activity.events
        try activity.end(nil, dismissalPolicy: .immediate)

        #expect(await events.collect().map(\.seq) == [1, 2, 3, 4])
    }

    @Test("stale once the clock passes the stale date, active again after an update")
    func staleness() async throws {
        let (center, clock) = Fixtures.center()
        let activity = try Fixtures.startActivity(in: center, staleDate: Fixtures.t0.addingTimeInterval(60))
        let states = activity.activityStateUpdates

        clock.advance(by: 59)
        center.refresh()
        #expect(activity.activityState == .active)
        clock.advance(by: 1)
        center.refresh()
        try activity.update(ActivityContent(state: State(), staleDate: clock.now.addingTimeInterval(60)))
        try activity.end(nil, dismissalPolicy: .immediate)

        #expect(await states.collect() == [.stale, .active, .ended, .dismissed])
    }

    @Test("the default policy keeps an ended activity for four hours")
    func defaultDismissal() async throws {
        let (center, clock) = Fixtures.center()
        let activity = try Fixtures.startActivity(in: center)
        let states = activity.activityStateUpdates
        let contents = activity.contentUpdates

        try activity.end(nil)
        clock.advance(by: 4 * 3600 - 1)
        center.refresh()
        #expect(activity.activityState == .ended)
        #expect(center.activities(of: LocationActivityAttributes.self).count == 1)
        clock.advance(by: 1)
        center.refresh()

        #expect(await states.collect() == [.ended, .dismissed])
        #expect(await contents.collect() == [], "end(nil) keeps the content")
        #expect(center.activities(of: LocationActivityAttributes.self).isEmpty)
    }

    @Test("an immediate end dismisses at once, with the final content")
    func immediateDismissal() async throws {
        let (center, _) = Fixtures.center()
        let activity = try Fixtures.startActivity(in: center)
        let states = activity.activityStateUpdates
        let contents = activity.contentUpdates
        let final = ActivityContent(state: State(distance: 12_000, elapsed: 3600), staleDate: nil)

        try activity.end(final, dismissalPolicy: .immediate)

        #expect(await states.collect() == [.ended, .dismissed])
        #expect(await contents.collect() == [final])
        #expect(activity.content == final)
        #expect(center.activities(of: LocationActivityAttributes.self).isEmpty)
    }

    @Test("an end with .after(date) dismisses at that date")
    func dismissalAfterDate() async throws {
        let (center, clock) = Fixtures.center()
        let activity = try Fixtures.startActivity(in: center)
        let dismissal = Fixtures.t0.addingTimeInterval(600)

        try activity.end(nil, dismissalPolicy: .after(dismissal))
        let ended = await activity.events.first(2).dropFirst()
        clock.set(to: dismissal.addingTimeInterval(-0.001))
        center.refresh()
        #expect(activity.activityState == .ended)
        clock.set(to: dismissal)
        center.refresh()

        #expect(ended.first?.kind == .end(activity.content, dismissalDate: dismissal))
        #expect(activity.activityState == .dismissed)
    }

    @Test("updating or ending an ended activity is an error that names it and changes nothing")
    func changeAfterEnd() async throws {
        let (center, _) = Fixtures.center()
        let activity = try Fixtures.startActivity(in: center)
        try activity.end(nil)

        let updated = #expect(throws: ActivityError.self) {
            try activity.update(ActivityContent(state: Fixtures.fullState, staleDate: nil))
        }
        let ended = #expect(throws: ActivityError.self) { try activity.end(nil, dismissalPolicy: .immediate) }

        #expect(updated?.code == .activityEnded)
        #expect(updated?.message == "activity \"\(Fixtures.activityID)\": cannot update an activity that has ended")
        #expect(ended?.message == "activity \"\(Fixtures.activityID)\": cannot end an activity that has ended")
        #expect(activity.activityState == .ended)
        #expect(activity.content.state == State())
        #expect(activity.lastEvent.seq == 2, "no event for a refused change")
    }

    @Test("several consumers each get every change")
    func severalConsumers() async throws {
        let (center, _) = Fixtures.center()
        let activity = try Fixtures.startActivity(in: center)
        let first = activity.contentUpdates
        let second = activity.contentUpdates
        let contents = [1.0, 2.0, 3.0].map { ActivityContent(state: State(distance: $0), staleDate: nil) }

        for content in contents { try activity.update(content) }
        try activity.end(nil, dismissalPolicy: .immediate)

        #expect(await first.collect() == contents)
        #expect(await second.collect() == contents)
    }

    @Test("streams of a dismissed activity finish at once; its events stream replays the history")
    func streamsAfterDismissal() async throws {
        let (center, _) = Fixtures.center()
        let activity = try Fixtures.startActivity(in: center)
        try activity.end(nil, dismissalPolicy: .immediate)

        #expect(await activity.activityStateUpdates.collect() == [])
        #expect(await activity.contentUpdates.collect() == [])
        #expect(
            await activity.events.collect().map(\.kind) == [
                .start(ActivityContent(state: State(), staleDate: nil)),
                .end(ActivityContent(state: State(), staleDate: nil), dismissalDate: Fixtures.t0), .dismissed,
            ])
    }

    @Test("a consumer that stops early does not hold up the others")
    func consumerStopsEarly() async throws {
        let (center, _) = Fixtures.center()
        let activity = try Fixtures.startActivity(in: center)
        let quitting = activity.contentUpdates
        let quitter = Task { await quitting.first(1) }
        let stayer = activity.contentUpdates
        let contents = [1.0, 2.0].map { ActivityContent(state: State(distance: $0), staleDate: nil) }

        try activity.update(contents[0])
        #expect(await quitter.value == [contents[0]])
        try activity.update(contents[1])
        try activity.end(nil, dismissalPolicy: .immediate)

        #expect(await stayer.collect() == contents)
    }
}
