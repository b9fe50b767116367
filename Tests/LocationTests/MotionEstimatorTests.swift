import Foundation
import Testing

@testable import Location

/// Speed and course derived from positions where the source has none.
@Suite struct MotionEstimatorTests {
    static let t0 = Date(timeIntervalSince1970: 1_700_000_000)
    /// Metres per degree of latitude on the estimator's sphere.
    static let metresPerDegree = MotionEstimator.earthRadius * Double.pi / 180

    static func fix(northMetres: Double, eastMetres: Double = 0, at seconds: Double, speed: Double? = nil)
        -> LocationFix
    {
        LocationFix(
            time: t0 + seconds, latitude: 45 + northMetres / metresPerDegree,
            longitude: 13 + eastMetres / (metresPerDegree * cos(45 * Double.pi / 180)), speed: speed)
    }

    @Test func aSteadyDriveNorthEast() throws {
        var estimator = MotionEstimator()
        // 10 m/s north and 10 m/s east, one fix a second.
        let fixes = (0..<20).map {
            estimator.estimate(Self.fix(northMetres: Double($0) * 10, eastMetres: Double($0) * 10, at: Double($0)))
        }
        #expect(fixes[0].speed == nil && fixes[0].course == nil && fixes[0].derived.isEmpty)
        for fix in fixes.dropFirst() {
            let speed = try #require(fix.speed)
            let course = try #require(fix.course)
            #expect(abs(speed - 10 * 2.0.squareRoot()) < 0.05, "\(speed)")
            #expect(abs(course - 45) < 0.1, "\(course)")
            #expect(fix.derived == [.speed, .course])
        }
    }

    @Test func aStationaryReceiversNoiseGivesAlmostNoSpeedAndNoCourse() {
        var estimator = MotionEstimator()
        // A metre of noise either way, one fix a second, for a minute.
        var generator = GarbageTests.SplitMix(state: 7)
        let fixes = (0..<60).map { second in
            estimator.estimate(
                Self.fix(
                    northMetres: Double.random(in: -1...1, using: &generator),
                    eastMetres: Double.random(in: -1...1, using: &generator), at: Double(second)))
        }
        // Over the 5 s window at most 2.9 m of noise: under 0.6 m/s once the window is full.
        #expect(fixes.dropFirst(5).allSatisfy { ($0.speed ?? 0) < 0.6 })
        #expect(fixes.allSatisfy { $0.course == nil })
    }

    @Test func reportedValuesAreKeptAndAGapStartsAfresh() {
        var estimator = MotionEstimator()
        let reported = estimator.estimate(Self.fix(northMetres: 0, at: 0, speed: 3))
        let next = estimator.estimate(Self.fix(northMetres: 20, at: 10, speed: 2))
        #expect(reported.speed == 3 && next.speed == 2 && next.derived == [.course] && next.course == 0)
        // Two minutes later: too long a gap to say how the receiver moved.
        let afterGap = estimator.estimate(Self.fix(northMetres: 1000, at: 130))
        #expect(afterGap.speed == nil && afterGap.course == nil)
        // Time going backwards starts afresh too.
        let back = estimator.estimate(Self.fix(northMetres: 0, at: 100))
        #expect(back.speed == nil)
    }

    @Test func aTrackLoggedEveryFewSecondsGetsSpeedAndCourse() {
        var estimator = MotionEstimator()
        _ = estimator.estimate(Self.fix(northMetres: 0, at: 0))
        // 24 s later, 240 m east: one pair, no window.
        let fix = estimator.estimate(Self.fix(northMetres: 0, eastMetres: 240, at: 24))
        #expect(abs((fix.speed ?? 0) - 10) < 0.05 && abs((fix.course ?? 0) - 90) < 0.1)
    }

    @Test func aGPXTrackWithoutSpeedIsReplayedWithSpeedAndCourse() async throws {
        // A real car drive by a Garmin eTrex 20x, without <speed> or <course>.
        let source = try FileSource(
            path: TestData.path("gpx/around-visnjan-with-car.gpx"),
            options: FileSource.Options(pacing: .asFastAsPossible))
        let fixes = try await FileSourceTests.collect(source).compactMap(\.fix)
        #expect(fixes.count == 104)
        let withSpeed = fixes.filter { $0.speed != nil }
        #expect(withSpeed.count >= 100 && withSpeed.allSatisfy { $0.derived.contains(.speed) })
        #expect(withSpeed.allSatisfy { $0.speed! < 40 }, "a car on country roads: under 144 km/h")
        #expect(fixes.filter { $0.course != nil }.count >= 80)
    }

    @Test func aGPXTrackWithSpeedKeepsIt() async throws {
        let source = try FileSource(
            path: TestData.path("gpx/track_with_speed.gpx"), options: FileSource.Options(pacing: .asFastAsPossible))
        let fixes = try await FileSourceTests.collect(source).compactMap(\.fix)
        #expect(fixes.count == 3 && fixes.allSatisfy { $0.speed != nil && !$0.derived.contains(.speed) })
    }

    @Test func aGGAOnlyReceiverIsReplayedWithSpeed() async throws {
        // rx210.log without its RMC (speed, course) and ZDA.
        let source = try FileSource(
            path: TestData.path("gpsd-derived/rx210-normc.log"), options: FileSource.Options(pacing: .asFastAsPossible))
        let fixes = try await FileSourceTests.collect(source).compactMap(\.fix)
        #expect(fixes.count == 40)
        #expect(fixes.dropFirst().allSatisfy { $0.speed != nil && $0.derived.contains(.speed) })
    }

    @Test func untimedGPXPointsGetNoMotion() async throws {
        let source = try FileSource(
            path: TestData.path("gpx/route.gpx"), options: FileSource.Options(pacing: .asFastAsPossible))
        let fixes = try await FileSourceTests.collect(source).compactMap(\.fix)
        #expect(fixes.count == 55 && fixes.allSatisfy { $0.speed == nil && $0.derived.isEmpty })
    }
}
