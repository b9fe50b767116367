import AgentCore
import Foundation
import LiveActivity
import MyelineWire
import Location
import Testing
import Tracking

@Suite("AgentCore: storage, broker, time")
struct AgentCoreRuntimeTests {
    @Test func storageFailingIsLoggedOnceAndSaidInTheStatusUntilItWorksAgain() {
        var script = Script()
        script.start()
        script.at(1, .connected(sessionPresent: false))
        let failed = script.at(2, .persisted(failure: "writing /state/outbox: No space left on device", dropped: 0))
        #expect(failed.logs(.error).count == 1)
        #expect(failed.statuses.map(\.storageError) == ["writing /state/outbox: No space left on device"])
        // Failing again: nothing new to say.
        let again = script.at(3, .persisted(failure: "writing /state/outbox: No space left on device", dropped: 0))
        #expect(again.logs(.error).isEmpty)
        #expect(again.statuses.isEmpty)
        let recovered = script.at(4, .persisted(failure: nil, dropped: 0))
        #expect(recovered.logs(.notice) == ["agent.storage.recovered"])
        #expect(recovered.statuses.count == 1)
        #expect(recovered.statuses.first?.storageError == nil)
        #expect(script.at(5, .persisted(failure: nil, dropped: 0)).statuses.isEmpty)
    }

    @Test func aLongStorageErrorIsCutToTheStatusLimit() {
        var script = Script()
        script.start()
        let long = String(repeating: "x", count: 5000)
        let status = script.at(1, .persisted(failure: long, dropped: 0)).statuses.first
        #expect(status?.storageError?.count == AgentCore.maximumStorageErrorLength)
    }

    @Test func droppedPointsAreInTheStatusAndWarnedAtEachConnection() {
        var script = Script()
        script.start(dropped: 40)
        let connected = script.at(1, .connected(sessionPresent: false))
        #expect(connected.statuses.map(\.dropped) == [40])
        #expect(connected.logs(.warning) == ["agent.points.dropped"])
        #expect(connected.has(.deliverPoints))
    }

    @Test func powerLossesAreInTheStatusOnlyWhenThereWereSome() {
        var script = Script()
        script.start(powerLosses: 2)
        #expect(script.at(1, .connected(sessionPresent: false)).statuses.map(\.powerLosses) == [2])
        var none = Script()
        none.start()
        #expect(none.at(1, .connected(sessionPresent: false)).statuses.map(\.powerLosses) == [nil])
    }

    @Test func theHeartbeatIsTheNextDeadlineAndRepublishesAtIt() {
        var script = Script(Script.settings(silence: .off))
        script.start()
        script.at(1, Script.location(1))
        let deadline = try! #require(script.core.nextDeadline)
        #expect(deadline == Script.epoch + 61)
        #expect(script.at(60, .tick).envelopes.isEmpty)
        #expect(script.at(61, .tick).envelopes == ["a1 update 3"])
    }

    /// Failure 2 of the agent-core issue: a receiver that says nothing (gpsd up, no report) was
    /// not noticed; a minute later the heartbeat republished the old fix as a current position.
    @Test func aSilentSourceDropsThePositionAfterItsCadencePlusTheMargin() {
        var script = Script()
        script.start()
        for second in 1...5 { script.at(Double(second), Script.location(Double(second), north: Double(second) * 10)) }
        // 1 Hz: silent 1 + 5 s after the last update.
        #expect(script.core.nextDeadline == Script.epoch + 11)
        #expect(script.at(10.9, .tick).envelopeValues.isEmpty)
        let silent = script.at(11, .tick)
        #expect(silent.logs(.warning).count == 1)
        let update = try! #require(silent.envelopeValues.last)
        #expect(update.content.state.latitude == nil)
        // No heartbeat afterwards shows the old position as current.
        var later: [AgentCore.Action] = []
        var now = 11.0
        while now < 300, let deadline = script.core.nextDeadline {
            now = deadline.timeIntervalSince(Script.epoch)
            later += script.at(now, .tick)
        }
        #expect(!later.envelopeValues.isEmpty, "heartbeats go on")
        #expect(later.envelopeValues.allSatisfy { $0.content.state.latitude == nil })
        // The source reports again: the position is back at once.
        let back = script.at(301, Script.location(301))
        #expect(back.logs(.notice) == ["agent.source.back"])
        #expect(back.envelopeValues.last?.content.state.latitude != nil)
    }

