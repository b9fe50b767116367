import Foundation
import Testing

@testable import Location

/// The fix gate as a table: input fixes, configuration, and what passes or why it is dropped.
@Suite struct FixGateTests {
    static let t0 = Date(timeIntervalSince1970: 1_700_000_000)

    static func update(_ latitude: Double, _ longitude: Double, at seconds: Double = 0) -> LocationUpdate {
        LocationUpdate(fix: LocationFix(time: t0 + seconds, latitude: latitude, longitude: longitude))
    }

    struct Row: Sendable, CustomTestStringConvertible {
        var name: String
        var configuration = FixGate.Configuration()
        var inputs: [LocationUpdate]
        /// nil: passes; otherwise the reason it is dropped.
        var expected: [FixDropReason?]
        var testDescription: String { name }
    }

    static let rows: [Row] = [
        Row(name: "a good fix passes", inputs: [update(45, 13)], expected: [nil]),
        Row(name: "NaN latitude", inputs: [update(.nan, 13)], expected: [.nonFinite]),
        Row(name: "infinite longitude", inputs: [update(45, -.infinity)], expected: [.nonFinite]),
        Row(name: "latitude above 90", inputs: [update(90.0001, 13)], expected: [.latitudeOutOfRange]),
        Row(name: "latitude -90 is a pole", inputs: [update(-90, 13)], expected: [nil]),
        Row(name: "longitude below -180", inputs: [update(45, -180.5)], expected: [.longitudeOutOfRange]),
        Row(name: "null island", inputs: [update(0, 0)], expected: [.nullIsland]),
        Row(
            name: "null island allowed", configuration: FixGate.Configuration(allowsNullIsland: true),
            inputs: [update(0, 0)],
            expected: [nil]),
        Row(name: "zero latitude alone is fine", inputs: [update(0, 13)], expected: [nil]),
        // A gpsd "time":-1e300 once made the rollover correction loop for ever.
        Row(name: "a time 1e300 s before 1970", inputs: [update(45, 13, at: -1e300)], expected: [.beforeGPSEpoch]),
        Row(
            name: "a time just before GPS time began", inputs: [update(45, 13, at: -1_384_035_201)],
            expected: [.beforeGPSEpoch]),
        Row(
            name: "no rollover correction, no GPS epoch check", configuration: .recording,
            inputs: [update(45, 13, at: -1e300)], expected: [nil]),
        Row(
            name: "duplicate time", inputs: [update(45, 13, at: 0), update(45, 13, at: 0)],
            expected: [nil, .duplicateTime]),
        Row(
            name: "duplicates allowed", configuration: FixGate.Configuration(dropsDuplicateTimes: false),
            inputs: [update(45, 13, at: 0), update(45, 13, at: 0)], expected: [nil, nil]),
        Row(
            name: "backwards time", inputs: [update(45, 13, at: 10), update(45, 13, at: 9), update(45, 13, at: 11)],
            expected: [nil, .timeWentBackwards, nil]),
        Row(
            name: "a new timeline after five backward fixes",
            inputs: [update(45, 13, at: 100)] + (1...5).map { update(45, 13, at: Double($0)) } + [
                update(45, 13, at: 6)
            ],
            expected: [nil, .timeWentBackwards, .timeWentBackwards, .timeWentBackwards, .timeWentBackwards, nil, nil]),
        Row(
            name: "no-fix updates always pass",
            inputs: [LocationUpdate(noFix: .noFix), LocationUpdate(noFix: .sourceUnavailable)], expected: [nil, nil]),
    ]

    @Test(arguments: rows)
    func table(row: Row) {
        var gate = FixGate(configuration: row.configuration)
        var statistics = SourceStatistics()
        let decisions = row.inputs.map { input -> FixDropReason? in
            switch gate.check(input, statistics: &statistics) {
            case .pass: nil
            case .drop(let reason): reason
            }
        }
        #expect(decisions == row.expected)
    }

    @Test func countsDropsByReason() {
        var gate = FixGate()
        var statistics = SourceStatistics()
        let passed = [Self.update(.nan, 0), Self.update(0, 0), Self.update(45, 13), Self.update(45, 13)].compactMap {
            gate.admit($0, statistics: &statistics)
        }
        #expect(passed.count == 1)
        #expect(statistics.dropped == [.nonFinite: 1, .nullIsland: 1, .duplicateTime: 1])
    }

    @Test func correctsWeekRolloverDates() throws {
        // A receiver hit by the 2019 rollover says 2005-09-04 when it is 2025-04-20 (1024 weeks later).
        let wrong = Date(timeIntervalSince1970: 1_125_792_000)
        var gate = FixGate()
        var statistics = SourceStatistics()
        let passed = try #require(
            gate.admit(
                LocationUpdate(fix: LocationFix(time: wrong, latitude: 1, longitude: 2)), statistics: &statistics))
        #expect(passed.fix?.time == wrong + FixGate.weekRolloverPeriod)
        #expect(passed.time == passed.fix?.time)
        #expect(statistics.weekRolloverCorrections == 1)
        // Recordings keep their dates.
        var recording = FixGate(configuration: .recording)
        let kept = recording.admit(
            LocationUpdate(fix: LocationFix(time: wrong, latitude: 1, longitude: 2)), statistics: &statistics)
        #expect(kept?.fix?.time == wrong)
    }

    @Test func clearsNonFiniteOptionalValues() throws {
        var fix = LocationFix(time: Self.t0, latitude: 1, longitude: 2, altitude: .nan, speed: .infinity, course: 90)
        fix.quality.hdop = .nan
        var gate = FixGate()
        var statistics = SourceStatistics()
        let passed = try #require(gate.admit(LocationUpdate(fix: fix), statistics: &statistics)?.fix)
        #expect(passed.altitude == nil && passed.speed == nil && passed.course == 90 && passed.quality.hdop == nil)
        #expect(statistics.nonFiniteFieldsCleared == 3)
    }
}
