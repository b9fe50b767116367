import Foundation
import Testing

@testable import Location

/// The fix gate as a table: input fixes, configuration, and what passes or why it is dropped.
@Suite struct FixGateTests {
    static let t0 = Date(timeIntervalSince1970: 1_700_000_000)

    static func update(_ latitude: Double, _ longitude: Double, at seconds: Double = 0) -> LocationUpdate {
        LocationUpdate(fix: LocationFix(time: t0 + seconds, latitude: latitude, longitude: longitude))
    }

    static func fix(at seconds: Double) -> LocationUpdate { update(45, 13, at: seconds) }

    static func noFix(at seconds: Double?) -> LocationUpdate {
        LocationUpdate(noFix: .noFix, time: seconds.map { t0 + $0 })
    }

    struct Row: Sendable, CustomTestStringConvertible {
        var name: String
        var configuration = FixGate.Configuration()
        var inputs: [LocationUpdate]
        /// What passes, in order (each as its time, seconds after t0, and whether it has a fix).
        var passed: [Double?]
        var dropped: [FixDropReason: Int] = [:]
        var testDescription: String { name }
    }

    static let rows: [Row] = [
        Row(name: "a good fix passes", inputs: [fix(at: 0)], passed: [0]),
        Row(name: "NaN latitude", inputs: [update(.nan, 13)], passed: [], dropped: [.nonFinite: 1]),
        Row(name: "infinite longitude", inputs: [update(45, -.infinity)], passed: [], dropped: [.nonFinite: 1]),
        Row(name: "latitude above 90", inputs: [update(90.0001, 13)], passed: [], dropped: [.latitudeOutOfRange: 1]),
        Row(name: "latitude -90 is a pole", inputs: [update(-90, 13)], passed: [0]),
        Row(name: "longitude below -180", inputs: [update(45, -180.5)], passed: [], dropped: [.longitudeOutOfRange: 1]),
        Row(name: "null island", inputs: [update(0, 0)], passed: [], dropped: [.nullIsland: 1]),
        Row(
            name: "null island allowed", configuration: FixGate.Configuration(allowsNullIsland: true),
            inputs: [update(0, 0)], passed: [0]),
        Row(name: "zero latitude alone is fine", inputs: [update(0, 13)], passed: [0]),
        // A gpsd "time":-1e300 once made the rollover correction loop for ever.
        Row(
            name: "a time 1e300 s before 1970", inputs: [update(45, 13, at: -1e300)], passed: [],
            dropped: [.beforeGPSEpoch: 1]),
        Row(
            name: "a time just before GPS time began", inputs: [update(45, 13, at: -1_384_035_201)], passed: [],
            dropped: [.beforeGPSEpoch: 1]),
        Row(
            name: "no rollover correction, no GPS epoch check", configuration: .recording,
            inputs: [update(45, 13, at: -1e300)], passed: [-1e300]),
        Row(name: "duplicate time", inputs: [fix(at: 0), fix(at: 0)], passed: [0], dropped: [.duplicateTime: 1]),
        Row(
            name: "duplicates allowed", configuration: FixGate.Configuration(dropsDuplicateTimes: false),
            inputs: [fix(at: 0), fix(at: 0)], passed: [0, 0]),
        // A wild timestamp one epoch back: the next fix continues the old timeline.
        Row(
            name: "one fix back, then the old timeline goes on", inputs: [fix(at: 10), fix(at: 9), fix(at: 11)],
            passed: [10, 11], dropped: [.timeWentBackwards: 1]),
        // A receiver reset or a log of two sessions: the new timeline loses nothing.
        Row(
            name: "a new timeline", inputs: [fix(at: 100), fix(at: 1), fix(at: 2), fix(at: 3)],
            passed: [100, 1, 2, 3]),
        Row(
            name: "a new timeline whose second fix is the old timeline's last time",
            inputs: [fix(at: 100), fix(at: 99), fix(at: 100), fix(at: 101)], passed: [100, 99, 100, 101]),
        Row(
            name: "a new timeline confirmed by a no-fix update",
            inputs: [fix(at: 100), fix(at: 1), noFix(at: 2), fix(at: 3)], passed: [100, 1, 2, 3]),
        Row(
            name: "a held fix passes before a no-fix update without time",
            inputs: [fix(at: 100), fix(at: 1), noFix(at: nil)], passed: [100, 1, nil]),
        Row(name: "a held fix passes at the end", inputs: [fix(at: 100), fix(at: 1)], passed: [100, 1]),
        Row(
            name: "a held fix is dropped by a no-fix update of the old timeline",
            inputs: [fix(at: 100), fix(at: 1), noFix(at: 101), fix(at: 102)], passed: [100, 101, 102],
            dropped: [.timeWentBackwards: 1]),
        Row(
            name: "a held fix's duplicate is dropped", inputs: [fix(at: 100), fix(at: 1), fix(at: 1), fix(at: 2)],
            passed: [100, 1, 2], dropped: [.duplicateTime: 1]),
        Row(
            name: "fixes going further back each time: the fifth starts a new timeline",
            inputs: [fix(at: 100), fix(at: 50), fix(at: 40), fix(at: 30), fix(at: 20), fix(at: 10), fix(at: 11)],
            passed: [100, 10, 11], dropped: [.timeWentBackwards: 4]),
        Row(
            name: "backward times allowed", configuration: FixGate.Configuration(dropsBackwardTimes: false),
            inputs: [fix(at: 10), fix(at: 9), fix(at: 11)], passed: [10, 9, 11]),
        Row(
            name: "a simulated fix becomes an update without a fix",
            inputs: [
                LocationUpdate(
                    fix: LocationFix(
                        time: t0, latitude: 45, longitude: 13, quality: LocationQuality(gpsdStatus: 8)))
            ], passed: [0], dropped: [.simulated: 1]),
        Row(
            name: "no-fix updates always pass",
            inputs: [LocationUpdate(noFix: .noFix), LocationUpdate(noFix: .sourceUnavailable)], passed: [nil, nil]),
    ]

