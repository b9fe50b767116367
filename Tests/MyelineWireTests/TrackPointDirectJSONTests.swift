import Foundation
import Testing
import TestSupport

@testable import LiveActivity
@_spi(Fuzzing) @testable import MyelineWire

/// ``TrackPoint/directJSON()`` against `JSONEncoder` (``ContentJSON``'s, what ``WireCodec`` used for
/// every point before): the same bytes for every point, hence the same value for every consumer;
/// hostile strings, extreme numbers and absent fields by table, then random points. And the direct
/// reader (``TrackPoint/init(json:at:)``) against `JSONDecoder`: the same point, or refused by both.
struct TrackPointDirectJSONTests {
    static let device = try! DeviceID("van-7")
    static let t0 = Date(timeIntervalSince1970: 1_700_000_000.123)

    static func point(
        activity: String = "0f5c8e1a-3b7d-4c2e-9a6f-1d2e3f4a5b6c", device: DeviceID = device, seq: Int = 1,
        time: Date = t0, latitude: Double = 44.068900166666666, longitude: Double = -121.31485183333333,
        altitude: Double? = 1089.5, speed: Double? = 0.026, course: Double? = 211.4,
        horizontalAccuracy: Double? = 2.4, fix: FixMode? = .fix3D, satellites: Int? = 9
    ) -> TrackPoint {
        TrackPoint(
            device: device, activity: activity, seq: seq, time: time, latitude: latitude, longitude: longitude,
            altitude: altitude, speed: speed, course: course, horizontalAccuracy: horizontalAccuracy, fix: fix,
            satellites: satellites)
    }

