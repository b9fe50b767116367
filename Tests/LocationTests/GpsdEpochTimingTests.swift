import Foundation
import Testing

@testable import Location

/// When the live gpsd link reports an epoch, as a table: gpsd's lines at times on a virtual
/// monotonic clock, through the link's session (decoder, epoch timer, fix gate) as its thread runs
/// it, and which fixes come out when, with or without an altitude. No sleeps: the loop below wakes
/// at the session's epoch deadline exactly as `GpsdLink`'s `poll` does.
@Suite struct GpsdEpochTimingTests {
    /// One line from gpsd, arriving `at` seconds after the start.
    struct Arrival: Sendable {
        var at: Double
        var line: String
    }

    /// One fix the link let out: its time (seconds after the first epoch), when (seconds after the
    /// start), and its altitude.
    struct Reported: Equatable, Sendable, CustomStringConvertible {
        var second: Int
        var at: Double
        var altitude: Double?
        var description: String { "fix \(second) at \(at) s, altitude \(altitude.map { "\($0)" } ?? "none")" }
    }

    struct Row: Sendable, CustomTestStringConvertible {
        var name: String
        var arrivals: [Arrival]
        /// When the run ends (the loop's last wake-up).
        var end: Double
        var reported: [Reported]
        var configuration = GpsdConfiguration()
        var testDescription: String { name }
    }

    static let firstEpoch = Date(timeIntervalSince1970: 1_795_678_262)  // 2026-11-26T07:31:02Z