    @Test(arguments: rows)
    func table(row: Row) {
        var gate = FixGate(configuration: row.configuration)
        var statistics = SourceStatistics()
        let passed = gate.admitAll(row.inputs, statistics: &statistics)
        #expect(passed.map { $0.time.map { $0.timeIntervalSince(Self.t0) } } == row.passed)
        #expect(statistics.dropped == row.dropped)
        if row.name.hasPrefix("a simulated") { #expect(passed.allSatisfy { $0.fix == nil && $0.status == .noFix }) }
    }

    @Test func countsDropsByReason() {
        var gate = FixGate()
        var statistics = SourceStatistics()
        let passed = gate.admitAll(
            [Self.update(.nan, 0), Self.update(0, 0), Self.update(45, 13), Self.update(45, 13)], statistics: &statistics
        )
        #expect(passed.count == 1)
        #expect(statistics.dropped == [.nonFinite: 1, .nullIsland: 1, .duplicateTime: 1])
    }

    @Test func correctsWeekRolloverDates() throws {
        // A receiver hit by the 2019 rollover says 2005-09-04 when it is 2025-04-20 (1024 weeks later).
        let wrong = Date(timeIntervalSince1970: 1_125_792_000)
        var gate = FixGate()
        var statistics = SourceStatistics()
        let passed = try #require(
            gate.admitAll(
                [LocationUpdate(fix: LocationFix(time: wrong, latitude: 1, longitude: 2))], statistics: &statistics
            )
            .first)
        #expect(passed.fix?.time == wrong + FixGate.weekRolloverPeriod)
        #expect(passed.time == passed.fix?.time)
        #expect(statistics.weekRolloverCorrections == 1)
        // Recordings keep their dates.
        var recording = FixGate(configuration: .recording)
        let kept = recording.admitAll(
            [LocationUpdate(fix: LocationFix(time: wrong, latitude: 1, longitude: 2))], statistics: &statistics)
        #expect(kept.first?.fix?.time == wrong)
    }

    @Test func clearsNonFiniteOptionalValues() throws {
        var fix = LocationFix(time: Self.t0, latitude: 1, longitude: 2, altitude: .nan, speed: .infinity, course: 90)
        fix.quality.hdop = .nan
        var gate = FixGate()
        var statistics = SourceStatistics()
        let passed = try #require(gate.admitAll([LocationUpdate(fix: fix)], statistics: &statistics).first?.fix)
        #expect(passed.altitude == nil && passed.speed == nil && passed.course == 90 && passed.quality.hdop == nil)
        #expect(statistics.nonFiniteFieldsCleared == 3)
    }
}
