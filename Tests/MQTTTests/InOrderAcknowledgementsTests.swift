import Locking
import Logging
import Testing

@testable import MQTT

/// The outcome of messages published in order, from their acknowledgements in any order, and the
/// handlers that take an acknowledgement on the network thread without waking a task.
struct InOrderAcknowledgementsTests {
    struct Failure: Error, Equatable {
        var code: Int
    }

    /// One row: how many messages, the failure that stopped the submission, and the events in order:
    /// `(index, failure code)` for an acknowledgement (nil: success), index -1 for a cancellation.
    struct Row: Sendable, CustomTestStringConvertible {
        var name: String
        var count: Int
        var submitFailure: Int?
        var events: [(index: Int, failure: Int?)]
        /// The outcome, and after how many events it was reported.
        var acknowledged: Int
        var failure: Int?
        var cancelled = false
        var reportedAfter: Int
        var testDescription: String { name }
    }

    static let rows: [Row] = [
        Row(
            name: "in order", count: 3, events: [(0, nil), (1, nil), (2, nil)], acknowledged: 3,
            reportedAfter: 3),
        Row(
            name: "out of order: reported when the first is in", count: 3, events: [(2, nil), (1, nil), (0, nil)],
            acknowledged: 3, reportedAfter: 3),
        Row(
            name: "a failure: those before it, at once", count: 3, events: [(0, nil), (1, 0x87), (2, nil)],
            acknowledged: 1, failure: 0x87, reportedAfter: 2),
        Row(
            name: "a failure before an earlier one is in waits for it", count: 3,
            events: [(1, 0x80), (0, nil), (2, nil)], acknowledged: 1, failure: 0x80, reportedAfter: 2),
        Row(
            name: "the submission stopped: its failure after those handed over", count: 2, submitFailure: 9,
            events: [(1, nil), (0, nil)], acknowledged: 2, failure: 9, reportedAfter: 2),
        Row(
            name: "nothing handed over: at once", count: 0, submitFailure: 9, events: [], acknowledged: 0, failure: 9,
            reportedAfter: 0),
        Row(
            name: "cancelled: what arrived so far", count: 3, events: [(0, nil), (-1, nil), (1, nil), (2, nil)],
            acknowledged: 1, cancelled: true, reportedAfter: 2),
        Row(
            // A later outcome for a message already resolved (a stray or repeated callback) is
            // ignored: the first one stands.
            name: "a message's second outcome is ignored", count: 2, events: [(1, nil), (1, 0x87), (0, nil)],
            acknowledged: 2, reportedAfter: 3),
    ]

    @Test(arguments: rows)
    func table(row: Row) {
        let outcome = InOrderAcknowledgements(
            count: row.count, submitFailure: row.submitFailure.map { Failure(code: $0) })
        let reports = Locked<[(acknowledged: Int, failure: (any Error)?, after: Int)]>([])
        let seen = Locked(0)
        outcome.whenComplete { acknowledged, failure in
            let after = seen.withLock { $0 }
            reports.withLock { $0.append((acknowledged, failure, after)) }
        }
        for event in row.events {
            seen.withLock { $0 += 1 }
            if event.index < 0 {
                outcome.cancel()
            } else {
                outcome.resolve(event.index, with: event.failure.map { Failure(code: $0) })
            }
        }
        let all = reports.withLock { $0 }
        #expect(all.count == 1, "reported \(all.count) times")
        guard let report = all.first else { return }
        #expect(report.acknowledged == row.acknowledged)
        #expect(report.after == row.reportedAfter)
        if row.cancelled {
            #expect(report.failure is CancellationError)
        } else {
            #expect((report.failure as? Failure)?.code == row.failure)
        }
    }

    @Test func aCompletionGivenLateIsCalledAtOnce() {
        let outcome = InOrderAcknowledgements(count: 1, submitFailure: nil)
        outcome.resolve(0, with: nil)
        let called = Locked<Int?>(nil)
        outcome.whenComplete { acknowledged, _ in called.withLock { $0 = acknowledged } }
        #expect(called.withLock { $0 } == 1)
    }

    @Test func aHandlerRunsWhenTheAcknowledgementArrivesOrAtOnce() {
        let context = AcknowledgementTests.makeContext()
        let results = Locked<[Int32]>([])
        context.onAcknowledgement(of: 4) { result in
            if case .success(.published(let reason)) = result { results.withLock { $0.append(reason) } }
        }
        #expect(results.withLock { $0 }.isEmpty)
        context.didAcknowledge(4, .published(reasonCode: 0x10))
        #expect(results.withLock { $0 } == [0x10])
        context.didAcknowledge(5, .published(reasonCode: 0))
        context.onAcknowledgement(of: 5) { result in
            if case .success(.published(let reason)) = result { results.withLock { $0.append(reason) } }
        }
        #expect(results.withLock { $0 } == [0x10, 0])
    }

    @Test func aLostSessionAndAShutDownFailTheHandlers() {
        let context = AcknowledgementTests.makeContext()
        let errors = Locked<[MQTTError.Code]>([])
        let record: ClientContext.AckHandler = { result in
            if case .failure(let error as MQTTError) = result { errors.withLock { $0.append(error.code) } }
        }
        context.onAcknowledgement(of: 1, record)
        #expect(context.failUnacknowledged(with: MQTTError(.sessionLost, "lost")) == 1)
        context.onAcknowledgement(of: 2, record)
        context.shutDown()
        context.onAcknowledgement(of: 3, record)
        #expect(errors.withLock { $0 } == [.sessionLost, .clientShutDown, .clientShutDown])
    }
}
