import Foundation
import Testing

@testable import Location

/// NMEA sentences, one at a time and in epochs.
@Suite struct NMEADecoderTests {
    /// A sentence with its checksum computed.
    static func sentence(_ body: String) -> String {
        "$\(body)*\(String(format: "%02X", body.utf8.reduce(UInt8(0), ^)))"
    }

    static func decode(_ lines: [String], fallbackDate: Date? = nil) -> (
        updates: [LocationUpdate], decoder: NMEADecoder
    ) {
        var decoder = NMEADecoder(fallbackDate: fallbackDate)
        let updates = decoder.decode(Array(lines.joined(separator: "\r\n").utf8))
        return (updates, decoder)
    }

    @Test(arguments: ["GP", "GN", "GL", "GA", "GB", "BD", "QZ"])
    func decodesEveryTalker(talker: String) throws {
        let (updates, _) = Self.decode([
            Self.sentence("\(talker)RMC,092751.000,A,5321.6802,N,00630.3371,W,0.06,31.66,280511,,,A"),
            Self.sentence("\(talker)GGA,092751.000,5321.6802,N,00630.3371,W,1,8,1.03,61.7,M,55.3,M,,"),
        ])
        let fix = try #require(updates.first?.fix)
        #expect(updates.count == 1)
        #expect(abs(fix.latitude - (53 + 21.6802 / 60)) < 1e-12 && abs(fix.longitude + (6 + 30.3371 / 60)) < 1e-12)
        #expect(fix.time == Date(timeIntervalSince1970: 1_306_574_871))
        #expect(
            fix.altitude == 61.7 && fix.satellitesUsed == 8 && fix.quality.hdop == 1.03 && fix.quality.nmeaQuality == 1)
        #expect(abs(fix.speed! - 0.06 * 1852 / 3600) < 1e-12 && fix.course == 31.66)
        #expect(
            fix.mode == .threeDimensional && fix.quality.geoidSeparation == 55.3 && fix.quality.nmeaModeIndicator == "A"
        )
    }

    @Test func joinsGNSGSAVTGAndGSTIntoTheEpoch() throws {
        let (updates, _) = Self.decode([
            Self.sentence("GNRMC,120000.50,A,4807.038,N,01131.000,E,,,010120,,,D"),
            Self.sentence("GNGNS,120000.50,4807.038,N,01131.000,E,DAN,11,0.9,545.4,47.0,,"),
            Self.sentence("GNGSA,A,2,01,02,03,,,,,,,,,,1.5,0.9,1.2"),
            Self.sentence("GNGSA,A,2,65,66,,,,,,,,,,,1.5,0.9,1.2"),
            Self.sentence("GNVTG,54.7,T,34.4,M,5.5,N,10.2,K,A"),
            Self.sentence("GNGST,120000.50,1.0,,,,3.0,4.0,2.0"),
        ])
        let fix = try #require(updates.first?.fix)
        #expect(fix.time == Date(timeIntervalSince1970: 1_577_880_000.5))
        #expect(
            fix.mode == .twoDimensional && fix.satellitesUsed == 11 && fix.quality.pdop == 1.5
                && fix.quality.vdop == 1.2)
        #expect(fix.course == 54.7 && abs(fix.speed! - 5.5 * 1852 / 3600) < 1e-12 && fix.horizontalAccuracy == 5)
    }

    @Test func datesTimeOnlyEpochsFromTheNextRMCAndAcrossMidnight() throws {
        let (updates, _) = Self.decode([
            Self.sentence("GPGGA,235959.00,4807.038,N,01131.000,E,1,08,0.9,545.4,M,47.0,M,,"),
            Self.sentence("GPRMC,000000.00,A,4807.038,N,01131.000,E,,,020120,,,A"),
            Self.sentence("GPGGA,000001.00,4807.038,N,01131.000,E,1,08,0.9,545.4,M,47.0,M,,"),
            Self.sentence("GPRMC,000001.00,A,4807.038,N,01131.000,E,,,020120,,,A"),
        ])
        #expect(
            updates.compactMap(\.fix?.time)
                == [1_577_923_199, 1_577_923_200, 1_577_923_201].map { Date(timeIntervalSince1970: $0) })
    }

    @Test func usesTheFallbackDateOnlyWhenAFileHasNoDate() {
        let lines = [
            Self.sentence("GPGGA,120000,4807.038,N,01131.000,E,1,08,0.9,545.4,M,47.0,M,,"),
            Self.sentence("GPGGA,120001,4807.038,N,01131.000,E,1,08,0.9,545.4,M,47.0,M,,"),
        ]
        let (none, decoder) = Self.decode(lines)
        #expect(none.isEmpty && decoder.statistics.dropped[.missingDate] == 2)
        let (dated, _) = Self.decode(lines, fallbackDate: Date(timeIntervalSince1970: 1_577_836_800 + 3600))
        #expect(
            dated.compactMap(\.fix?.time) == [
                Date(timeIntervalSince1970: 1_577_880_000), Date(timeIntervalSince1970: 1_577_880_001),
            ])
    }

    @Test(arguments: [
        ("GPRMC,120000,V,4807.038,N,01131.000,E,,,010120,,,N", "status V"),
        ("GPGGA,120000,4807.038,N,01131.000,E,0,00,,,M,,M,,", "quality 0"),
        ("GNGNS,120000,4807.038,N,01131.000,E,NNN,00,,,,,", "modes N"),
        ("GPGLL,4807.038,N,01131.000,E,120000,V,N", "GLL status V"),
        ("GPRMC,120000,V,,,,,,,010120,,,N", "no position"),
    ])
    func noFixIsAnUpdateWithoutLocation(body: String, why: String) {
        let (updates, _) = Self.decode([Self.sentence(body)], fallbackDate: Date(timeIntervalSince1970: 1_577_836_800))
        #expect(updates.count == 1, "\(why)")
        #expect(updates.allSatisfy { $0.fix == nil && $0.status == .noFix }, "\(why)")
    }

    @Test func rejectsCountsAndGoesOn() throws {
        let good = Self.sentence("GPRMC,120000,A,4807.038,N,01131.000,E,,,010120,,,A")
        let next = Self.sentence("GPRMC,120001,A,4807.038,N,01131.000,E,,,010120,,,A")
        let (updates, decoder) = Self.decode([
            "$GPRMC,120000,A,4807.038,N,01131.000,E,,,010120,,,A*00",  // bad checksum
            "$GPGGA,120000,4807.0",  // truncated
            "\u{01}\u{02}\u{FF}\u{B5}b",  // binary
            "hello",  // unknown
            "$GPRMC" + String(repeating: ",1", count: 200) + "*00",  // too long
            Self.sentence("GPRMC,12x000,A,4807.038,N,01131.000,E,,,010120,,,A"),  // bad time
            Self.sentence("GPRMC,120000,A,4807.038,Q,01131.000,E,,,010120,,,A"),  // bad hemisphere
            Self.sentence("GPGSV,1,1,00"), Self.sentence("PUBX,00,foo"),  // ignored
            "# comment", "",
            good, next,
        ])
        #expect(updates.compactMap(\.fix).count == 2)
        #expect(
            decoder.statistics.rejected == [
                .badChecksum: 1, .truncated: 1, .binary: 1, .unknown: 1, .tooLong: 1, .invalidField: 2,
            ])
        #expect(decoder.statistics.linesIgnored == 3)
    }

    @Test func findsSentencesAfterBinaryJunkOnTheSameLine() throws {
        let line = "\u{B5}b\u{01}\u{07}junk" + Self.sentence("GPRMC,120000,A,4807.038,N,01131.000,E,,,010120,,,A")
        let (updates, decoder) = Self.decode([line])
        #expect(updates.compactMap(\.fix).count == 1)
        #expect(decoder.statistics.rejected == [.binary: 1])
    }
}

