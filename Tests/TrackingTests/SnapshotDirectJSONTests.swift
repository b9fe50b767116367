import Foundation
import LiveActivity
import Testing
import Tracking

import enum TestSupport.JSONSamples

/// ``TripAccumulator/Snapshot/directJSON()``, the trip totals the agent saves with its record at
/// every fix, against `JSONEncoder` (what it used before): the bytes it gives with sorted keys,
/// which `JSONDecoder` reads back as the same snapshot; refused where `JSONEncoder` refuses.
@Suite("TripAccumulator.Snapshot: direct JSON")
struct SnapshotDirectJSONTests {
    /// Expects the direct bytes to be `JSONEncoder`'s with sorted keys, and to read back as `snapshot`
    /// (when `decodes`: a destination out of range is written, and refused when read, by both).
    static func expectSameBytes(
        _ snapshot: TripAccumulator.Snapshot, decodes: Bool = true, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let reference = try encoder.encode(snapshot)
        let direct = try #require(snapshot.directJSON(), sourceLocation: sourceLocation)
        #expect(
            String(decoding: direct, as: UTF8.self) == String(decoding: reference, as: UTF8.self),
            sourceLocation: sourceLocation)
        guard decodes else { return }
        #expect(
            try JSONDecoder().decode(TripAccumulator.Snapshot.self, from: Data(direct)) == snapshot,
            sourceLocation: sourceLocation)
    }

    static let full = TripAccumulator.Snapshot(
        distance: 1_434.5, elapsed: 60, paused: true, lastCounted: Coordinate(latitude: 45.2735, longitude: 13.7142),
        lastCountedAccuracy: 2.4, startDistance: 3_000,
        destination: .init(name: "Depot North", latitude: 45.3, longitude: 13.6), status: "Out for delivery",
        relevanceScore: 80)

    @Test func aNewTripAndAFullOneAreWrittenAsJSONEncoderWritesThem() throws {
        try Self.expectSameBytes(TripAccumulator.Snapshot())
        #expect(
            TripAccumulator.Snapshot().directJSON().map { String(decoding: $0, as: UTF8.self) }
                == #"{"distance":0,"elapsed":0,"paused":false}"#)
        try Self.expectSameBytes(Self.full)
        #expect(
            Self.full.directJSON().map { String(decoding: $0, as: UTF8.self) }
                == #"{"destination":{"latitude":45.3,"longitude":13.6,"name":"Depot North"},"distance":1434.5,"#
                + #""elapsed":60,"lastCounted":{"latitude":45.2735,"longitude":13.7142},"lastCountedAccuracy":2.4,"#
                + #""paused":true,"relevanceScore":80,"startDistance":3000,"status":"Out for delivery"}"#)
    }

    @Test func eachOptionalPresentOrNot() throws {
        for mask in 0..<64 {
            var snapshot = Self.full
            if mask & 1 == 0 { snapshot.lastCounted = nil }
            if mask & 2 == 0 { snapshot.lastCountedAccuracy = nil }
            if mask & 4 == 0 { snapshot.startDistance = nil }
            if mask & 8 == 0 { snapshot.destination = nil }
            if mask & 16 == 0 { snapshot.status = nil }
            if mask & 32 == 0 { snapshot.relevanceScore = nil }
            snapshot.paused = mask % 3 == 0
            try Self.expectSameBytes(snapshot)
        }
    }

    @Test(arguments: JSONSamples.hostileStrings)
    func hostileStringsAreEscapedAsJSONEncoderEscapesThem(_ text: String) throws {
        var snapshot = Self.full
        snapshot.status = text
        snapshot.destination?.name = text
        try Self.expectSameBytes(snapshot)
    }

    @Test(arguments: JSONSamples.extremeNumbers)
    func extremeNumbersAreWrittenAsJSONEncoderWritesThem(_ value: Double) throws {
        try Self.expectSameBytes(
            .init(
                distance: value, elapsed: -value, lastCounted: Coordinate(latitude: value, longitude: value),
                lastCountedAccuracy: value, startDistance: value, relevanceScore: value))
        var destination = Self.full
        destination.destination?.latitude = value
        destination.destination?.longitude = value
        try Self.expectSameBytes(destination, decodes: abs(value) <= 90)
    }

    @Test(arguments: JSONSamples.nonFiniteNumbers)
    func nonFiniteNumbersAreRefusedAsJSONEncoderRefusesThem(_ value: Double) {
        var snapshots: [TripAccumulator.Snapshot] = []
        for field in 0..<7 {
            var snapshot = Self.full
            switch field {
            case 0: snapshot.distance = value
            case 1: snapshot.elapsed = value
            case 2: snapshot.lastCounted?.longitude = value
            case 3: snapshot.lastCountedAccuracy = value
            case 4: snapshot.startDistance = value
            case 5: snapshot.destination?.latitude = value
            default: snapshot.relevanceScore = value
            }
            snapshots.append(snapshot)
        }
        for snapshot in snapshots {
            #expect(snapshot.directJSON() == nil)
            #expect(throws: EncodingError.self) { try JSONEncoder().encode(snapshot) }
        }
    }

    @Test func randomSnapshotsAreWrittenAsJSONEncoderWritesThem() throws {
        var random = SeededGenerator(state: 30)
        for _ in 0..<5_000 {
            func maybe<T>(_ value: T) -> T? { Bool.random(using: &random) ? value : nil }
            func double() -> Double { JSONSamples.randomDouble(using: &random) }
            let snapshot = TripAccumulator.Snapshot(
                distance: double(), elapsed: double(), paused: Bool.random(using: &random),
                lastCounted: maybe(Coordinate(latitude: double(), longitude: double())),
                lastCountedAccuracy: maybe(double()), startDistance: maybe(double()),
                destination: maybe(
                    .init(
                        name: JSONSamples.randomString(using: &random),
                        latitude: .random(in: -90...90, using: &random),
                        longitude: .random(in: -180...180, using: &random))),
                status: maybe(JSONSamples.randomString(using: &random)), relevanceScore: maybe(double()))
            try Self.expectSameBytes(snapshot)
        }
    }
}
