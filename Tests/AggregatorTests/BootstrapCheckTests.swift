import Board
import Foundation
import MQTT
import Logging
import TestSupport
import Testing

@testable import Aggregator

/// When the board judges its check late (``BoardSession/completeIfCheckIsLate(sentAt:limit:)``): a
/// check or sentinel that came back waits behind the retained messages not yet applied, and the
/// verdict is the drain's, however long applying them takes.
struct BootstrapCheckTests {
    static let sentinel = "myeline-aggregator/sync/board-1"

    /// A session that placed its sentinel and received `count` retained envelopes, none applied yet.
    static func sessionBehind(count: Int, clock: ManualWallClock) -> BoardSession {
        let session = BoardSession(
            topics: Wire.topics, sentinelTopic: sentinel, clock: clock, logger: Logger(label: "test"))
        session.noteSentinel(placed: true)
        for index in 0..<count {
            session.receive(
                MQTTMessage(
                    topic: Wire.activityTopic("dev-\(index)"), payload: Wire.envelope(device: "dev-\(index)", seq: 1),
                    retain: true))
        }
        return session
    }

    static func answer(_ session: BoardSession, _ payload: String, retain: Bool) {
        session.receive(MQTTMessage(topic: sentinel, payload: Array(payload.utf8), retain: retain))
    }

    @Test func aSentinelAndCheckWaitingBehindUnappliedMessagesAreNotLate() {
        let clock = ManualWallClock(now: Wire.now)
        let session = Self.sessionBehind(count: 600, clock: clock)
        let sentAt = clock.now
        Self.answer(session, BoardSession.sentinelPayload, retain: true)
        Self.answer(session, BoardSession.checkPayload, retain: false)
        // Applying takes longer than the limit: the answers came back, only not applied yet.
        clock.advance(by: 6)
        session.completeIfCheckIsLate(sentAt: sentAt, limit: 5)
        #expect(!session.isBootstrapComplete)
        session.drain()
        #expect(session.withState { $0.bootstrap.verdict } == .complete)
        #expect(session.withState { $0.fleet.rows.count } == 600)
    }

    @Test func aCheckThatDoesNotComeBackIsLateAfterTheLimit() {
        let clock = ManualWallClock(now: Wire.now)
        let session = Self.sessionBehind(count: 10, clock: clock)
        let sentAt = clock.now
        clock.advance(by: 4.9)
        session.completeIfCheckIsLate(sentAt: sentAt, limit: 5)
        #expect(!session.isBootstrapComplete)
        clock.advance(by: 0.1)
        session.completeIfCheckIsLate(sentAt: sentAt, limit: 5)
        #expect(session.withState { $0.bootstrap.verdict } == .truncated)
    }

    @Test func aCheckBackWithoutTheSentinelBeforeItIsATruncation() {
        let clock = ManualWallClock(now: Wire.now)
        let session = Self.sessionBehind(count: 10, clock: clock)
        let sentAt = clock.now
        Self.answer(session, BoardSession.checkPayload, retain: false)
        clock.advance(by: 6)
        session.completeIfCheckIsLate(sentAt: sentAt, limit: 5)
        #expect(!session.isBootstrapComplete)
        session.drain()
        #expect(session.withState { $0.bootstrap.verdict } == .truncated)
    }
}