/// Every decoder survives garbage: random bytes and real lines cut and flipped at random.
@Suite struct GarbageTests {
    /// A deterministic generator, so that a failure can be replayed.
    struct SplitMix: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    static func mangle(_ bytes: [UInt8], seed: UInt64) -> [UInt8] {
        var random = SplitMix(state: seed)
        var output = bytes
        for _ in 0..<(bytes.count / 20) {
            let index = Int.random(in: 0..<output.count, using: &random)
            switch Int.random(in: 0..<4, using: &random) {
            case 0: output[index] = UInt8.random(in: 0...255, using: &random)
            case 1: output.remove(at: index)
            case 2: output.insert(UInt8.random(in: 0...255, using: &random), at: index)
            default: output[index] = UInt8(ascii: "\n")
            }
        }
        return output
    }

    @Test(arguments: [1, 2, 3, 4] as [UInt64])
    func nmeaSurvivesMangledLogs(seed: UInt64) throws {
        for log in TestData.gpsdLogs {
            var decoder = NMEADecoder()
            let updates = decoder.decode(Self.mangle(try TestData.bytes("gpsd-logs/\(log)"), seed: seed))
            #expect(
                updates.allSatisfy {
                    $0.fix.map { $0.latitude.isFinite && abs($0.latitude) <= 90 && abs($0.longitude) <= 180 } ?? true
                })
            #expect(decoder.statistics.totalRejected > 0)
        }
    }

    @Test(arguments: [1, 2, 3, 4] as [UInt64])
    func gpsdJSONSurvivesMangledCaptures(seed: UInt64) throws {
        for log in TestData.gpsdLogs.prefix(6) {
            var decoder = GpsdDecoder()
            let updates = decoder.decode(Self.mangle(try TestData.bytes("gpsd-logs/\(log).chk"), seed: seed))
            #expect(updates.allSatisfy { $0.fix.map { $0.latitude.isFinite && $0.longitude.isFinite } ?? true })
            #expect(decoder.statistics.totalRejected > 0)
        }
    }

    @Test(arguments: Array(1...40) as [UInt64])
    func gpxSurvivesMangledFiles(seed: UInt64) throws {
        var decoder = GPXDecoder()
        let points = decoder.decode(Self.mangle(try TestData.bytes("gpx/around-visnjan-with-car.gpx"), seed: seed))
        #expect(points.count <= 104)
    }

    @Test func randomBytesGiveNothingButCounts() {
        var random = SplitMix(state: 42)
        let bytes = (0..<100_000).map { _ in UInt8.random(in: 0...255, using: &random) }
        var nmea = NMEADecoder()
        #expect(nmea.decode(bytes).allSatisfy { $0.fix == nil })
        var gpsd = GpsdDecoder()
        #expect(gpsd.decode(bytes).isEmpty)
        #expect(nmea.statistics.totalRejected > 0 && gpsd.statistics.totalRejected > 0)
    }
}
