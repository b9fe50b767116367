import Interop
import Testing

/// At most one OwnTracks location per second of `tst`, the newest fix of that second: a table of
/// fixes, flushes and reportLocation commands, and what each releases.
struct OwnTracksPacingTests {
    /// One input to the machine; times are milliseconds after a fixed instant.
    enum Event: Sendable {
        /// A fix of second `tst` (counted from 1709294400) at `latitude`, arrived at `at`.
        case fix(tst: Int, latitude: Double, at: Int)
        /// The flush timer fired at `at`.
        case flush(at: Int)
        /// A reportLocation command.
        case report
        /// A graceful shutdown.
        case finish
    }

    struct Case: CustomTestStringConvertible, Sendable {
        let name: String
        let events: [Event]
        /// What was released, in order: `SECOND@LATITUDE`, the answers to reports as `r SECOND@LATITUDE`.
        let released: [String]
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(
            name: "three fixes share a second: the newest goes out when the next second begins",
            events: [
                .fix(tst: 0, latitude: 1, at: 0), .fix(tst: 0, latitude: 2, at: 200),
                .fix(tst: 0, latitude: 3, at: 400),
                .fix(tst: 1, latitude: 4, at: 1000),
            ],
            released: ["0@3.0"]),
        Case(
            name: "the last fix goes out at its flush, one second after its second's first fix, not before",
            events: [
                .fix(tst: 0, latitude: 1, at: 0), .fix(tst: 0, latitude: 2, at: 500), .flush(at: 999),
                .flush(at: 1000), .flush(at: 5000),
            ],
            released: ["0@2.0"]),
        Case(
            name: "a fix of a second already published is dropped, so tst never repeats",
            events: [
                .fix(tst: 0, latitude: 1, at: 0), .flush(at: 1000), .fix(tst: 0, latitude: 2, at: 1100),
                .flush(at: 2100), .fix(tst: 1, latitude: 3, at: 1200), .flush(at: 2200),
            ],
            released: ["0@1.0", "1@3.0"]),
        Case(
            name: "a 1 Hz receiver: each fix goes out when the next arrives",
            events: [
                .fix(tst: 0, latitude: 1, at: 0), .fix(tst: 1, latitude: 2, at: 990),
                .fix(tst: 2, latitude: 3, at: 1980),
                .flush(at: 2980),
            ],
            released: ["0@1.0", "1@2.0", "2@3.0"]),
        Case(
            name: "a new timeline (an earlier second) is published, not taken for a repeat",
            events: [.fix(tst: 10, latitude: 1, at: 0), .fix(tst: 3, latitude: 2, at: 100), .flush(at: 1100)],
            released: ["10@1.0", "3@2.0"]),
        Case(
            name: "reportLocation answers with the held fix and publishes its second: its later fixes are dropped",
            events: [
                .fix(tst: 0, latitude: 1, at: 0), .report, .fix(tst: 0, latitude: 2, at: 300), .flush(at: 1300),
                .report,
            ],
            released: ["r 0@1.0", "r 0@1.0"]),
        Case(name: "reportLocation before any fix has nothing to answer", events: [.report], released: []),
        Case(
            name: "a graceful shutdown publishes the held fix, and only that",
            events: [.fix(tst: 0, latitude: 1, at: 0), .fix(tst: 1, latitude: 2, at: 100), .finish, .finish],
            released: ["0@1.0", "1@2.0"]),
    ]

    @Test("what each event releases", arguments: cases)
    func table(_ entry: Case) {
        let start = ContinuousClock.now
        func instant(_ milliseconds: Int) -> ContinuousClock.Instant { start + .milliseconds(milliseconds) }
        func text(_ location: OwnTracksLocation) -> String {
            "\(location.timestamp - 1_709_294_400)@\(location.latitude)"
        }
        var pacing = OwnTracksPacing()
        var released: [String] = []
        for event in entry.events {
            switch event {
            case .fix(let tst, let latitude, let at):
                let location = OwnTracksLocation(latitude: latitude, longitude: 0, timestamp: 1_709_294_400 + tst)
                if let published = pacing.receive(location, now: instant(at)).publish {
                    released.append(text(published))
                }
            case .flush(let at):
                if let published = pacing.flush(now: instant(at)) { released.append(text(published)) }
            case .report:
                if let answer = pacing.report() { released.append("r " + text(answer)) }
            case .finish:
                if let published = pacing.finish() { released.append(text(published)) }
            }
        }
        #expect(released == entry.released)
    }

    @Test("a flush is asked for when a second's first fix arrives, one hold time later, and only then")
    func flushTimes() {
        let start = ContinuousClock.now
        var pacing = OwnTracksPacing()
        let first = pacing.receive(OwnTracksLocation(latitude: 1, longitude: 0, timestamp: 5), now: start)
        #expect(first == OwnTracksPacing.Step(publish: nil, flushAt: start + OwnTracksPacing.holdTime))
        let same = pacing.receive(
            OwnTracksLocation(latitude: 2, longitude: 0, timestamp: 5), now: start + .milliseconds(500))
        #expect(same == OwnTracksPacing.Step())
        let next = pacing.receive(
            OwnTracksLocation(latitude: 3, longitude: 0, timestamp: 6), now: start + .milliseconds(700))
        #expect(
            next
                == OwnTracksPacing.Step(
                    publish: OwnTracksLocation(latitude: 2, longitude: 0, timestamp: 5),
                    flushAt: start + .milliseconds(700) + OwnTracksPacing.holdTime))
    }
}
