import Foundation
import Testing

@testable import Location

/// The ways the readers once disagreed with gpsd, each on a minimal hand-written input (issue 20).
@Suite struct GpsdRuleTests {
    static let sentence = NMEADecoderTests.sentence
    /// 2024-03-15, the date of the inputs below.
    static let day = Date(timeIntervalSince1970: 1_710_460_800)

    static func gga(
        _ time: String, minutes: Int = 0, quality: Int = 1, satellites: String = "08", talker: String = "GP"
    )
        -> String
    {
        sentence(
            "\(talker)GGA,\(time),5130.\(String(format: "%04d", minutes * 10)),N,00010.0000,W,\(quality),\(satellites),1.0,50.0,M,47.0,M,,"
        )
    }

    static func rmc(_ time: String, minutes: Int = 0, status: String = "A", mode: String = "A") -> String {
        sentence(
            "GPRMC,\(time),\(status),5130.\(String(format: "%04d", minutes * 10)),N,00010.0000,W,0.0,0.0,150324,,,\(mode)"
        )
    }

    static func replay(_ lines: [String], now: Date = Date(timeIntervalSince1970: 1_800_000_000)) async throws
        -> [LocationUpdate]
    {
        let path = try FileSourceTests.temporaryFile(
            Array((lines.joined(separator: "\r\n") + "\r\n").utf8), name: "rule.nmea")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let source = try FileSource(path: path, options: FileSource.Options(pacing: .asFastAsPossible), now: { now })
        return try await FileSourceTests.collect(source)
    }

    // MARK: GGA with fewer than 3 satellites used

    @Test(arguments: ["GP", "GN", "GL", "GA", "BD"])
    func aGGAWithFewerThanThreeSatellitesIsNoFix(talker: String) {
        // gpsd 3.22, fed these lines: mode 3, 1, 1, 1, 2 (quality 1 each time).
        let (updates, _) = NMEADecoderTests.decode(
            [
                Self.gga("120000", minutes: 0, satellites: "08", talker: talker),
                Self.gga("120001", minutes: 1, satellites: "02", talker: talker),
                Self.gga("120002", minutes: 2, satellites: "00", talker: talker),
                Self.gga("120003", minutes: 3, satellites: "", talker: talker),
                Self.gga("120004", minutes: 4, satellites: "03", talker: talker),
            ], fallbackDate: Self.day)
        #expect(updates.count == 5)
        #expect(updates.map { $0.fix != nil } == [true, false, false, false, true])
        #expect(updates[4].fix?.mode == .twoDimensional, "3 satellites: 2D, as gpsd says")
    }

    @Test func aGSAWithA2DOr3DFixKeepsTheFixOfAGGAWithoutSatellites() {
        // The Garmin 25LP says 00 satellites in its GGA and lists 3 in its GSA; gpsd takes the GSA's mode.
        let (updates, _) = NMEADecoderTests.decode(
            [
                Self.rmc("120326"), Self.gga("120326", satellites: "00"),
                Self.sentence("GPGSA,A,2,01,03,,14,,,,,,,,,3.1,3.1,"),
            ])
        #expect(updates.count == 1 && updates[0].fix?.mode == .twoDimensional && updates[0].fix?.satellitesUsed == 3)
    }

    @Test func perConstellationCountsOfOneEpochAddUp() {
        // SiRFstar V: a GPGGA and a GLGGA each count their own constellation's satellites.
        let (updates, _) = NMEADecoderTests.decode(
            [
                Self.rmc("120000"), Self.gga("120000", satellites: "02"),
                Self.gga("120000", satellites: "02", talker: "GL"),
            ])
        #expect(updates.count == 1 && updates[0].fix?.satellitesUsed == 4)
    }