    /// The wall clock stepped an hour forward between two fixes (scenario 7) is no hour of silence:
    /// the silence is measured on the monotonic clock.
    @Test func aSteppedWallClockIsNoSilence() {
        var script = Script()
        script.start()
        for second in 1...5 { script.at(Double(second), Script.location(Double(second))) }
        script.wallStep = 3_600
        let stepped = script.at(5.5, .tick)
        #expect(stepped.logs(.warning).isEmpty)
        #expect(stepped.envelopeValues.allSatisfy { $0.content.state.latitude != nil })
        // The silence's deadline, on the stepped wall clock, is still 1 + 5 s after the last update.
        #expect(script.core.nextDeadline == Script.epoch + 3_600 + 11)
    }

    @Test func aFixedSilenceTimeoutIgnoresTheCadence() {
        var script = Script(Script.settings(silence: .fixed(30)))
        script.start()
        script.at(1, Script.location(1))
        #expect(script.core.nextDeadline == Script.epoch + 31)
    }

    @Test func aReceiversFixTimesJudgeTheWallClock() {
        var script = Script()
        script.start()
        // The fix says 1 h earlier than the clock: the clock is an hour ahead.
        let update = LocationUpdate(fix: Script.fix(-3_599))
        let actions = script.at(1, .location(update))
        #expect(actions.statuses.map(\.clockOffset) == [3_600])
        #expect(actions.logs(.warning).count == 1)
        let agreed = script.at(2, Script.location(2))
        #expect(agreed.statuses.map(\.clockOffset) == [nil])
    }

    @Test func aReplaysFixesAreStampedWithTheWallClockAndForwarded() {
        var script = Script(Script.settings(source: .replay))
        script.start()
        // Recorded in 2019; replayed now.
        let recorded = LocationFix(time: Date(timeIntervalSince1970: 1_560_000_000), latitude: 52.5, longitude: 13.4)
        let actions = script.at(7, .location(LocationUpdate(fix: recorded)))
        var stamped = recorded
        stamped.time = Script.epoch + 7
        #expect(actions.has(.forward(stamped)))
        #expect(actions.envelopeValues.last?.content.state.fixTime == Script.epoch + 7)
        #expect(actions.statuses.isEmpty, "no clock check on a replay")
    }
}

@Suite("AgentCore: replays")
struct AgentCoreReplayTests {
    /// A replay of fixes `every` recorded seconds apart, `step` metres apart going north, fed
    /// `fast` times faster than recorded; returns the last update's distance and elapsed time.
    static func replay(
        _ script: inout Script, from start: Double, count: Int, every: Double = 10, step: Double = 100,
        fast: Double = 20, recordedStart: Double = 0
    ) -> (distance: Double, elapsed: Double)? {
        var last: ActivityEnvelope<LocationActivityAttributes>?
        for index in 0..<count {
            let recordedTime = Date(timeIntervalSince1970: 1_560_000_000 + recordedStart + Double(index) * every)
            let fix = LocationFix(
                time: recordedTime, latitude: 52.52 + Double(index) * step / 111_195, longitude: 13.4,
                horizontalAccuracy: 3, mode: .threeDimensional)
            let actions = script.at(start + Double(index) * every / fast, .location(LocationUpdate(fix: fix)))
            if let envelope = actions.envelopeValues.last { last = envelope }
        }
        return last.map { ($0.content.state.distance, $0.content.state.elapsed) }
    }

    /// Failure 7: on a replay `elapsed` was wall time; at 20 times the pace a 7-minute trip said 22 s.
    @Test func elapsedCountsTheRecordedTimeWhateverTheSpeed() throws {
        var script = Script(Script.settings(source: .replay))
        script.start()
        // 43 fixes 10 s apart: 420 recorded seconds, replayed in 21 s.
        let last = try #require(Self.replay(&script, from: 1, count: 43))
        #expect(last.elapsed == 420)
        #expect(abs(last.distance - 4_200) < 1)
    }

