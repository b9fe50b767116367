import Testing

@testable import AgentStore

/// ``OutboxHandOff`` as a table: what the drainer is handed from memory and when it must read the
/// outbox instead, and which delivery the outbox's cursor is still to record, after appends,
/// deliveries and records in any order.
@Suite("Outbox hand-off")
struct OutboxHandOffTests {
    enum Step: Sendable {
        /// Records with these indices were appended (and given to the hand-off).
        case append(ClosedRange<UInt64>)
        /// The broker completed every record through this index.
        case deliver(UInt64)
        /// The outbox's cursor now has the delivery through this index.
        case record(UInt64)
    }

    struct Case: CustomTestStringConvertible, Sendable {
        let name: String
        var capacity = 4
        let steps: [Step]
        /// The outbox's head and tail when the drainer asks, and the most it takes.
        let head: UInt64
        let tail: UInt64
        var max = 256
        /// The indices handed over; nil: read the outbox.
        let taken: [UInt64]?
        let unrecorded: UInt64?
        let kept: [UInt64]
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(
            name: "1 Hz: the point just appended comes from memory", steps: [.append(0...0)], head: 0, tail: 1,
            taken: [0], unrecorded: nil, kept: [0]),
        Case(
            name: "1 Hz: delivered, let go, and the cursor is to record it", steps: [.append(0...0), .deliver(0)],
            head: 0, tail: 1, taken: [], unrecorded: 0, kept: []),
        Case(
            name: "1 Hz: the next append records the last delivery; the next point from memory",
            steps: [.append(0...0), .deliver(0), .record(0), .append(1...1)], head: 1, tail: 2, taken: [1],
            unrecorded: nil, kept: [1]),
        Case(
            name: "the cursor behind the delivery: the outbox's head is not where the drainer starts",
            steps: [.append(0...2), .deliver(1)], head: 0, tail: 3, taken: [2], unrecorded: 1, kept: [2]),
        Case(
            name: "the drainer behind (an outage): only the newest are kept; the older are read from the outbox",
            steps: [.append(0...5)], head: 0, tail: 6, taken: nil, unrecorded: nil, kept: [2, 3, 4, 5]),
        Case(
            name: "the drainer behind, then caught up to the kept ones: from memory again",
            steps: [.append(0...5), .deliver(1)], head: 0, tail: 6, taken: [2, 3, 4, 5], unrecorded: 1,
            kept: [2, 3, 4, 5]),
        Case(
            name: "a batch: at most `max`", steps: [.append(0...3)], head: 0, tail: 4, max: 2, taken: [0, 1],
            unrecorded: nil, kept: [0, 1, 2, 3]),
        Case(
            name: "on reconnection after a batch cut short: the rest again, from memory",
            steps: [.append(0...3), .deliver(1)], head: 0, tail: 4, taken: [2, 3], unrecorded: 1, kept: [2, 3]),
        Case(
            name: "the window full: the outbox's head past the first not delivered starts the batch",
            steps: [.append(0...3)], head: 2, tail: 4, taken: [2, 3], unrecorded: nil, kept: [0, 1, 2, 3]),
        Case(
            name: "the outbox's head past the kept ones (dropped when full): read the outbox",
            steps: [.append(0...3)], head: 6, tail: 8, taken: nil, unrecorded: nil, kept: [0, 1, 2, 3]),
        Case(
            name: "an append the hand-off did not see: what follows it replaces the kept ones",
            steps: [.append(0...1), .append(5...6)], head: 0, tail: 7, taken: nil, unrecorded: nil, kept: [5, 6]),
        Case(
            name: "appended after the drainer read them from the outbox and delivered them: not kept",
            steps: [.deliver(2), .append(1...3)], head: 0, tail: 4, taken: [3], unrecorded: 2, kept: [3]),
        Case(
            name: "an earlier delivery or record changes nothing",
            steps: [.append(0...3), .deliver(2), .deliver(1), .record(2), .record(0)], head: 0, tail: 4,
            taken: [3], unrecorded: nil, kept: [3]),
        Case(
            name: "nothing kept, nothing before the tail: nothing to deliver, no read",
            steps: [], head: 3, tail: 3, taken: [], unrecorded: nil, kept: []),
        Case(
            name: "nothing kept after a restart: read the outbox", steps: [], head: 3, tail: 9, taken: nil,
            unrecorded: nil, kept: []),
        Case(
            name: "capacity 0 keeps nothing", capacity: 0, steps: [.append(0...2)], head: 0, tail: 3, taken: nil,
            unrecorded: nil, kept: []),
    ]

    @Test(arguments: cases)
    func handOff(_ row: Case) {
        var handOff = OutboxHandOff(capacity: row.capacity)
        for step in row.steps {
            switch step {
            case .append(let indices):
                handOff.appended(
                    indices.map { OutboxRecord(index: $0, topic: "t", payload: Array("\($0)".utf8)) })
            case .deliver(let index): handOff.delivered(through: index)
            case .record(let index): handOff.recorded(through: index)
            }
        }
        let taken = handOff.take(from: row.head, tail: row.tail, max: row.max)
        #expect(taken?.map(\.index) == row.taken)
        // Each record handed over is the one appended at its index.
        #expect(taken?.allSatisfy { $0.payload == Array("\($0.index)".utf8) } ?? true)
        #expect(handOff.unrecorded == row.unrecorded)
        #expect(handOff.kept.map(\.index) == row.kept)
    }
}
