import Foundation
import Location
import Testing
import Tracking

@Suite struct TripAccumulatorTests {
    static let policy = TrackingPolicy()

    /// One step of a trip: a move from the last fix (metres north) with an accuracy, and whether it counts.
    struct Step: Sendable, CustomTestStringConvertible {
        var name: String
        var moves: [Double]
        var accuracies: [Double?]
        var counted: [Bool]
        var distance: Double
        var testDescription: String { name }
    }

    static let steps: [Step] = [
        Step(
            name: "unknown accuracy: the 5 m floor", moves: [0, 4, 4, 6], accuracies: [nil, nil, nil, nil],
            counted: [false, false, true, true], distance: 14),
        Step(
            name: "accuracy sum: 3 m + 3 m needs more than 6 m", moves: [0, 5.5, 1, 7],
            accuracies: [3, 3, 3, 3], counted: [false, false, true, true], distance: 13.5),
        Step(
            name: "a poor fix raises the threshold", moves: [0, 20, 30], accuracies: [2, 25, 2],
            counted: [false, false, true], distance: 50),
        Step(
            name: "driving 10 m per fix, accuracy 2 m", moves: [0, 10, 10, 10, 10], accuracies: [2, 2, 2, 2, 2],
            counted: [false, true, true, true, true], distance: 40),
    ]

    @Test(arguments: steps)
    func jitterThreshold(_ step: Step) {
        var trip = TripAccumulator(policy: Self.policy, destination: nil, startedAt: Place.t0)
        var north = 0.0
        for (index, move) in step.moves.enumerated() {
            north += move
            let counted = trip.add(
                fix(Place.visnjan.offset(north: north, east: 0), at: Double(index), accuracy: step.accuracies[index]))
            #expect(counted == step.counted[index], "fix \(index)")
        }
        #expect(abs(trip.distance - step.distance) < 0.01)
    }

    @Test(arguments: [nil, 3.0, 8.0, 20.0])
    func standingStillWithNoiseAddsNothing(accuracy: Double?) {
        var generator = SeededGenerator(state: 42)
        var trip = TripAccumulator(policy: Self.policy, destination: nil, startedAt: Place.t0)
        let radius = accuracy ?? Self.policy.jitterFloor / 2
        for second in 0..<3600 {
            let point = Place.visnjan.jittered(within: radius, using: &generator)
            trip.add(fix(point, at: Double(second), accuracy: accuracy))
        }
        #expect(trip.distance == 0)
    }

    @Test func elapsedExcludesPauses() {
        var trip = TripAccumulator(policy: Self.policy, destination: nil, startedAt: Place.t0)
        let at = { (seconds: Double) in Place.t0.addingTimeInterval(seconds) }
        #expect(trip.elapsed(now: at(100)) == 100)
        let paused = trip.pause(now: at(100))
        let pausedAgain = trip.pause(now: at(150))
        #expect(paused && !pausedAgain)
        #expect(trip.elapsed(now: at(400)) == 100)
        let resumed = trip.resume(now: at(400))
        let resumedAgain = trip.resume(now: at(450))
        #expect(resumed && !resumedAgain)
        #expect(trip.elapsed(now: at(460)) == 160)
        #expect(trip.elapsed(now: at(300)) == 100, "a clock set back adds nothing, and takes nothing away")
    }

    @Test func movingWhilePausedAddsNothing() {
        var trip = TripAccumulator(policy: Self.policy, destination: nil, startedAt: Place.t0)
        trip.add(fix(Place.visnjan, at: 0))
        trip.add(fix(Place.visnjan.offset(north: 100, east: 0), at: 10))
        trip.pause(now: Place.t0.addingTimeInterval(10))
        trip.add(fix(Place.visnjan.offset(north: 600, east: 0), at: 60))
        trip.resume(now: Place.t0.addingTimeInterval(60))
        trip.add(fix(Place.visnjan.offset(north: 650, east: 0), at: 65))
        #expect(abs(trip.distance - 150) < 0.01)
    }

    struct Approach: Sendable, CustomTestStringConvertible {
        var name: String
        var startNorth: Double
        var nowNorth: Double
        var speed: Double?
        var progress: Double
        var etaSeconds: Double?
        var testDescription: String { name }
    }

    static let approaches: [Approach] = [
        Approach(name: "start", startNorth: -1000, nowNorth: -1000, speed: 10, progress: 0, etaSeconds: 100),
        Approach(
            name: "halfway at 10 m/s", startNorth: -1000, nowNorth: -500, speed: 10, progress: 0.5, etaSeconds: 50),
        Approach(name: "nearly stopped", startNorth: -1000, nowNorth: -500, speed: 0.3, progress: 0.5, etaSeconds: nil),
        Approach(name: "arrived", startNorth: -1000, nowNorth: 0, speed: 5, progress: 1, etaSeconds: 0),
        Approach(name: "going away", startNorth: -1000, nowNorth: -3000, speed: 20, progress: 0, etaSeconds: 150),
        Approach(name: "overshot", startNorth: -1000, nowNorth: 250, speed: 10, progress: 0.75, etaSeconds: 25),
        Approach(
            name: "no speed reported", startNorth: -1000, nowNorth: -500, speed: nil, progress: 0.5, etaSeconds: nil),
    ]

