import Testing

@testable import AgentStore

/// ``SeqReservation`` as tables: what is covered, when a renewal is due and how far it reaches, as
/// the rate of use changes.
@Suite("Sequence reservation")
struct SeqReservationTests {
    /// One step of a reservation's life: numbers in use at a time, then what it says.
    struct Step: CustomTestStringConvertible, Sendable {
        let time: Double
        let used: Int
        /// Whether a renewal is due after this step.
        let due: Bool
        /// The renewal it would write (checked only when `due`), and writes (it is then on the device).
        let renewal: Int?
        var testDescription: String { "t=\(time) used=\(used)" }
    }

    /// A reservation started through `durable` with `used` in use, walked through `steps`.
    struct Walk: CustomTestStringConvertible, Sendable {
        let name: String
        let durable: Int
        let used: Int
        let steps: [Step]
        var testDescription: String { name }
    }

    static let walks: [Walk] = [
        Walk(
            name: "1 Hz: renewed once per 64 points at most, a block of 120 s of use", durable: 64, used: 0,
            steps: [
                Step(time: 0, used: 0, due: false, renewal: nil),
                Step(time: 10, used: 10, due: false, renewal: nil),
                // 64 - 34 = 30 left, the headroom at 1 Hz (30 s): not yet below it.
                Step(time: 34, used: 34, due: false, renewal: nil),
                // 29 left: renewal through 35 + 120 s at 1 Hz.
                Step(time: 35, used: 35, due: true, renewal: 155),
                Step(time: 36, used: 36, due: false, renewal: nil),
                // 155 - 125 = 30: still enough.
                Step(time: 125, used: 125, due: false, renewal: nil),
                Step(time: 126, used: 126, due: true, renewal: 246),
            ]),
        Walk(
            name: "Idle: the minimum block, renewed when a quarter of it is left", durable: 64, used: 0,
            steps: [
                Step(time: 0, used: 0, due: false, renewal: nil),
                Step(time: 1000, used: 48, due: false, renewal: nil),
                // 64 - 49 = 15 < 16 (a quarter of the block); the rate is low: the minimum block.
                Step(time: 2000, used: 49, due: true, renewal: 113),
            ]),
        Walk(
            name: "10 Hz: the block grows with the rate (1,200 numbers), due with 300 left", durable: 64, used: 0,
            steps: [
                Step(time: 0, used: 0, due: false, renewal: nil),
                // 40 used at 10 Hz: 24 left < 300 due; renewal 40 + 1,200.
                Step(time: 4, used: 40, due: true, renewal: 1240),
                Step(time: 10, used: 100, due: false, renewal: nil),
                Step(time: 94, used: 940, due: false, renewal: nil),
                // 1240 - 941 = 299 < 300.
                Step(time: 94.1, used: 941, due: true, renewal: 2141),
            ]),
        Walk(
            name: "A burst, then quiet: the memory of the faster rate halves each second", durable: 64, used: 0,
            steps: [
                Step(time: 0, used: 0, due: false, renewal: nil),
                // 50 numbers in a second: rate 50, headroom 1,500: due; renewal 50 + 6,000.
                Step(time: 1, used: 50, due: true, renewal: 6050),
                // Quiet: the rate is remembered as 25, then 12.5 (halved at each observation a
                // second or more apart), so no renewal is due for a long while.
                Step(time: 2, used: 50, due: false, renewal: nil),
                Step(time: 3, used: 50, due: false, renewal: nil),
            ]),
    ]

    @Test("Renewals come as the rate says", arguments: walks)
    func walk(_ walk: Walk) {
        var reservation = SeqReservation(durable: walk.durable, used: walk.used)
        for step in walk.steps {
            reservation.observe(used: step.used, at: step.time)
            #expect(reservation.covers(step.used), "\(step.testDescription): in use but not covered")
            #expect(
                reservation.needsRenewal(used: step.used) == step.due,
                "\(step.testDescription): due \(step.due) expected, rate \(reservation.rate)")
            guard step.due, let expected = step.renewal else { continue }
            let renewal = reservation.renewal(used: step.used)
            #expect(renewal == expected, "\(step.testDescription)")
            reservation.renewed(through: renewal)
            #expect(reservation.durable == expected)
            #expect(!reservation.needsRenewal(used: step.used))
        }
    }

    @Test("Only numbers through the reservation are covered; a renewal never moves it back")
    func coverage() {
        var reservation = SeqReservation(durable: 100, used: 90)
        #expect(reservation.covers(100))
        #expect(!reservation.covers(101))
        reservation.renewed(through: 80)
        #expect(reservation.durable == 100)
        reservation.renewed(through: 164)
        #expect(reservation.covers(164) && !reservation.covers(165))
    }

    @Test("A burst faster than the renewal's write runs past the reservation: not covered until renewed")
    func burstPastTheReservation() {
        var reservation = SeqReservation(durable: 64, used: 0)
        reservation.observe(used: 0, at: 0)
        reservation.observe(used: 70, at: 0.5)
        #expect(!reservation.covers(70))
        #expect(reservation.needsRenewal(used: 70))
        let renewal = reservation.renewal(used: 70)
        #expect(renewal >= 70 + SeqReservation.minimumBlock)
        reservation.renewed(through: renewal)
        #expect(reservation.covers(70))
    }
}
