import Foundation
import LiveActivity
import TestSupport
import Testing

/// Issue 18's first finding: an app that writes what ActivityKit asks of it, and runs no task of
/// its own for the center, sees its activity go stale and dismissed on time. Time moves only on
/// the manual clock; the app's loop over the state updates ends by itself.
@Suite("Activities keep their own time", .timeLimit(.minutes(1)))
struct OwnTimeTests {
    /// A pin on a map, as in the program: an attributes type of the app's own.
    struct PinAttributes: ActivityAttributes {
        static let typeName = "com.example.pin"

        struct ContentState: Codable, Hashable, Sendable {
            var label: String
        }

        var title: String
    }

    @Test("stale at the stale date and dismissed at the dismissal date, with no center.run()")
    func staleAndDismissedOnTime() async throws {
        let clock = ManualWallClock(now: Fixtures.t0)
        let center = ActivityCenter(clock: clock, maximumActivities: 1)
        let activity = try Activity.request(
            attributes: PinAttributes(title: "Parcel"),
            content: ActivityContent(state: .init(label: "on its way"), staleDate: Fixtures.t0 + 60), in: center)
        let updates = activity.activityStateUpdates
        async let seen = updates.collect()
        var stale = activity.activityStateUpdates.makeAsyncIterator()

        clock.advance(by: 60)
        #expect(await stale.next() == .stale)
        #expect(activity.activityState == .stale)
        try activity.end(nil, dismissalPolicy: .after(Fixtures.t0 + 120))
        #expect(await stale.next() == .ended)
        clock.set(to: Fixtures.t0 + 120)

        #expect(await seen == [.stale, .ended, .dismissed], "the loop over the state updates ends")
        #expect(activity.activityState == .dismissed)
        #expect(center.activities(of: PinAttributes.self).isEmpty)
        #expect(clock.sleeperDeadlines.isEmpty)
    }
}