    /// Failure 6: a loop started again from the top and added the straight line from the last
    /// point back to the first to the trip.
    @Test func aLoopAddsNoJumpAndItsTimeGoesOn() throws {
        var script = Script(Script.settings(source: .replay))
        script.start()
        let first = try #require(Self.replay(&script, from: 1, count: 11))
        #expect(abs(first.distance - 1_000) < 1)
        script.at(10, .sourceLap)
        let second = try #require(Self.replay(&script, from: 11, count: 11))
        // The second lap adds its own 1,000 m, not the 1,000 m back to the start.
        #expect(abs(second.distance - 2_000) < 1)
        // 100 s a lap, and the 1 s between laps.
        #expect(second.elapsed == 201)
    }

    /// Failure 6 too: the agent restarted on a replay reads its file from the top again.
    @Test func aResumedReplayAddsNoJump() throws {
        var script = Script(Script.settings(source: .replay))
        let snapshot = TripAccumulator.Snapshot(
            distance: 1_434, elapsed: 300, lastCounted: Coordinate(latitude: 52.60, longitude: 13.4))
        script.start(saved: [AgentCoreStartTests.record("trip", lastSeq: 4, trackSeq: 20, snapshot: snapshot)])
        let resumed = try #require(Self.replay(&script, from: 1, count: 3))
        #expect(abs(resumed.distance - (1_434 + 200)) < 1)
        #expect(resumed.elapsed == 320)
    }

    @Test func aLiveTrackersElapsedIsTheWallClocks() throws {
        var script = Script(Script.settings(source: .receiver, silence: .off))
        script.start()
        script.at(1, Script.location(1))
        let update = script.at(61, .tick).envelopeValues.last
        #expect(update?.content.state.elapsed == 61)
    }
}

@Suite("AgentCore: the end")
struct AgentCoreShutdownTests {
    @Test func aShutdownKeepsTheActivityForTheNextStartAndFinishesWithOffline() {
        var script = Script()
        script.start()
        let actions = script.at(5, .shutdown)
        #expect(actions.envelopes.isEmpty)
        #expect(actions.logs(.info) == ["agent.activity.kept"])
        #expect(actions.savedRecords.map(\.dismissalDate) == [nil])
        let finish = try! #require(actions.finish)
        #expect(finish.failure == nil)
        #expect(finish.farewell.state == .offline)
        #expect(finish.farewell.reason == .shutdown)
        // Done: later events change nothing.
        #expect(script.at(6, Script.command(.stop)).isEmpty)
    }

    @Test func endOnExitEndsTheActivityAndTheLastUpdateOfTheBatchGoesFirst() {
        var script = Script(Script.settings(endOnExit: true))
        script.start()
        // A replay's last fixes and its end in one batch.
        let actions = script.at(5, Script.location(4), .sourceEnded(failure: nil))
        #expect(actions.envelopes == ["a1 update 2", "a1 end 3", "a1 clear"])
        #expect(actions.logs(.info).contains("agent.source.ended"))
        #expect(actions.finish?.failure == nil)
    }

    @Test func aFailedSourceFinishesWithItsFailure() {
        var script = Script()
        script.start()
        let actions = script.at(5, .sourceEnded(failure: "cannot read location file"))
        #expect(actions.finish?.failure == "cannot read location file")
        #expect(actions.logs(.error) == ["agent.source.failed"])
    }

    @Test func afterTheFinishTheWindDownsReportsStillCount() {
        var script = Script(Script.settings(endOnExit: true))
        script.start()
        script.at(5, .shutdown)
        // The clear reached the broker during the wind-down: the record goes.
        #expect(script.at(6, .cleared(activityID: "a1")) == [.removeState(activityID: "a1")])
        // A connection the loop had not seen yet is announced before the offline.
        #expect(script.at(7, .connected(sessionPresent: false)).statuses.map(\.state) == [.online])
        #expect(script.at(8, .persisted(failure: "disk full", dropped: 0)).statuses.isEmpty)
    }
}