    @Test(arguments: approaches)
    func progressAndETA(_ test: Approach) throws {
        let destination = Place.visnjan
        var trip = TripAccumulator(policy: Self.policy, destination: destination, startedAt: Place.t0)
        trip.add(fix(destination.offset(north: test.startNorth, east: 0), at: 0, speed: test.speed))
        trip.add(fix(destination.offset(north: test.nowNorth, east: 0), at: 1000, speed: test.speed))
        let progress = try #require(trip.progress)
        #expect(abs(progress - test.progress) < 0.001)
        if let seconds = test.etaSeconds {
            let eta = try #require(trip.eta)
            #expect(abs(eta.timeIntervalSince(Place.t0.addingTimeInterval(1000)) - seconds) < 0.1)
        } else {
            #expect(trip.eta == nil)
        }
    }

    @Test func derivedSpeedWithoutReportedSpeeds() throws {
        var trip = TripAccumulator(policy: Self.policy, destination: Place.visnjan, startedAt: Place.t0)
        for second in 0...120 {
            trip.add(fix(Place.visnjan.offset(north: -2000 + 8 * Double(second), east: 0), at: Double(second)))
        }
        let speed = try #require(trip.recentSpeed)
        #expect(abs(speed - 8) < 0.01)
        let eta = try #require(trip.eta)
        #expect(abs(eta.timeIntervalSince(Place.t0.addingTimeInterval(120)) - 1040 / 8) < 0.5)
    }

    /// A push update's new destination: progress counts from the latest fix (0 there), toward it;
    /// without a fix yet, from the next one.
    @Test func retargetingCountsProgressFromTheLatestFix() throws {
        let old = Place.visnjan.offset(north: 5000, east: 0)
        var trip = TripAccumulator(policy: Self.policy, destination: old, startedAt: Place.t0)
        trip.add(fix(Place.visnjan.offset(north: -1000, east: 0), at: 0, speed: 10))
        trip.add(fix(Place.visnjan.offset(north: -500, east: 0), at: 50, speed: 10))
        trip.retarget(Place.visnjan)
        #expect(trip.destination == Place.visnjan)
        #expect(try #require(trip.progress) == 0)
        trip.add(fix(Place.visnjan.offset(north: -250, east: 0), at: 75, speed: 10))
        #expect(abs(try #require(trip.progress) - 0.5) < 0.001)

        var fresh = TripAccumulator(policy: Self.policy, destination: old, startedAt: Place.t0)
        fresh.retarget(Place.visnjan)
        #expect(fresh.progress == nil, "no fix yet")
        fresh.add(fix(Place.visnjan.offset(north: -400, east: 0), at: 0, speed: 10))
        #expect(try #require(fresh.progress) == 0)
        fresh.retarget(nil)
        #expect(fresh.progress == nil)
    }

    @Test func noDestinationNoProgress() {
        var trip = TripAccumulator(policy: Self.policy, destination: nil, startedAt: Place.t0)
        trip.add(fix(Place.visnjan, at: 0, speed: 10))
        #expect(trip.progress == nil)
        #expect(trip.eta == nil)
        #expect(trip.remainingDistance == nil)
    }

    @Test func snapshotRoundTripsAndResumes() throws {
        var trip = TripAccumulator(policy: Self.policy, destination: Place.visnjan, startedAt: Place.t0)
        trip.add(fix(Place.visnjan.offset(north: -1000, east: 0), at: 0))
        trip.add(fix(Place.visnjan.offset(north: -600, east: 0), at: 40))
        let snapshot = trip.snapshot(now: Place.t0.addingTimeInterval(40))
        let decoded = try JSONDecoder().decode(
            TripAccumulator.Snapshot.self, from: Data(#require(snapshot.directJSON())))
        #expect(decoded == snapshot)

        let restart = Place.t0.addingTimeInterval(100)
        var resumed = TripAccumulator(resuming: decoded, policy: Self.policy, destination: Place.visnjan, now: restart)
        #expect(resumed.elapsed(now: restart) == 40, "the time the agent was down does not count")
        #expect(abs(resumed.distance - 400) < 0.01)
        resumed.add(fix(Place.visnjan.offset(north: -500, east: 0), at: 110))
        #expect(abs(resumed.distance - 500) < 0.01, "counted from the persisted last point")
        #expect(abs((resumed.progress ?? -1) - 0.5) < 0.001, "progress from the persisted start distance")
        #expect(resumed.elapsed(now: restart.addingTimeInterval(10)) == 50)
    }
}