    /// A TPV of the epoch `second` seconds after the first, as gpsd 3.22 sends a u-blox 8's: at RMC
    /// without the altitude, after GGA with it (`altitude`).
    static func tpv(_ second: Int, altitude: Double? = nil, climb: Double? = nil, mode: Int = 3) -> String {
        let altitudeFields = altitude.map { #","altHAE":\#($0 - 21.4),"altMSL":\#($0),"alt":\#($0)"# } ?? ""
        let climbField = climb.map { #","climb":\#($0)"# } ?? ""
        return #"{"class":"TPV","device":"/dev/pts/3","mode":\#(mode),"time":"\#(time(second))","lat":44.0689,"#
            + #""lon":-121.31427"# + altitudeFields + climbField + #","speed":0.02}"#
    }

    static func time(_ second: Int) -> String {
        ISO8601DateFormatter().string(from: firstEpoch.addingTimeInterval(Double(second)))
    }

    static let sky = #"{"class":"SKY","device":"/dev/pts/3","hdop":1.01,"vdop":1.38,"pdop":1.71,"uSat":14}"#

    /// A SKY with the time of the epoch `second` seconds after the first, as gpsd 3.23 and later send.
    static func sky(at second: Int) -> String {
        #"{"class":"SKY","device":"/dev/pts/3","time":"\#(time(second))","hdop":1.01,"uSat":14}"#
    }

    /// Not a line from gpsd: the run loses the connection and connects again at this time.
    static let reconnection = "(reconnection)"

    static let rows: [Row] = [
        Row(
            // The failure found with the footprint bench: the 0.5 s timer reported each epoch from
            // its first TPV, and the TPV with the altitude became a fix of the same time, dropped.
            name: "gpsd 3.22 and a u-blox 8: the altitude 0.85 s after the epoch's first TPV",
            arrivals: [
                Arrival(at: 0, line: tpv(0)), Arrival(at: 0.78, line: sky),
                Arrival(at: 0.85, line: tpv(0, altitude: 1144.8)), Arrival(at: 1.0, line: tpv(1)),
                Arrival(at: 1.78, line: sky), Arrival(at: 1.86, line: tpv(1, altitude: 1144.9)),
                Arrival(at: 2.0, line: tpv(2)), Arrival(at: 2.78, line: sky),
                Arrival(at: 2.85, line: tpv(2, altitude: 1145.0)),
            ],
            end: 4,
            reported: [
                Reported(second: 0, at: 0.85, altitude: 1144.8), Reported(second: 1, at: 1.86, altitude: 1144.9),
                Reported(second: 2, at: 2.85, altitude: 1145.0),
            ]),
        Row(
            // gpsd 3.22 playing the capture through gpsfake (scripts/bench's footprint case): SKY,
            // then the whole epoch in one TPV. The first epoch waits for the timeout (nothing is
            // known of the receiver yet); from the second on, a TPV with every field the fix
            // before it had, after its SKY, goes at once: it went at the timeout, 0.5 s later and
            // a wake-up of the link's thread more a fix (issue 24).
            name: "an epoch in one TPV after its SKY goes at once from the second epoch on",
            arrivals: [
                Arrival(at: 0, line: sky), Arrival(at: 0.125, line: tpv(0, altitude: 1144.8)),
                Arrival(at: 1.0, line: sky), Arrival(at: 1.125, line: tpv(1, altitude: 1144.9)),
                Arrival(at: 2.0, line: sky), Arrival(at: 2.125, line: tpv(2, altitude: 1145.0)),
            ],
            end: 3,
            reported: [
                Reported(second: 0, at: 0.625, altitude: 1144.8), Reported(second: 1, at: 1.125, altitude: 1144.9),
                Reported(second: 2, at: 2.125, altitude: 1145.0),
            ]),
        Row(
            name: "a TPV with fewer fields than the fix before it waits for the timeout",
            arrivals: [
                Arrival(at: 0, line: sky), Arrival(at: 0.125, line: tpv(0, altitude: 1144.8, climb: 0.1)),
                Arrival(at: 1.0, line: sky), Arrival(at: 1.125, line: tpv(1, altitude: 1144.9)),
                Arrival(at: 1.3, line: tpv(1, altitude: 1144.9, climb: 0.1)),
            ],
            end: 3,
            reported: [
                Reported(second: 0, at: 0.625, altitude: 1144.8), Reported(second: 1, at: 1.3, altitude: 1144.9),
            ]),
        Row(
            // gpsd 3.23 and later give SKY a time: a TPV waits for the SKY of its own time,
            // whichever comes first.
            name: "with timed SKYs an epoch goes when both its TPV and its SKY are in",
            arrivals: [
                Arrival(at: 0, line: sky(at: 0)), Arrival(at: 0.1, line: tpv(0, altitude: 1144.8)),
                Arrival(at: 1.0, line: tpv(1, altitude: 1144.9)), Arrival(at: 1.2, line: sky(at: 1)),
                Arrival(at: 2.0, line: sky(at: 1)), Arrival(at: 2.1, line: tpv(2, altitude: 1145.0)),
                Arrival(at: 3.0, line: sky(at: 3)), Arrival(at: 3.1, line: tpv(3, altitude: 1145.1)),
            ],
            end: 4,
            reported: [
                Reported(second: 0, at: 0.6, altitude: 1144.8), Reported(second: 1, at: 1.2, altitude: 1144.9),
                Reported(second: 2, at: 2.6, altitude: 1145.0), Reported(second: 3, at: 3.1, altitude: 1145.1),
            ]),
        Row(
            // gpsd sends this receiver's SKY after the TPV: the TPV alone is not the whole epoch.
            name: "where SKY follows the TPV an epoch goes with its SKY",
            arrivals: [
                Arrival(at: 0, line: tpv(0, altitude: 1144.8)), Arrival(at: 0.1, line: sky),
                Arrival(at: 1.0, line: tpv(1, altitude: 1144.9)), Arrival(at: 1.1, line: sky),
            ],
            end: 3,
            reported: [
                Reported(second: 0, at: 0.5, altitude: 1144.8), Reported(second: 1, at: 1.1, altitude: 1144.9),
            ]),
        Row(
            // Connected between an epoch's SKY and its TPV: the first message is a TPV, and the
            // decoder learns "TPV first". The SKY that comes between two epochs is still the next
            // one's own, and it goes at once.
            name: "connected between an epoch's SKY and its TPV, epochs still go at once",
            arrivals: [
                Arrival(at: 0, line: tpv(0, altitude: 1144.8)), Arrival(at: 0.875, line: sky),
                Arrival(at: 1.0, line: tpv(1, altitude: 1144.9)), Arrival(at: 1.875, line: sky),
                Arrival(at: 2.0, line: tpv(2, altitude: 1145.0)),
            ],
            end: 3,
            reported: [
                Reported(second: 0, at: 0.5, altitude: 1144.8), Reported(second: 1, at: 1.0, altitude: 1144.9),
                Reported(second: 2, at: 2.0, altitude: 1145.0),
            ]),
        Row(
            name: "after a reconnection the first epoch waits for the timeout again",
            arrivals: [
                Arrival(at: 0, line: sky), Arrival(at: 0.125, line: tpv(0, altitude: 1144.8)),
                Arrival(at: 1.0, line: sky), Arrival(at: 1.125, line: tpv(1, altitude: 1144.9)),
                Arrival(at: 1.5, line: reconnection),
                Arrival(at: 2.0, line: sky), Arrival(at: 2.125, line: tpv(2, altitude: 1145.0)),
                Arrival(at: 3.0, line: sky), Arrival(at: 3.125, line: tpv(3, altitude: 1145.1)),
            ],
            end: 4,
            reported: [
                Reported(second: 0, at: 0.625, altitude: 1144.8), Reported(second: 1, at: 1.125, altitude: 1144.9),
                Reported(second: 2, at: 2.625, altitude: 1145.0), Reported(second: 3, at: 3.125, altitude: 1145.1),
            ]),
        Row(
            name: "an altitude within the epoch timeout waits for it as before",
            arrivals: [Arrival(at: 0, line: tpv(0)), Arrival(at: 0.2, line: tpv(0, altitude: 1144.8))],
            end: 2,
            reported: [Reported(second: 0, at: 0.5, altitude: 1144.8)]),
        Row(
            // The first epoch waits (gpsd might send its altitude) and ends at the next one; then
            // the link knows this receiver gives none and stops waiting.
            name: "a receiver without altitudes holds one epoch",
            arrivals: [
                Arrival(at: 0, line: tpv(0, mode: 2)), Arrival(at: 1.0, line: tpv(1, mode: 2)),
                Arrival(at: 2.0, line: tpv(2, mode: 2)),
            ],
            end: 3,
            reported: [
                Reported(second: 0, at: 1.0, altitude: nil), Reported(second: 1, at: 1.5, altitude: nil),
                Reported(second: 2, at: 2.5, altitude: nil),
            ]),
        Row(
            name: "an altitude that never comes ends at the incomplete epoch timeout",
            arrivals: [Arrival(at: 0, line: tpv(0, altitude: 1144.8)), Arrival(at: 5, line: tpv(5))],
            end: 9,
            reported: [Reported(second: 0, at: 0.5, altitude: 1144.8), Reported(second: 5, at: 6.5, altitude: nil)]),
        Row(
            name: "an altitude lost and found again",
            arrivals: [
                Arrival(at: 0, line: tpv(0, altitude: 1144.8)), Arrival(at: 1, line: tpv(1)),
                Arrival(at: 2, line: tpv(2)), Arrival(at: 3, line: tpv(3, altitude: 1145.5)),
                Arrival(at: 4, line: tpv(4)),
                Arrival(at: 4.85, line: tpv(4, altitude: 1145.6)),
            ],
            end: 6,
            // A 3D epoch without its altitude waits for it until the next epoch, until three 3D
            // fixes in a row came without one.
            reported: [
                Reported(second: 0, at: 0.5, altitude: 1144.8), Reported(second: 1, at: 2, altitude: nil),
                Reported(second: 2, at: 3, altitude: nil), Reported(second: 3, at: 3.5, altitude: 1145.5),
                Reported(second: 4, at: 4.85, altitude: 1145.6),
            ]),
        Row(
            // The failure GpsdEpochIntegrationTests found (a stress run): the capture's first pass
            // ended with an epoch gpsd sent without its altitude, and the next one, whole but for
            // the altitude gpsd sends 0.85 s after its first TPV, went at once without it (every
            // field the fix before it had, and its SKY).
            name: "after a fix without its altitude, a 3D epoch in parts still waits for its altitude",
            arrivals: [
                Arrival(at: 0, line: sky), Arrival(at: 0.125, line: tpv(0, altitude: 1144.8)),
                Arrival(at: 1.0, line: sky), Arrival(at: 1.125, line: tpv(1)),
                Arrival(at: 2.0, line: sky), Arrival(at: 2.125, line: tpv(2)),
                Arrival(at: 2.975, line: tpv(2, altitude: 1145.0)),
            ],
            end: 5,
            reported: [
                Reported(second: 0, at: 0.625, altitude: 1144.8), Reported(second: 1, at: 2.125, altitude: nil),
                Reported(second: 2, at: 2.975, altitude: 1145.0),
            ]),
        Row(
            // A receiver whose 3D fixes carry no altitude: three epochs held until the next, then
            // the usual (the fourth's SKY came while the third was held: the epoch timeout).
            name: "3D fixes without altitudes hold three epochs",
            arrivals: (0..<5).flatMap { second in
                [Arrival(at: Double(second), line: sky), Arrival(at: Double(second) + 0.125, line: tpv(second))]
            },
            end: 6,
            reported: [
                Reported(second: 0, at: 1.125, altitude: nil), Reported(second: 1, at: 2.125, altitude: nil),
                Reported(second: 2, at: 3.125, altitude: nil), Reported(second: 3, at: 3.625, altitude: nil),
                Reported(second: 4, at: 4.125, altitude: nil),
            ]),
        Row(
            name: "an incomplete epoch timeout at the epoch timeout turns the holding off",
            arrivals: [
                Arrival(at: 0, line: tpv(0)), Arrival(at: 0.85, line: tpv(0, altitude: 1144.8)),
                Arrival(at: 1.0, line: tpv(1)),
            ],
            end: 2,
            reported: [Reported(second: 0, at: 0.5, altitude: nil), Reported(second: 1, at: 1.5, altitude: nil)],
            configuration: GpsdConfiguration(incompleteEpochTimeout: .milliseconds(500))),
    ]

    /// Runs `arrivals` through a session as `GpsdLink`'s loop does: before each arrival, a wake-up
    /// at the epoch deadline if it comes first; after each, the due epoch is flushed and the
    /// updates drained.
    static func run(_ arrivals: [Arrival], end: Double, configuration: GpsdConfiguration = GpsdConfiguration())
        -> [Reported]
    {
        var session = GpsdLink.Session(configuration: configuration, logger: .discarding, now: { firstEpoch })
        var reported: [Reported] = []
        var clock = 0.0
        func drain() {
            session.drain { update in
                guard let fix = update.fix else { return }
                let second = Int(fix.time.timeIntervalSince(firstEpoch).rounded())
                reported.append(Reported(second: second, at: clock, altitude: fix.altitude))
            }
        }
        func wake(until time: Double) {
            while let due = session.epochFlushTime, due <= time {
                clock = due
                session.flushEpochIfDue(now: due)
                drain()
            }
        }
        for line in [#"{"class":"VERSION","release":"3.22","rev":"3.22","proto_major":3,"proto_minor":14}"#] {
            _ = Array(line.utf8).withUnsafeBufferPointer { session.decode($0, now: 0) }
        }
        for arrival in arrivals {
            wake(until: arrival.at)
            clock = arrival.at
            if arrival.line == reconnection {
                session.disconnected(.closed, output: { _ in })
                continue
            }
            _ = Array(arrival.line.utf8).withUnsafeBufferPointer { session.decode($0, now: arrival.at) }
            session.flushEpochIfDue(now: arrival.at)
            drain()
        }
        wake(until: end)
        return reported
    }

    @Test(arguments: rows)
    func table(row: Row) {
        #expect(Self.run(row.arrivals, end: row.end, configuration: row.configuration) == row.reported)
    }

    @Test func aNegativeIncompleteEpochTimeoutIsRefused() {
        #expect(throws: LocationError.self) {
            try GpsdConfiguration(incompleteEpochTimeout: .milliseconds(-1)).validate()
        }
        #expect(throws: Never.self) { try GpsdConfiguration(incompleteEpochTimeout: .zero).validate() }
    }

    /// An altitude above the ellipsoid alone (`altHAE`, no `altMSL`) is an altitude too: the next
    /// epoch without one waits for it, as after `altMSL`.
    @Test func anEllipsoidAltitudeAloneIsExpectedAgain() {
        var decoder = GpsdDecoder()
        var output: [LocationUpdate] = []
        let time = Self.time(0)
        let lines = [
            #"{"class":"TPV","mode":3,"time":"\#(time)","lat":44.0689,"lon":-121.31427,"altHAE":1123.4}"#,
            Self.tpv(1),
        ]
        for line in lines {
            _ = Array(line.utf8).withUnsafeBufferPointer { decoder.decodeLine($0, into: &output) }
        }
        #expect(output.first?.fix?.altitude == nil && output.first?.fix?.quality.ellipsoidAltitude == 1123.4)
        #expect(decoder.pendingEpochAwaitsAltitude)
    }

    /// A reconnection forgets what the receiver sent: the first epoch after it waits for its
    /// altitude again.
    @Test func aReconnectionExpectsAnAltitudeAgain() {
        var decoder = GpsdDecoder()
        var output: [LocationUpdate] = []
        for line in [Self.tpv(0, mode: 2), Self.tpv(1, mode: 2)] {
            _ = Array(line.utf8).withUnsafeBufferPointer { decoder.decodeLine($0, into: &output) }
        }
        #expect(!decoder.pendingEpochAwaitsAltitude)
        decoder.connectionLost(into: &output)
        _ = Array(Self.tpv(2, mode: 2).utf8).withUnsafeBufferPointer { decoder.decodeLine($0, into: &output) }
        #expect(decoder.pendingEpochAwaitsAltitude)
    }
}
