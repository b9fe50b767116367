import Foundation
import LiveActivity
import Location
import Testing
import Tracking

@Suite struct TrackerTests {
    static let attributes = LocationActivityAttributes(deviceID: try! DeviceID("van-7"), name: "Van 7")

    /// The real track replayed at its own times, with ticks at every deadline, as the agent would.
    @Test func visnjanTrackEndToEnd() throws {
        let fixes = VisnjanTrack.fixes
        #expect(fixes.count == 104)
        let start = fixes[0].time
        // The track's turning point, the fix farthest from its start.
        let turn = try #require(
            fixes.max {
                Coordinate($0).distance(to: Coordinate(fixes[0])) < Coordinate($1).distance(to: Coordinate(fixes[0]))
            })
        let destination = LocationActivityAttributes.Destination(
            name: "Turn", latitude: turn.latitude, longitude: turn.longitude)
        var attributes = Self.attributes
        attributes.destination = destination
        var tracker = Tracker(attributes: attributes, policy: TrackingPolicy(), now: start)
        var published: [(Date, Tracker.Output)] = [(start, tracker.start(now: start))]
        var trackPoints = 0
        for fix in fixes {
            while let deadline = tracker.nextDeadline, deadline < fix.time {
                let output = tracker.tick(now: deadline)
                if output.content != nil { published.append((deadline, output)) }
            }
            let output = tracker.receive(LocationUpdate(fix: fix), now: fix.time)
            if output.trackFix != nil { trackPoints += 1 }
            if output.content != nil { published.append((fix.time, output)) }
        }

        #expect(trackPoints == fixes.count)
        let raw = VisnjanTrack.rawDistance
        let distance = tracker.trip.distance
        #expect(raw > 2700 && raw < 2800)
        #expect(distance <= raw)
        #expect(abs(distance - raw) / raw < 0.02, "distance \(distance) m, plain sum \(raw) m")

        let times = published.map(\.0)
        for (earlier, later) in zip(times, times.dropFirst()) {
            #expect(later.timeIntervalSince(earlier) >= 5, "at most one publish per minimum interval")
            #expect(later.timeIntervalSince(earlier) <= 60, "at least one publish per heartbeat")
        }
        #expect(published.count > 10 && published.count < fixes.count / 2)

