import Foundation
import Testing

@testable import Location

/// GPX 1.0 and 1.1 files from gpxpy's tests, decoded and replayed.
@Suite struct GPXTests {
    struct Expected: Sendable, CustomTestStringConvertible {
        var file: String
        var count: Int
        var first: (Double, Double, Double?, String?)
        var last: (Double, Double, Double?, String?)
        var timed: Int
        var testDescription: String { file }
    }

    static let files: [Expected] = [
        Expected(
            file: "around-visnjan-with-car.gpx", count: 104,
            first: (45.2735188510, 13.7142099626, 211.15, "2020-12-18T06:15:50Z"),
            last: (45.2733349521, 13.7139970623, 210.67, "2020-12-18T06:24:24Z"), timed: 104),
        Expected(
            file: "cerknicko-jezero.gpx", count: 296,
            first: (45.772175035, 14.357659249, 542.320923, "2010-08-05T14:23:59Z"),
            last: (45.790873384, 14.304442042, 562.508545, "2010-08-05T16:23:49Z"), timed: 296),
        Expected(
            file: "cerknicko-without-times.gpx", count: 296, first: (45.772175035, 14.357659249, 542.320923, nil),
            last: (45.790873384, 14.304442042, 562.508545, "2010-08-05T16:23:49Z"), timed: 5),
        Expected(
            file: "gpx1.0_with_all_fields.gpx", count: 1, first: (10.1, -20.2, 11.1, "2013-01-01T12:00:04Z"),
            last: (10.1, -20.2, 11.1, "2013-01-01T12:00:04Z"), timed: 1),
        Expected(
            file: "gpx1.1_with_all_fields.gpx", count: 1, first: (10.1, -20.2, 11.1, "2013-01-01T12:00:04Z"),
            last: (10.1, -20.2, 11.1, "2013-01-01T12:00:04Z"), timed: 1),
        Expected(
            file: "gpx1.1_with_extensions.gpx", count: 1, first: (12.3, 45.6, nil, nil), last: (12.3, 45.6, nil, nil),
            timed: 0),
        Expected(
            file: "korita-zbevnica.gpx", count: 871, first: (45.380600095, 14.144491442, 733.623291, nil),
            last: (45.452453708, 14.018215053, 770.634033, "2010-10-03T13:19:31Z"), timed: 513),
        Expected(
            file: "route.gpx", count: 55, first: (45.2787641494, 13.726695478, nil, nil),
            last: (45.2787783011, 13.7266552448, nil, nil),
            timed: 0),
        Expected(
            file: "track-with-empty-segment.gpx", count: 9,
            first: (50.7772126, 6.0819695, 191.5999756, "2013-07-06T17:26:26Z"),
            last: (50.7776715, 6.0827203, 191.5999756, "2013-07-06T17:27:42Z"), timed: 9),
        Expected(
            file: "track-with-extremes.gpx", count: 25, first: (45.484591697, 13.507589780, 10, nil),
            last: (45.480369370, 13.520498463, 22, nil), timed: 0),
        Expected(
            file: "track_with_speed.gpx", count: 3, first: (52.330848, 5.541371, 48.962041, "2009-03-02T14:05:52Z"),
            last: (52.331014, 5.541333, 53.381747, "2009-03-02T14:06:05Z"), timed: 3),
        Expected(
            file: "unicode_with_bom.gpx", count: 1, first: (43.309634, 3.515386, -14.6, "2016-05-27T10:08:47.800Z"),
            last: (43.309634, 3.515386, -14.6, "2016-05-27T10:08:47.800Z"), timed: 1),
    ]

    static func date(_ text: String?) -> Date? {
        guard let text else { return nil }
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions =
            text.contains(".") ? [.withInternetDateTime, .withFractionalSeconds] : [.withInternetDateTime]
        return formatter.date(from: text)
    }

