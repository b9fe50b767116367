import AsyncSupport
import Foundation
import Testing

@testable import Location

/// gpsd's JSON lines through the decoder: epoch merging, devices, garbage.
@Suite struct GpsdDecoderTests {
    static func decode(_ lines: [String], device: String? = nil) -> (updates: [LocationUpdate], decoder: GpsdDecoder) {
        var decoder = GpsdDecoder(device: device)
        let updates = decoder.decode(Array(lines.joined(separator: "\n").utf8))
        return (updates, decoder)
    }

    static let version = #"{"class":"VERSION","release":"3.22","rev":"3.22","proto_major":3,"proto_minor":14}"#

    static func tpv(_ fields: String) -> String { #"{"class":"TPV","device":"/dev/ttyACM0","# + fields + "}" }

    @Test func mergesTheTPVsOfOneEpochIntoOneUpdate() throws {
        let (updates, _) = Self.decode([
            Self.version,
            Self.tpv(
                #""mode":3,"time":"2014-12-31T03:07:20.000Z","lat":-37.784791667,"lon":175.314896667,"altMSL":59.8"#),
            #"{"class":"SKY","hdop":1.10,"pdop":1.80,"vdop":1.50,"uSat":8}"#,
            Self.tpv(
                #""mode":3,"time":"2014-12-31T03:07:20.000Z","lat":-37.784791667,"lon":175.314896667,"epv":34.5,"speed":0.592,"track":181.39,"eph":20.9"#
            ),
            Self.tpv(#""mode":3,"time":"2014-12-31T03:07:21.000Z","lat":-37.7848,"lon":175.3149"#),
        ])
        #expect(updates.count == 2)
        let fix = try #require(updates.first?.fix)
        #expect(fix.time == Date(timeIntervalSince1970: 1_419_995_240))
        #expect(fix.latitude == -37.784791667 && fix.longitude == 175.314896667)
        #expect(fix.altitude == 59.8 && fix.speed == 0.592 && fix.course == 181.39 && fix.horizontalAccuracy == 20.9)
        #expect(fix.quality.verticalAccuracy == 34.5 && fix.quality.hdop == 1.1 && fix.satellitesUsed == 8)
        #expect(fix.mode == .threeDimensional)
        #expect(updates.first?.device == "/dev/ttyACM0")
    }

    struct Row: Sendable, CustomTestStringConvertible {
        var name: String
        var lines: [String]
        var device: String? = nil
        var statuses: [LocationUpdate.Status]
        var testDescription: String { name }
    }

    static let rows: [Row] = [
        Row(name: "mode 1 is no fix", lines: [tpv(#""mode":1,"time":"2020-01-01T00:00:00.000Z""#)], statuses: [.noFix]),
        Row(name: "mode 0 is no fix", lines: [tpv(#""mode":0"#)], statuses: [.noFix]),
        Row(name: "absent mode is no fix", lines: [tpv(#""lat":1.5,"lon":2.5"#)], statuses: [.noFix]),
        Row(name: "only a class", lines: [#"{"class":"TPV"}"#], statuses: [.noFix]),
        Row(
            name: "a fix then no fix at the same time gives both",
            lines: [
                tpv(#""mode":2,"time":"2020-01-01T00:00:00.000Z","lat":1.5,"lon":2.5"#),
                tpv(#""mode":1,"time":"2020-01-01T00:00:00.000Z""#),
                tpv(#""mode":1,"time":"2020-01-01T00:00:00.000Z""#),
            ], statuses: [.fix, .noFix]),
        Row(
            name: "the device goes away",
            lines: [
                tpv(#""mode":2,"time":"2020-01-01T00:00:00.000Z","lat":1.5,"lon":2.5"#),
                #"{"class":"DEVICE","path":"/dev/ttyACM0","activated":0}"#,
            ], statuses: [.fix, .deviceUnavailable]),
        Row(
            name: "another device going away does not matter",
            lines: [
                tpv(#""mode":2,"time":"2020-01-01T00:00:00.000Z","lat":1.5,"lon":2.5"#),
                #"{"class":"DEVICE","path":"/dev/ttyUSB9","activated":0}"#,
            ], statuses: [.fix]),
        Row(
            name: "no devices at all", lines: [version, #"{"class":"DEVICES","devices":[]}"#],
            statuses: [.deviceUnavailable]),
        Row(
            name: "the watched device is not among the devices",
            lines: [
                #"{"class":"DEVICES","devices":[{"class":"DEVICE","path":"/dev/ttyS1","activated":"2020-01-01T00:00:00.000Z"}]}"#
            ],
            device: "/dev/ttyACM0", statuses: [.deviceUnavailable]),
        Row(
            name: "messages of other devices are ignored",
            lines: [
                #"{"class":"TPV","device":"/dev/ttyS1","mode":3,"time":"2020-01-01T00:00:00.000Z","lat":1,"lon":2}"#
            ],
            device: "/dev/ttyACM0", statuses: []),
        Row(
            name: "other classes are ignored",
            lines: [#"{"class":"WATCH","enable":true}"#, #"{"class":"PPS","real_sec":1}"#], statuses: []),
        Row(
            name: "a fix without a time is dropped",
            lines: [tpv(#""mode":3,"lat":1.5,"lon":2.5"#)], statuses: []),
        Row(
            name: "an ERROR is counted, not fatal",
            lines: [#"{"class":"ERROR","message":"Unrecognized request 'FOO'"}"#, tpv(#""mode":1"#)], statuses: [.noFix]
        ),
    ]

    @Test(arguments: rows)
    func table(row: Row) {
        let (updates, _) = Self.decode(row.lines, device: row.device)
        #expect(updates.map(\.status) == row.statuses)
        #expect(updates.allSatisfy { ($0.fix == nil) == ($0.status != .fix) })
    }

    @Test func rejectsAndCountsGarbageAndGoesOn() {
        let tooLong = #"{"class":"TPV","junk":""# + String(repeating: "x", count: 10_300) + #""}"#
        let (updates, decoder) = Self.decode([
            "not json at all", #"{"class":"TPV","lat":}"#, "{\u{01}\u{02}binary", tooLong, #"{"mode":3}"#,
            #"{"class":"TPV","mode":3,"time":"2020-13-45T99:00:00Z","lat":1,"lon":2}"#,
            #"{"class":"TPV","mode":3,"lat":"north","lon":2}"#, #"{"class":"TPV","mode":3} trailing"#,
            "$GPGGA,pass-through,ignored", "# a comment",
            Self.tpv(#""mode":2,"time":"2020-01-01T00:00:00.000Z","lat":1.5,"lon":2.5"#),
        ])
        #expect(updates.compactMap(\.fix).count == 1)
        #expect(decoder.statistics.rejected == [.notJSON: 3, .binary: 1, .tooLong: 1, .unknown: 1, .invalidField: 2])
        #expect(decoder.statistics.linesIgnored == 2)
        #expect(decoder.statistics.linesRead == 11)
    }

    @Test func countsSatellitesMarkedUsedWhenThereIsNoUSat() throws {
        let (updates, _) = Self.decode([
            #"{"class":"SKY","hdop":0.9,"satellites":[{"PRN":1,"used":true},{"PRN":2,"used":false},{"PRN":3,"used":true}]}"#,
            Self.tpv(#""mode":2,"time":"2020-01-01T00:00:00Z","lat":1.5,"lon":2.5"#),
        ])
        #expect(try #require(updates.first?.fix).satellitesUsed == 2)
        #expect(try #require(updates.first?.fix).mode == .twoDimensional)
    }

    /// gpsd 3.22 sends nSat and uSat before the satellites: the list is then skipped whole (its
    /// brackets and strings checked), not walked satellite by satellite, which was most of what a
    /// SKY cost (callgrind: 16 % of the agent's instructions at 1 Hz). uSat is taken wherever it is.
    @Test func uSatIsTakenBeforeOrAfterTheSatellites() throws {
        let satellites = #""satellites":[{"PRN":1,"used":true},{"PRN":2,"used":false}]"#
        for sky in [#"{"class":"SKY","nSat":2,"uSat":7,\#(satellites)}"#, #"{"class":"SKY",\#(satellites),"uSat":7}"#] {
            let (updates, decoder) = Self.decode([
                sky, Self.tpv(#""mode":2,"time":"2020-01-01T00:00:00Z","lat":1.5,"lon":2.5"#),
            ])
            #expect(try #require(updates.first?.fix).satellitesUsed == 7, "\(sky)")
            #expect(decoder.statistics.rejected.isEmpty)
        }
    }

    @Test func placesAFixWithoutTimeAtTheLiveClock() throws {
        // gpsd sends no time for a receiver that never gives a date (GGA only); the live source's
        // clock places the fix, a capture drops it.
        let clock = Date(timeIntervalSince1970: 1_800_000_000)
        let lines = [Self.tpv(#""mode":3,"lat":51.5,"lon":-0.2,"altMSL":50"#)]
        var live = GpsdDecoder(timelessFixTime: { clock })
        let fix = try #require(live.decode(Array(lines.joined(separator: "\n").utf8)).first?.fix)
        #expect(fix.time == clock && fix.latitude == 51.5)
        let (updates, decoder) = Self.decode(lines)
        #expect(updates.isEmpty && decoder.statistics.dropped == [.missingTime: 1])
    }

    @Test func aSKYWithATimeJoinsItsEpochWhateverTheOrder() {
        for skyFirst in [true, false] {
            var decoder = GpsdDecoder()
            let fixes = decoder.decode(GpsdRuleTests.session(skyFirst: skyFirst, skyTimes: true)).compactMap(\.fix)
            #expect(fixes.map(\.satellitesUsed) == (4..<14).map { $0 })
        }
    }

    @Test func decodesEveryCheckFileAsACapture() throws {
        // The .chk files are gpsd's own output (with NMEA passed through): positions as gpsd had them.
        for log in TestData.gpsdLogs {
            let bytes = try TestData.bytes("gpsd-logs/\(log).chk")
            var decoder = GpsdDecoder()
            let fixes = decoder.decode(bytes).compactMap(\.fix)
            let check = try GpsdCheckFile(contentsOf: TestData.path("gpsd-logs/\(log).chk"))
            let comparison = GpsdComparison(fixes: fixes, check: check, normalize: { $0 })
            #expect(comparison.missedTimes.isEmpty && comparison.extraCount == 0, "\(log): \(comparison)")
            #expect(decoder.statistics.totalRejected == 0, "\(log): \(decoder.statistics.rejected)")
        }
    }
}

/// The connection's life as a table of events and actions.
@Suite struct GpsdConnectionMachineTests {
    static func machine() -> GpsdConnectionMachine {
        GpsdConnectionMachine(
            watchCommand: "?WATCH={}\n", silenceTimeout: 5,
            retryDelay: Backoff(initialDelay: .seconds(1), maximumDelay: .seconds(8), jitter: 0))
    }

    @Test func connectsWatchesAndChecksTheGreeting() {
        var machine = Self.machine()
        #expect(machine.start() == .connect)
        #expect(machine.connected(now: 0) == .send("?WATCH={}\n"))
        #expect(!machine.isWatching)
        #expect(
            machine.received(
                .version(GpsdVersion(release: "3.22", protocolMajor: 3, protocolMinor: 14)), now: 0.1, random: 0.5)
                == nil)
        #expect(machine.isWatching)
        #expect(machine.deadline == 2.6)
    }

    @Test func refusesAPeerThatIsNotGpsd() {
        var machine = Self.machine()
        _ = machine.start()
        _ = machine.connected(now: 0)
        #expect(machine.received(.rejected(.notJSON), now: 0.1, random: 0.5) == .disconnect(.notGpsd, retryAt: 1.1))
        var other = Self.machine()
        _ = other.start()
        _ = other.connected(now: 0)
        #expect(
            other.received(.version(GpsdVersion(protocolMajor: 2)), now: 0, random: 0.5)
                == .disconnect(.notGpsd, retryAt: 1))
    }

    @Test func probesThenGivesUpASilentConnection() {
        var machine = Self.machine()
        _ = machine.start()
        _ = machine.connected(now: 0)
        _ = machine.received(.version(GpsdVersion(protocolMajor: 3)), now: 0, random: 0.5)
        machine.dataReceived(now: 1)
        #expect(machine.timerFired(now: 3, random: 0.5) == nil)
        #expect(machine.timerFired(now: 3.5, random: 0.5) == .send("?VERSION;\n"))
        #expect(machine.deadline == 6)
        #expect(machine.timerFired(now: 6, random: 0.5) == .disconnect(.silent, retryAt: 7))
        #expect(machine.timerFired(now: 7, random: 0.5) == .connect)
    }

    /// A draw is a getrandom(2) call: lines and probes of a live connection draw none, only
    /// giving the connection up does (one draw, for the retry's jitter).
    @Test func theRetryJitterIsDrawnOnlyWhenTheConnectionIsGivenUp() {
        var draws = 0
        func draw() -> Double {
            draws += 1
            return 0.5
        }
        var machine = Self.machine()
        _ = machine.start()
        _ = machine.connected(now: 0)
        _ = machine.received(.version(GpsdVersion(protocolMajor: 3)), now: 0, random: draw())
        for second in 1...10 {
            machine.dataReceived(now: Double(second))
            #expect(machine.received(.ignored, now: Double(second), random: draw()) == nil)
            #expect(machine.timerFired(now: Double(second), random: draw()) == nil)
        }
        #expect(machine.timerFired(now: 12.5, random: draw()) == .send("?VERSION;\n"))
        #expect(draws == 0)
        #expect(machine.timerFired(now: 15, random: draw()) == .disconnect(.silent, retryAt: 16))
        #expect(draws == 1)
    }

    @Test func aGreetingThatNeverComesIsSilence() {
        var machine = Self.machine()
        _ = machine.start()
        _ = machine.connected(now: 0)
        #expect(machine.timerFired(now: 5, random: 0.5) == .disconnect(.silent, retryAt: 6))
    }

    @Test func retriesWithGrowingWaitsAndResetsOnSuccess() {
        var machine = Self.machine()
        _ = machine.start()
        #expect(machine.connectFailed(now: 0, random: 0.5) == .retry(at: 1))
        #expect(machine.timerFired(now: 1, random: 0.5) == .connect)
        #expect(machine.connectFailed(now: 1, random: 0.5) == .retry(at: 3))
        _ = machine.timerFired(now: 3, random: 0.5)
        #expect(machine.connectFailed(now: 3, random: 0.5) == .retry(at: 7))
        _ = machine.timerFired(now: 7, random: 0.5)
        #expect(machine.connectFailed(now: 7, random: 0.5) == .retry(at: 15))
        _ = machine.timerFired(now: 15, random: 0.5)
        #expect(machine.connectFailed(now: 15, random: 0.5) == .retry(at: 23))
        _ = machine.timerFired(now: 23, random: 0.5)
        _ = machine.connected(now: 23)
        _ = machine.received(.version(GpsdVersion(protocolMajor: 3)), now: 23, random: 0.5)
        #expect(machine.closed(now: 30, random: 0.5) == .disconnect(.closed, retryAt: 31))
    }

    /// The default waits: 0.5 s growing to 2 s, each 75 % to 125 % of its step.
    @Test(arguments: [(1, 0.0, 0.625), (1, 0.999_999, 0.375), (2, 0.5, 1.0), (3, 0.5, 2.0), (20, 0.5, 2.0)])
    func gpsdRetriesGrowWithJitter(attempt: Int, random: Double, expected: Double) {
        let delay = GpsdConfiguration().reconnect.delay(afterFailures: attempt, unitRandom: random).inSeconds
        #expect(abs(delay - expected) < 1e-5)
    }

    /// gpsd is local: the source retries at least every 2.5 s (2 s with jitter), so it is back
    /// within about 2 s of gpsd's return however long gpsd was away (fault scenario 1).
    @Test(arguments: [1, 3, 5, 20, 64])
    func gpsdIsRetriedAtLeastEveryTwoAndAHalfSeconds(attempt: Int) {
        let delay = GpsdConfiguration().reconnect
        #expect(delay.delay(afterFailures: attempt, unitRandom: 0).inSeconds <= 2.5)
        #expect(delay.delay(afterFailures: attempt, unitRandom: 0.999_999).inSeconds >= 0.375)
    }
}