        let last = try #require(published.last?.1.content)
        #expect(last.state.fix == .fix3D)
        #expect(last.state.distance > 0)
        #expect(last.staleDate == (try #require(last.state.fixTime)) + 180)
        #expect(tracker.staleDate == fixes.last!.time + 180)
        let progress = published.compactMap { $0.1.content?.state.progress }
        #expect(progress.max() ?? 0 > 0.9, "the turning point is reached")
        #expect(progress.last ?? 1 < 0.1, "the track ends back at its start")
        #expect(published.contains { $0.1.content?.state.eta != nil }, "an ETA while driving towards the turn")
        for (_, output) in published {
            let data = try JSONEncoder().encode(output.content!.state)
            let decoded = try JSONDecoder().decode(LocationActivityAttributes.ContentState.self, from: data)
            #expect(decoded == output.content!.state)
            #expect(output.content!.state.progress.map { (0...1).contains($0) } ?? true)
        }
    }

    @Test func noFixDropsTheLocationAfterTheGrace() throws {
        var tracker = Tracker(attributes: Self.attributes, policy: TrackingPolicy(noFixGrace: 30), now: Place.t0)
        let first = tracker.start(now: Place.t0)
        #expect(first.decision == .publish(.lifecycle))
        #expect(first.content?.state.latitude == nil)
        #expect(first.content?.staleDate == Place.t0 + 180)

        let located = tracker.receive(
            LocationUpdate(fix: fix(Place.visnjan, at: 10, accuracy: 4, satellites: 9)), now: Place.t0 + 10)
        #expect(located.decision == .publish(.stateChange))
        let state = try #require(located.content?.state)
        #expect(state.latitude == Place.visnjan.latitude)
        #expect(state.fix == .fix3D)
        #expect(state.satellites == 9)
        #expect(state.horizontalAccuracy == 4)
        #expect(state.fixTime == Place.t0 + 10)
        #expect(located.content?.staleDate == Place.t0 + 190)

        let holding = tracker.receive(LocationUpdate(noFix: .noFix), now: Place.t0 + 20)
        #expect(holding.content == nil)
        #expect(tracker.nextDeadline == Place.t0 + 50)
        let lost = tracker.tick(now: Place.t0 + 50)
        #expect(lost.decision == .publish(.stateChange))
        let lostState = try #require(lost.content?.state)
        #expect(lostState.latitude == nil && lostState.longitude == nil && lostState.fixTime == nil)
        #expect(lostState.fix == .noFix)
        #expect(lost.content?.staleDate == Place.t0 + 190, "stale from the last fix, not from now")

        let back = tracker.receive(LocationUpdate(fix: fix(Place.visnjan, at: 51)), now: Place.t0 + 51)
        #expect(back.decision == .skip(.tooSoon))
        let due = try #require(tracker.nextDeadline)
        #expect(due == Place.t0 + 55)
        let pending = tracker.tick(now: due)
        #expect(pending.decision == .publish(.stateChange))
        #expect(pending.content?.state.latitude == Place.visnjan.latitude)
    }

    @Test func pauseStopsTrackPointsAndTheClock() throws {
        var tracker = Tracker(attributes: Self.attributes, policy: TrackingPolicy(), now: Place.t0)
        _ = tracker.start(now: Place.t0)
        #expect(tracker.receive(LocationUpdate(fix: fix(Place.visnjan, at: 10)), now: Place.t0 + 10).trackFix != nil)
        let paused = tracker.pause(now: Place.t0 + 20)
        #expect(paused.decision == .publish(.stateChange))
        #expect(paused.content?.state.paused == true)
        #expect(paused.content?.state.elapsed == 20)
        let moved = tracker.receive(
            LocationUpdate(fix: fix(Place.visnjan.offset(north: 500, east: 0), at: 30)), now: Place.t0 + 30)
        #expect(moved.trackFix == nil)
        #expect(moved.decision == .publish(.moved), "heartbeats and positions go on while paused")
        #expect(moved.content?.state.distance == 0)
        #expect(moved.content?.state.elapsed == 20)
        #expect(tracker.pause(now: Place.t0 + 40).decision == .skip(.notMovedEnough))
        let resumed = tracker.resume(now: Place.t0 + 42)
        #expect(resumed.decision == .publish(.stateChange))
        #expect(resumed.content?.state.paused == false)
        let snapshot = tracker.snapshot(now: Place.t0 + 50)
        #expect(snapshot.elapsed == 28)
        #expect(!snapshot.paused)
    }

    @Test func alertsPublishAtOnce() throws {
        let depot = Geofence(name: "Depot", center: Place.visnjan, radius: 100)
        let policy = TrackingPolicy(geofences: [depot], geofenceConfirmations: 1)
        var tracker = Tracker(attributes: Self.attributes, policy: policy, now: Place.t0)
        _ = tracker.start(now: Place.t0)
        _ = tracker.receive(
            LocationUpdate(fix: fix(Place.visnjan.offset(north: 300, east: 0), at: 1)), now: Place.t0 + 1)
        let entered = tracker.receive(
            LocationUpdate(fix: fix(Place.visnjan.offset(north: 50, east: 0), at: 2)), now: Place.t0 + 2)
        #expect(entered.decision == .publish(.alert))
        #expect(entered.alert?.title == "Entered Depot")
        #expect(entered.content != nil)
    }

    @Test func stopEndsWithoutALocation() {
        var tracker = Tracker(attributes: Self.attributes, policy: TrackingPolicy(), now: Place.t0)
        _ = tracker.start(now: Place.t0)
        _ = tracker.receive(LocationUpdate(fix: fix(Place.visnjan, at: 10)), now: Place.t0 + 10)
        _ = tracker.receive(
            LocationUpdate(fix: fix(Place.visnjan.offset(north: 300, east: 0), at: 40)), now: Place.t0 + 40)
        let final = tracker.stop(now: Place.t0 + 41)
        #expect(final.state.latitude == nil)
        #expect(final.state.fix == .noFix)
        #expect(abs(final.state.distance - 300) < 0.01)
        #expect(final.state.elapsed == 41)
    }

    @Test func resumesATripAfterARestart() {
        var tracker = Tracker(attributes: Self.attributes, policy: TrackingPolicy(), now: Place.t0)
        _ = tracker.start(now: Place.t0)
        _ = tracker.receive(LocationUpdate(fix: fix(Place.visnjan, at: 10)), now: Place.t0 + 10)
        _ = tracker.receive(
            LocationUpdate(fix: fix(Place.visnjan.offset(north: 300, east: 0), at: 40)), now: Place.t0 + 40)
        let snapshot = tracker.snapshot(now: Place.t0 + 40)
        var restarted = Tracker(
            attributes: Self.attributes, policy: TrackingPolicy(), now: Place.t0 + 100, resuming: snapshot)
        let first = restarted.start(now: Place.t0 + 100)
        #expect(first.decision == .publish(.lifecycle))
        #expect(first.content?.state.latitude == nil, "no old position after a restart")
        #expect(first.content?.state.distance == snapshot.distance)
        #expect(first.content?.state.elapsed == 40)
    }
}