    static func check(_ point: GPXPoint, _ expected: (Double, Double, Double?, String?)) {
        #expect(abs(point.latitude - expected.0) < 1e-12)
        #expect(abs(point.longitude - expected.1) < 1e-12)
        #expect(point.elevation == expected.2)
        if let time = date(expected.3) {
            #expect(abs((point.time?.timeIntervalSince1970 ?? 0) - time.timeIntervalSince1970) < 1e-6)
        } else {
            #expect(point.time == nil)
        }
    }

    @Test(arguments: files)
    func decodesPointCountsEndsAndTimes(expected: Expected) throws {
        var decoder = GPXDecoder()
        let points = decoder.decode(try TestData.bytes("gpx/\(expected.file)"))
        #expect(points.count == expected.count)
        #expect(points.filter { $0.time != nil }.count == expected.timed)
        #expect(decoder.xmlError == nil)
        #expect(decoder.statistics.totalRejected == 0)
        try #require(!points.isEmpty)
        Self.check(points[0], expected.first)
        Self.check(points[points.count - 1], expected.last)
    }

    @Test func readsGPX10SpeedCourseAndQuality() throws {
        var decoder = GPXDecoder()
        let point = try #require(decoder.decode(try TestData.bytes("gpx/gpx1.0_with_all_fields.gpx")).first)
        let fix = point.fix(time: point.time!)
        #expect(point.speed != nil || point.course != nil || point.hdop != nil)
        #expect(fix.latitude == 10.1 && fix.altitude == 11.1)
    }

    @Test func replaysATrackAtItsRecordedPace() async throws {
        let clock = RecordingClock()
        let source = try FileSource(path: TestData.path("gpx/track_with_speed.gpx"), clock: clock)
        var fixes: [LocationFix] = []
        for try await update in source.updates { fixes.append(try #require(update.fix)) }
        #expect(fixes.count == 3)
        let times = fixes.map(\.time.timeIntervalSince1970)
        // Due when their recorded times say, relative to the first.
        #expect(clock.deadlines.map(\.seconds) == times.map { $0 - times[0] })
        #expect(source.statistics.fixes == 3)
    }

    @Test func replaysUntimedPointsAtTheFixedInterval() async throws {
        let clock = RecordingClock()
        let stamp = Date(timeIntervalSince1970: 1_800_000_000)
        let source = try FileSource(
            path: TestData.path("gpx/route.gpx"), options: FileSource.Options(untimedInterval: .seconds(2)),
            clock: clock,
            now: { stamp })
        var fixes: [LocationFix] = []
        for try await update in source.updates { fixes.append(try #require(update.fix)) }
        #expect(fixes.count == 55)
        #expect(clock.deadlines.map(\.seconds) == (0..<55).map { Double($0) * 2 })
        // Untimed points are stamped with the time they are replayed at.
        #expect(fixes.allSatisfy { $0.time == stamp })
    }

    @Test func keepsThePointsBeforeAnXMLError() throws {
        var bytes = try TestData.bytes("gpx/track_with_speed.gpx")
        bytes = Array(bytes.prefix(bytes.count * 3 / 4)) + Array("<<<garbage".utf8)
        var decoder = GPXDecoder()
        let points = decoder.decode(bytes)
        #expect(points.count >= 1 && points.count <= 3)
        #expect(decoder.xmlError != nil)
        #expect(decoder.statistics.rejected[.invalidXML] == 1)
    }

    @Test func rejectsPointsWithUnreadableValues() {
        let text = """
            <gpx version="1.1"><trk><trkseg>
            <trkpt lat="nan" lon="1"><time>2020-01-01T00:00:00Z</time></trkpt>
            <trkpt lat="1" lon="2"><ele>high</ele></trkpt>
            <trkpt lat="1" lon="2"><time>yesterday</time></trkpt>
            <trkpt lat="1.5" lon="2.5"><time>2020-01-01T00:00:01+01:00</time></trkpt>
            </trkseg></trk></gpx>
            """
        var decoder = GPXDecoder()
        let points = decoder.decode(Array(text.utf8))
        #expect(points.count == 1)
        #expect(points.first?.time == Date(timeIntervalSince1970: 1_577_833_201))
        #expect(decoder.statistics.rejected[.invalidField] == 3)
    }
}
