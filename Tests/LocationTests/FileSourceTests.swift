import Foundation
import Testing

@testable import Location

/// Replaying files: format detection, the three formats, pacing, loops, errors.
@Suite struct FileSourceTests {
    static func collect(_ source: FileSource) async throws -> [LocationUpdate] {
        var updates: [LocationUpdate] = []
        for try await update in source.updates { updates.append(update) }
        return updates
    }

    static func temporaryFile(_ bytes: [UInt8], name: String) throws -> String {
        let path = NSTemporaryDirectory() + "myeline-\(UUID().uuidString)-\(name)"
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test(arguments: [
        ("gpsd-logs/ublox-8.log", FileFormat.nmea), ("gpsd-logs/gpsdf.log", .nmea),
        ("gpsd-logs/bu353s4.log.chk", .gpsdJSON),
        ("gpx/unicode_with_bom.gpx", .gpx), ("gpx/route.gpx", .gpx),
    ])
    func detectsTheFormatFromTheContent(file: String, format: FileFormat) throws {
        // Under a misleading name: the content decides.
        #expect(FileFormat.detect(try TestData.bytes(file), fileName: "misleading.json") == format)
    }

    @Test func theNameDecidesOnlyWhenTheContentSaysNothing() {
        #expect(FileFormat.detect(Array("# nothing yet\n".utf8), fileName: "trip.gpx") == .gpx)
        #expect(FileFormat.detect(Array("# nothing yet\n".utf8), fileName: "trip.nmea") == .nmea)
        #expect(FileFormat.detect(Array("hello\n".utf8), fileName: "trip") == nil)
    }

    @Test(arguments: TestData.gpsdLogs)
    func replaysNMEAAsFastAsPossible(log: String) async throws {
        let source = try FileSource(
            path: TestData.path("gpsd-logs/\(log)"), options: FileSource.Options(pacing: .asFastAsPossible),
            clock: RecordingClock())
        let updates = try await Self.collect(source)
        let check = try GpsdCheckFile(contentsOf: TestData.path("gpsd-logs/\(log).chk"))
        let comparison = GpsdComparison(fixes: updates.compactMap(\.fix), check: check)
        #expect(comparison.coverage >= 0.95, "\(log): \(comparison)")
        #expect(source.statistics.fixes == updates.compactMap(\.fix).count)
        #expect(source.statistics.linesRead > 0)
    }

    @Test(arguments: TestData.gpsdLogs)
    func replaysGpsdCapturesAsTheLiveSourceWouldSeeThem(log: String) async throws {
        // A .chk file is gpsd's JSON output (what gpspipe -w writes, with NMEA passed through).
        let path = TestData.path("gpsd-logs/\(log).chk")
        let source = try FileSource(path: path, options: FileSource.Options(pacing: .asFastAsPossible))
        let fromFile = try await Self.collect(source)
        var decoder = GpsdDecoder()
        var gate = FixGate(configuration: .recording)
        var statistics = SourceStatistics()
        var motion = MotionEstimator()
        let direct = gate.admitAll(decoder.decode(try TestData.bytes("gpsd-logs/\(log).chk")), statistics: &statistics)
            .map { update in
                var update = update
                update.fix = update.fix.map { motion.estimate($0) }
                return update
            }
        #expect(fromFile == direct)
        // gpsd's fixes without a time (before it knew the date) cannot be placed from a capture.
        let comparison = GpsdComparison(
            fixes: fromFile.compactMap(\.fix), check: try GpsdCheckFile(contentsOf: path), normalize: { $0 })
        #expect(comparison.missedTimes.isEmpty && comparison.extraCount == 0, "\(log): \(comparison)")
    }

    @Test(arguments: [(ReplayPacing.recorded, 1.0), (.scaled(4), 0.25), (.scaled(0.5), 2.0)])
    func pacesByTheFixTimes(pacing: ReplayPacing, scale: Double) async throws {
        let clock = RecordingClock()
        let source = try FileSource(
            path: TestData.path("gpsd-logs/nmea-fuzzy-cases.log"), options: FileSource.Options(pacing: pacing),
            clock: clock)
        let updates = try await Self.collect(source)
        let times = updates.compactMap(\.time?.timeIntervalSince1970)
        #expect(times.count == updates.count && times.count > 10)
        let expected = times.map { ($0 - times[0]) * scale }
        let deadlines = clock.deadlines.map(\.seconds)
        #expect(deadlines.count == expected.count)
        for (deadline, wanted) in zip(deadlines, expected) { #expect(abs(deadline - wanted) < 1e-6) }
    }

    @Test func asFastAsPossibleNeverWaits() async throws {
        let clock = RecordingClock()
        let source = try FileSource(
            path: TestData.path("gpsd-logs/quectel-l76k-nmea.log"),
            options: FileSource.Options(pacing: .asFastAsPossible), clock: clock)
        #expect(try await Self.collect(source).count == 150)
        #expect(clock.deadlines.isEmpty)
    }

    @Test func loopsWithTimesThatKeepGoingForward() async throws {
        let clock = RecordingClock()
        let source = try FileSource(
            path: TestData.path("gpsd-logs/bu353s4.log"), options: FileSource.Options(loops: true), clock: clock)
        var fixes: [LocationFix] = []
        for try await update in source.updates {
            if let fix = update.fix { fixes.append(fix) }
            if fixes.count == 80 { break }
        }
        // 25 fixes a lap, no drops as duplicates or backwards times, and paced across laps.
        #expect(zip(fixes, fixes.dropFirst()).allSatisfy { $0.time < $1.time })
        #expect(fixes[25].time.timeIntervalSince1970 - fixes[24].time.timeIntervalSince1970 == 1)
        #expect(fixes[25].latitude == fixes[0].latitude)
        #expect(source.statistics.totalDropped == 0)
        let deadlines = clock.deadlines.map(\.seconds)
        #expect(zip(deadlines, deadlines.dropFirst()).allSatisfy { $0 <= $1 })
    }

    @Test func restampsTimesForADemo() async throws {
        let stamp = Date(timeIntervalSince1970: 1_900_000_000)
        let source = try FileSource(
            path: TestData.path("gpsd-logs/bu353s4.log"),
            options: FileSource.Options(pacing: .asFastAsPossible, restampsTimes: true), now: { stamp })
        let updates = try await Self.collect(source)
        #expect(updates.allSatisfy { $0.fix?.time == stamp && $0.time == stamp })
    }

    @Test func aReceiverWithoutAFixForMinutes() async throws {
        // Five minutes of a real receiver's no-fix sentences (rx210.log before its first fix), one a second.
        var text = ""
        for second in 0..<300 {
            let time = String(format: "18%02d%02d.00", 40 + second / 60, second % 60)
            for body in [
                "GNRMC,\(time),V,,,,,,,030416,,,N", "GNGGA,\(time),,,,,0,04,28.92,,,,,,",
                "GNGSA,A,1,31,21,,,,,,,,,,,53.49,28.92,45.00",
            ] {
                text += NMEADecoderTests.sentence(body) + "\r\n"
            }
        }
        let path = try Self.temporaryFile(Array(text.utf8), name: "nofix.nmea")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let clock = RecordingClock()
        let source = try FileSource(path: path, clock: clock)
        let updates = try await Self.collect(source)
        #expect(updates.count == 300)
        #expect(updates.allSatisfy { $0.fix == nil && $0.status == .noFix && $0.time != nil })
        #expect(clock.deadlines.last?.seconds == 299)
    }

    @Test func failsClearlyForAMissingOrUnknownFile() async throws {
        let missing = try FileSource(path: "/nonexistent/trip.nmea")
        await #expect(throws: LocationError.self) { _ = try await Self.collect(missing) }
        let path = try Self.temporaryFile(Array("just some text\n".utf8), name: "notes.txt2")
        defer { try? FileManager.default.removeItem(atPath: path) }
        do {
            _ = try await Self.collect(try FileSource(path: path))
            Issue.record("no error")
        } catch let error as LocationError {
            #expect(error.code == .unknownFormat && error.message.contains(path))
        }
        #expect(throws: LocationError.self) {
            try FileSource(path: path, options: FileSource.Options(pacing: .scaled(0)))
        }
    }

    @Test func stopsWhenTheTaskIsCancelled() async throws {
        let source = try FileSource(
            path: TestData.path("gpsd-logs/nmea-rtk.log"), options: FileSource.Options(loops: true))
        let task = Task {
            var count = 0
            for try await _ in source.updates { count += 1 }
            return count
        }
        task.cancel()
        #expect(try await task.value >= 0)
    }
}

/// The pacer as a table: recorded times in, due offsets out.
@Suite struct ReplayPacerTests {
    @Test(arguments: [
        (ReplayPacing.recorded, [10.0, 11, 12.5], [0.0, 1, 2.5]),
        (.scaled(2), [10, 11, 13], [0, 0.5, 1.5]),
        (.recorded, [10, 12, 11, 13], [0, 2, 2, 4]),  // backwards: at once, then on from there
    ])
    func offsets(pacing: ReplayPacing, times: [Double], expected: [Double]) {
        var pacer = ReplayPacer(pacing: pacing)
        let offsets = times.map {
            pacer.offset(forTime: $0).map { Double($0.components.seconds) + Double($0.components.attoseconds) / 1e18 }
        }
        #expect(offsets == expected.map { $0 })
    }

    @Test func untimedUpdatesAndFastReplaysDoNotWait() {
        var pacer = ReplayPacer(pacing: .recorded)
        #expect(pacer.offset(forTime: nil) == nil)
        var fast = ReplayPacer(pacing: .asFastAsPossible)
        #expect(fast.offset(forTime: 5) == nil)
    }

    @Test func aNewLapStartsOneGapAfterTheLast() {
        var pacer = ReplayPacer(pacing: .recorded)
        _ = pacer.offset(forTime: 100)
        _ = pacer.offset(forTime: 110)
        pacer.startLap(gap: 1)
        #expect(pacer.offset(forTime: 100) == .seconds(11))
        #expect(pacer.offset(forTime: 105) == .seconds(16))
    }
}