    /// Expects the direct bytes to be `JSONEncoder`'s, and both to decode to the same point.
    static func expectSameBytes(_ point: TrackPoint, sourceLocation: SourceLocation = #_sourceLocation) {
        let direct = point.directJSON()
        let reference = try? ContentJSON.encoder.encode(point)
        guard let direct, let reference else {
            Issue.record(
                "direct: \(direct != nil), JSONEncoder: \(reference != nil) for \(point)",
                sourceLocation: sourceLocation)
            return
        }
        #expect(
            String(decoding: direct, as: UTF8.self) == String(decoding: reference, as: UTF8.self),
            sourceLocation: sourceLocation)
        #expect(direct.elementsEqual(reference), sourceLocation: sourceLocation)
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        #expect(
            (try? decoder.decode(TrackPoint.self, from: Data(direct)))
                == (try? decoder.decode(TrackPoint.self, from: reference)), sourceLocation: sourceLocation)
    }

    @Test func theAgentsPointIsWrittenAsJSONEncoderWritesIt() throws {
        let point = Self.point()
        Self.expectSameBytes(point)
        // What a consumer reads back, through WireCodec (the checking decode) and its fast path.
        let bytes = Array(try WireCodec.encode(point))
        #expect(bytes == point.directJSON())
        let decoded = try WireCodec.decode(TrackPoint.self, from: bytes)
        #expect(decoded.latitude == point.latitude && decoded.longitude == point.longitude)
        #expect(decoded.time == Date(timeIntervalSince1970: 1_700_000_000.123))
        #expect(decoded == (try WireCodec.decodeWithJSONDecoder(TrackPoint.self, from: bytes)))
    }

    @Test func absentOptionalsAreOmitted() {
        let bare = Self.point(
            altitude: nil, speed: nil, course: nil, horizontalAccuracy: nil, fix: nil, satellites: nil)
        Self.expectSameBytes(bare)
        #expect(
            bare.directJSON().map { String(decoding: $0, as: UTF8.self) }
                == #"{"activity":"0f5c8e1a-3b7d-4c2e-9a6f-1d2e3f4a5b6c","device":"van-7","latitude":44.068900166666666,"#
                + #""longitude":-121.31485183333334,"schema":"myeline.track.v1","seq":1,"time":1700000000.123}"#)
        // Each optional alone, present or not.
        for mask in 0..<64 {
            Self.expectSameBytes(
                Self.point(
                    altitude: mask & 1 == 0 ? nil : -12, speed: mask & 2 == 0 ? nil : 0,
                    course: mask & 4 == 0 ? nil : 360, horizontalAccuracy: mask & 8 == 0 ? nil : 0.5,
                    fix: mask & 16 == 0 ? nil : .noFix, satellites: mask & 32 == 0 ? nil : 0))
        }
    }

    @Test(arguments: JSONSamples.hostileStrings)
    func hostileStringsAreEscapedAsJSONEncoderEscapesThem(_ text: String) {
        // `activity` is any string to the encoder (the decode after it refuses what is not an id).
        Self.expectSameBytes(Self.point(activity: text))
    }

    @Test(arguments: JSONSamples.extremeNumbers)
    func extremeNumbersAreWrittenAsJSONEncoderWritesThem(_ value: Double) {
        Self.expectSameBytes(Self.point(latitude: value))
        Self.expectSameBytes(Self.point(longitude: value, altitude: value, speed: value, course: value))
        Self.expectSameBytes(Self.point(horizontalAccuracy: value))
        Self.expectSameBytes(Self.point(time: Date(timeIntervalSince1970: value)))
    }

    @Test(arguments: [Int.min, -1, 0, 1, 9, 1_000_000, Int(Int32.max) + 1, Int.max])
    func integersAreWrittenAsJSONEncoderWritesThem(_ value: Int) {
        Self.expectSameBytes(Self.point(seq: value, satellites: value))
    }

    @Test(arguments: JSONSamples.nonFiniteNumbers)
    func nonFiniteNumbersAreLeftToJSONEncoderAndRefusedAsBefore(_ value: Double) {
        #expect(Self.point(latitude: value).directJSON() == nil)
        #expect(Self.point(speed: value).directJSON() == nil)
        #expect(Self.point(satellites: nil).directJSON() != nil)
        #expect(Self.point(time: Date(timeIntervalSince1970: value)).directJSON() == nil)
        // What WireCodec says is JSONEncoder's error, as it was.
        let error = #expect(throws: ActivityError.self) { try WireCodec.encode(Self.point(altitude: value)) }
        #expect(error?.code == .invalidPayload)
        #expect(
            error?.message.hasPrefix("cannot encode myeline.track.v1 payload: 'altitude': Unable to encode") == true)
    }

    @Test func aPointOutOfRangeIsStillRefusedByTheCheckingDecode() {
        let error = #expect(throws: ActivityError.self) { try WireCodec.encode(Self.point(latitude: 91)) }
        #expect(error?.message == "cannot encode myeline.track.v1 payload: 'latitude': 91 is outside -90...90")
    }

    /// Expects ``WireCodec/encode(_:)``'s check of a point (its values, by the decoder's rules)
    /// to say what the receivers' decode of its bytes says: taken by both, or refused by both for
    /// the same key and problem.
    static func expectSameVerdict(
        _ point: TrackPoint, _ bytes: [UInt8], sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let decoded = Result { () throws(ActivityError) in
            try WireCodec.decodeWithJSONDecoder(TrackPoint.self, from: bytes)
        }
        let encoded = Result { () throws(ActivityError) in try WireCodec.encode(point) }
        switch (decoded, encoded) {
        case (.success, .success(let data)):
            #expect(Array(data) == bytes, sourceLocation: sourceLocation)
        case (.failure(let refusal), .failure(let error)):
            #expect(
                error.message.replacing("cannot encode", with: "invalid", maxReplacements: 1) == refusal.message,
                sourceLocation: sourceLocation)
        default:
            Issue.record("decode: \(decoded), encode: \(encoded) for \(point)", sourceLocation: sourceLocation)
        }
    }

    @Test(arguments: [
        point(activity: "Not An Id"), point(activity: ""), point(seq: 0), point(seq: 9_007_199_254_740_992),
        point(latitude: -90.000001), point(longitude: 180.5), point(speed: -0.1), point(course: 360.01),
        point(horizontalAccuracy: -1), point(satellites: -1), point(seq: -5, latitude: 95, satellites: -1),
        point(latitude: 90, longitude: -180, speed: 0, course: 0, horizontalAccuracy: 0, satellites: 0),
    ])
    func theEncodingCheckRefusesWhatTheDecodeRefuses(_ point: TrackPoint) throws {
        Self.expectSameVerdict(point, try #require(point.directJSON()))
    }

    @Test func randomPointsAreWrittenAsJSONEncoderWritesThem() throws {
        var random = SeededGenerator(seed: 24)
        for _ in 0..<5_000 {
            func maybe(_ value: Double) -> Double? { Bool.random(using: &random) ? value : nil }
            let activity = JSONSamples.randomString(using: &random)
            let device = try DeviceID("d\(Int.random(in: 0..<1_000_000, using: &random))")
            let point = Self.point(
                activity: activity, device: device, seq: Int(truncatingIfNeeded: random.next()),
                time: Date(timeIntervalSince1970: JSONSamples.randomDouble(using: &random)),
                latitude: JSONSamples.randomDouble(using: &random), longitude: JSONSamples.randomDouble(using: &random),
                altitude: maybe(JSONSamples.randomDouble(using: &random)),
                speed: maybe(JSONSamples.randomDouble(using: &random)),
                course: maybe(JSONSamples.randomDouble(using: &random)),
                horizontalAccuracy: maybe(JSONSamples.randomDouble(using: &random)),
                fix: Bool.random(using: &random) ? FixMode.allCases.randomElement(using: &random) : nil,
                satellites: Bool.random(using: &random) ? Int.random(in: -5...1_000, using: &random) : nil)
            let bytes = try #require(point.directJSON(), "every number is finite")
            Self.expectSameBytes(point)
            // Most are refused (out of range, not an id): the direct reader must refuse them too.
            WireJSONDirectTests.agree(TrackPoint.self, bytes)
            Self.expectSameVerdict(point, bytes)
        }
    }

    @Test func theDirectReaderTakesEveryPointMyelineWritesAsJSONDecoderDoes() async throws {
        var read = 0
        for sample in try await WireSample.all() where sample.kind == .track {
            #expect(WireJSONDirectTests.agree(TrackPoint.self, Array(sample.data)), "\(sample.name)")
            read += 1
        }
        #expect(read >= 2)
        for mask in 0..<64 {
            let point = Self.point(
                seq: mask + 1, altitude: mask & 1 == 0 ? nil : -12, speed: mask & 2 == 0 ? nil : 0,
                course: mask & 4 == 0 ? nil : 360, horizontalAccuracy: mask & 8 == 0 ? nil : 0.5,
                fix: mask & 16 == 0 ? nil : .noFix, satellites: mask & 32 == 0 ? nil : 0)
            let bytes = try #require(point.directJSON())
            #expect(WireJSONDirectTests.agree(TrackPoint.self, bytes))
            #expect(WireJSONDirectTests.direct(TrackPoint.self, bytes) == point)
        }
    }

    @Test(arguments: InvalidPayload.all.filter { $0.data != nil && $0.kind == .track })
    func theDirectReaderRefusesWhatJSONDecoderRefuses(_ payload: InvalidPayload) throws {
        #expect(!WireJSONDirectTests.agree(TrackPoint.self, Array(try #require(payload.data))))
    }
}