    @Test func aGGARepeatingItsTalkersTimeIsIgnored() {
        // gpsd's "latch mode": a receiver whose clock stopped repeats its time; the first report stands.
        let (updates, _) = NMEADecoderTests.decode(
            [Self.rmc("120000"), Self.gga("120000", minutes: 0), Self.gga("120000", minutes: 5)])
        #expect(updates.count == 1 && updates[0].fix?.latitude == 51.5)
    }

    // MARK: gpspipe -r

    @Test func aCaptureStartingWithGpsdsGreetingIsNMEA() async throws {
        let greeting = [
            #"{"class":"VERSION","release":"3.22","rev":"3.22","proto_major":3,"proto_minor":14}"#,
            #"{"class":"DEVICES","devices":[{"class":"DEVICE","path":"/dev/ttyACM0","driver":"NMEA0183"}]}"#,
            #"{"class":"WATCH","enable":true,"json":false,"nmea":false,"raw":1}"#,
        ]
        let lines = greeting + [Self.rmc("120000", minutes: 0), Self.rmc("120001", minutes: 1)]
        #expect(FileFormat.detect(Array(lines.joined(separator: "\n").utf8)) == .nmea)
        let updates = try await Self.replay(lines)
        #expect(updates.compactMap(\.fix).count == 2)
        // gpsd's greeting alone is still a gpsd capture, and so is one with reports.
        #expect(FileFormat.detect(Array(greeting.joined(separator: "\n").utf8)) == .gpsdJSON)
        #expect(
            FileFormat.detect(Array((greeting + [#"{"class":"TPV","mode":1}"#]).joined(separator: "\n").utf8))
                == .gpsdJSON)
    }

    // MARK: Fixes without a date

    @Test func aReplayDatesAFileWithoutDatesFromItsStart() async throws {
        // GGA and GLL only: no RMC or ZDA ever gives the date; the replay starts on 2027-01-15.
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        let updates = try await Self.replay(
            [Self.gga("235959", minutes: 0), Self.gga("000000", minutes: 1), Self.gga("000001", minutes: 2)], now: start
        )
        let startDay = (start.timeIntervalSince1970 / 86_400).rounded(.down) * 86_400
        #expect(
            updates.compactMap(\.fix?.time.timeIntervalSince1970) == [
                startDay + 86_399, startDay + 86_400, startDay + 86_401,
            ])
        // The same from GLL alone.
        let gll = try await Self.replay(
            (0..<3).map { Self.sentence("GPGLL,5130.000\($0),N,00010.0000,W,12000\($0),A,A") }, now: start)
        #expect(gll.compactMap(\.fix?.time.timeIntervalSince1970) == (0..<3).map { startDay + 43_200 + Double($0) })
    }

    // MARK: Time stepping backwards

    @Test func aSecondSessionEarlierThanTheFirstLosesNoFix() async throws {
        // Ten fixes from 12:00:00, then the receiver restarts with ten from 11:00:00.
        let first = (0..<10).map { Self.rmc(String(format: "1200%02d", $0), minutes: $0) }
        let second = (0..<10).map { Self.rmc(String(format: "1100%02d", $0), minutes: 20 + $0) }
        let updates = try await Self.replay(first + second)
        #expect(updates.compactMap(\.fix).count == 20)
    }

    @Test func oneWildTimeBackwardsIsDropped() async throws {
        let lines = [Self.rmc("120000"), Self.rmc("120001"), Self.rmc("110000"), Self.rmc("120002")]
        let updates = try await Self.replay(lines)
        #expect(
            updates.compactMap(\.fix?.time).map { Int($0.timeIntervalSince1970) % 86_400 } == [43_200, 43_201, 43_202])
    }

    // MARK: The first fix of a log

    @Test func aLogWhoseOnlyFixIsOneGLLKeepsIt() async throws {
        // The first 4 lines of neo-m8n.log: GLONASS satellites in view, then one GLL fix, no date.
        let updates = try await Self.replay([
            Self.sentence("GLGSV,1,1,02,66,37,078,27,67,62,349,26"),
            Self.sentence("GNGLL,4404.14066,N,12118.85481,W,171925.00,A,A"),
        ])
        #expect(updates.compactMap(\.fix).count == 1)
    }

    @Test func aLogEndingAfterTheEpochsLastPositionSentenceKeepsIt() async throws {
        // GGA, RMC and ZDA a second, ending after the third RMC: gpsd reports the epoch at its RMC.
        var lines: [String] = []
        for second in 0..<3 {
            let time = String(format: "1200%02d", second)
            lines += [Self.gga(time, minutes: second), Self.rmc(time, minutes: second)]
            if second < 2 { lines.append(Self.sentence("GPZDA,\(time),15,03,2024,,")) }
        }
        let updates = try await Self.replay(lines)
        #expect(updates.compactMap(\.fix).count == 3)
    }

    @Test func aLogCutBeforeTheEpochsLastPositionSentenceDropsIt() async throws {
        // RMC then GGA a second; the last epoch has only its RMC: gpsd never reports it.
        var lines: [String] = []
        for second in 0..<3 {
            let time = String(format: "1200%02d", second)
            lines.append(Self.rmc(time, minutes: second))
            if second < 2 { lines.append(Self.gga(time, minutes: second)) }
        }
        let updates = try await Self.replay(lines)
        #expect(updates.compactMap(\.fix).count == 2)
    }

    // MARK: Simulated fixes

    @Test func simulatedFixesAreNeverPublished() async throws {
        // A simulator's mode indicator in RMC, GGA quality 8, GNS modes S: each epoch ends with its RMC.
        let updates = try await Self.replay([
            Self.gga("120000", minutes: 0), Self.rmc("120000", minutes: 0, mode: "S"),
            Self.gga("120001", minutes: 1, quality: 8), Self.rmc("120001", minutes: 1),
            Self.sentence("GNGNS,120002,5130.0020,N,00010.0000,W,SS,08,1.0,50.0,47.0,,"),
            Self.gga("120002", minutes: 2), Self.rmc("120002", minutes: 2),
        ])
        #expect(updates.count == 3 && updates.allSatisfy { $0.fix == nil && $0.status == .noFix })
        var decoder = GpsdDecoder()
        var gate = FixGate()
        var statistics = SourceStatistics()
        let tpv = #"{"class":"TPV","status":8,"mode":3,"time":"2024-03-15T12:00:00.000Z","lat":51.5,"lon":-0.2}"#
        let passed = gate.admitAll(decoder.decode(Array(tpv.utf8)), statistics: &statistics)
        #expect(passed.count == 1 && passed[0].fix == nil && statistics.dropped == [.simulated: 1])
    }

    // MARK: SKY before or after TPV

    /// A gpsd session of ten epochs whose SKY says 4, 5, ... 13 satellites used, sent before or after
    /// the epoch's TPV.
    static func session(skyFirst: Bool, skyTimes: Bool = false) -> [UInt8] {
        var lines = [GpsdDecoderTests.version]
        for epoch in 0..<10 {
            let time = "\"2024-03-15T12:00:\(String(format: "%02d", epoch)).000Z\""
            let sky = #"{"class":"SKY","hdop":1.0,"uSat":\#(4 + epoch)\#(skyTimes ? ",\"time\":\(time)" : "")}"#
            let tpv = GpsdDecoderTests.tpv(#""mode":3,"time":\#(time),"lat":51.5,"lon":-0.\#(epoch + 1)"#)
            lines += skyFirst ? [sky, tpv] : [tpv, sky]
        }
        return Array(lines.joined(separator: "\n").utf8)
    }

    @Test(arguments: [true, false])
    func satelliteCountsJoinTheirOwnEpoch(skyFirst: Bool) {
        var decoder = GpsdDecoder()
        let fixes = decoder.decode(Self.session(skyFirst: skyFirst)).compactMap(\.fix)
        #expect(fixes.map(\.satellitesUsed) == (4..<14).map { $0 })
    }
}
