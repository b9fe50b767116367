import AsyncSupport
import Foundation
import Location
import Testing
import TestSupport

/// The gpsd source against a real gpsd replaying real receiver captures (see `TestGpsd`).
@Suite(.tags(.integration), .timeLimit(.minutes(3)))
struct GpsdReplayIntegrationTests {
    /// The captures in Tests/LocationTests/Data/gpsd-logs.
    static let logDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("LocationTests/Data/gpsd-logs")

    static let logs: [String] = {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: logDirectory.path)) ?? []
        return names.filter { $0.hasSuffix(".log") }.sorted()
    }()

    /// Where the sentinel epochs put the receiver: far from every capture.
    static let sentinel = (latitude: 1.0 + 12.3456 / 60, longitude: 2.0 + 23.4567 / 60)

    /// Epochs appended to each log, at a place and date no capture has: once the source yields the
    /// first of them, gpsd has processed every sentence before it.
    static var sentinelSentences: [UInt8] {
        (0..<4).flatMap { second in
            let body = "GPRMC,00000\(second).00,A,0112.3456,N,00223.4567,E,0.0,0.0,010169,,,A"
            let checksum = body.utf8.reduce(UInt8(0), ^)
            return Array("$\(body)*\(String(format: "%02X", checksum))\r\n".utf8)
        }
    }

    static func configuration(port: Int) -> GpsdConfiguration {
        GpsdConfiguration(
            host: "127.0.0.1", port: port, silenceTimeout: .seconds(10),
            reconnect: Backoff(initialDelay: .milliseconds(50), maximumDelay: .milliseconds(500), jitter: 0.4),
            gate: FixGate.Configuration(weekRolloverPivot: nil))
    }

    /// Collects the source's updates until `stop` says so.
    static func collect(
        _ source: GpsdSource, until stop: @escaping @Sendable ([LocationUpdate]) -> Bool
    ) async throws -> [LocationUpdate] {
        var updates: [LocationUpdate] = []
        for try await update in source.updates {
            updates.append(update)
            if stop(updates) { break }
        }
        return updates
    }

    static func isSentinel(_ update: LocationUpdate) -> Bool {
        guard let fix = update.fix else { return false }
        return abs(fix.latitude - sentinel.latitude) < 1e-6 && abs(fix.longitude - sentinel.longitude) < 1e-6
    }

    /// gpsd's own output, as `gpspipe -w` (a second watcher) printed it: the fix epochs by time key.
    static func gpspipeFixes(_ output: String) -> [Int64: (latitude: Double, longitude: Double)] {
        var epochs: [Int64: (latitude: Double, longitude: Double)] = [:]
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        for line in output.split(whereSeparator: \.isNewline) where line.hasPrefix("{") {
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                object["class"] as? String == "TPV", (object["mode"] as? Int ?? 0) >= 2,
                let latitude = object["lat"] as? Double, let longitude = object["lon"] as? Double,
                let time = (object["time"] as? String).flatMap(formatter.date(from:))
            else { continue }
            epochs[CheckFile.key(time)] = (latitude, longitude)
        }
        return epochs
    }

    /// The clock of the source under test: the time of fixes that gpsd sends without one.
    static let timelessClock = Date(timeIntervalSince1970: 1_900_000_000)

    /// The positions of the fix TPVs gpspipe printed without a time.
    static func gpspipeTimelessFixes(_ output: String) -> [(Double, Double)] {
        output.split(whereSeparator: \.isNewline).compactMap { line in
            guard line.hasPrefix("{"),
                let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                object["class"] as? String == "TPV", object["time"] == nil, (object["mode"] as? Int ?? 0) >= 2,
                let latitude = object["lat"] as? Double, let longitude = object["lon"] as? Double
            else { return nil }
            return (latitude, longitude)
        }
    }

    @Test(arguments: logs)
    func replayThroughGpsdGivesTheSamePositions(log: String) async throws {
        let bytes = Array(try Data(contentsOf: Self.logDirectory.appendingPathComponent(log)))
        let (updates, piped, statistics) = try await TestGpsd.with { gpsd in
            var configuration = Self.configuration(port: gpsd.port)
            // gpsd sends the whole log in a burst: keep every update for the comparison.
            configuration.bufferSize = 100_000
            // A fix gpsd sends without a time (before the log gives a date) is placed at this clock.
            let source = try GpsdSource(configuration: configuration, now: { Self.timelessClock })
            let gpspipe = try gpsd.gpspipe()
            defer { gpspipe.signal(SIGKILL) }
            let updates = try await withDeadline(
                .seconds(60), what: "gpsd to replay \(log)", process: gpsd.currentProcess
            ) {
                try await withThrowingTaskGroup(of: [LocationUpdate]?.self) { group in
                    group.addTask { try await Self.collect(source) { $0.last.map(Self.isSentinel) ?? false } }
                    group.addTask {
                        try await gpsd.feed(bytes + Self.sentinelSentences, watchers: 2)
                        return nil
                    }
                    var collected: [LocationUpdate] = []
                    for try await result in group { if let result { collected = result } }
                    return collected
                }
            }
            // gpspipe has seen everything once it prints the sentinel's position.
            try await gpspipe.waitForLine(containing: "\"lat\":1.205760000")
            await gpspipe.stop()
            return (updates, gpspipe.output, source.statistics)
        }
        let all = updates.compactMap(\.fix).filter { !Self.isSentinel(LocationUpdate(fix: $0)) }
        // Fixes gpsd never sent with a time, at gpsd's positions, placed at the source's clock.
        let timeless = all.filter { $0.time == Self.timelessClock }
        let fixes = all.filter { $0.time != Self.timelessClock }
        #expect(
            timeless.allSatisfy { fix in
                Self.gpspipeTimelessFixes(piped).contains { $0 == (fix.latitude, fix.longitude) }
            })
        #expect(updates.allSatisfy { $0.fix.map { $0.latitude.isFinite && $0.longitude.isFinite } ?? true })

        // Exactly the fix epochs gpsd sent to another client, at exactly its positions.
        var fromGpsd = Self.gpspipeFixes(piped)
        for key in fromGpsd.keys where abs(fromGpsd[key]!.latitude - Self.sentinel.latitude) < 1e-6 {
            fromGpsd[key] = nil
        }
        let byTime = Dictionary(fixes.map { (CheckFile.key($0.time), $0) }, uniquingKeysWith: { first, _ in first })
        #expect(Set(byTime.keys) == Set(fromGpsd.keys), "\(log): source epochs differ from gpspipe's")
        for (key, position) in fromGpsd {
            guard let fix = byTime[key] else { continue }
            #expect(abs(fix.latitude - position.latitude) <= 1e-9 && abs(fix.longitude - position.longitude) <= 1e-9)
        }

        // And the same positions as the NMEA file reader on the same bytes.
        var decoder = NMEADecoder()
        let fileFixes = Dictionary(
            decoder.decode(bytes).compactMap(\.fix).map { (CheckFile.key($0.time), $0) },
            uniquingKeysWith: { a, _ in a })
        var sameAsFile = 0
        for fix in fixes {
            guard let other = fileFixes[CheckFile.key(fix.time)] else { continue }
            #expect(abs(other.latitude - fix.latitude) <= 1e-6 && abs(other.longitude - fix.longitude) <= 1e-6)
            sameAsFile += 1
        }
        let check = try CheckFile(path: Self.logDirectory.appendingPathComponent("\(log).chk").path)
        let agreeingWithCheck = check.epochs.filter { key, position in
            byTime[key].map {
                abs($0.latitude - position.latitude) <= 1e-6 && abs($0.longitude - position.longitude) <= 1e-6
            } ?? false
        }.count
        print(
            "GPSD-REPLAY \(log): \(fixes.count) fixes = gpspipe's \(fromGpsd.count); \(sameAsFile) at file-reader epochs "
                + "(of \(fileFixes.count)); \(agreeingWithCheck)/\(check.epochs.count) .chk epochs; discarded \(statistics.updatesDiscarded)"
        )
        // gpsd skips a few epochs of some logs (its cycle detection); the file reader has them all.
        #expect(
            sameAsFile == fixes.count,
            "\(log): \(fixes.count - sameAsFile) gpsd fixes at epochs the file reader has not")
    }
}

/// The TPV fixes of a .chk file, keyed by time modulo 1024 GPS weeks (gpsd moves dates it judges too
/// early by 1024 weeks, by rules that differ between versions).
struct CheckFile {
    var epochs: [Int64: (latitude: Double, longitude: Double)] = [:]

    init(path: String) throws {
        let text = String(decoding: try Data(contentsOf: URL(fileURLWithPath: path)), as: UTF8.self)
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        for line in text.split(whereSeparator: \.isNewline) where line.hasPrefix("{") {
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                object["class"] as? String == "TPV", (object["mode"] as? Int ?? 0) >= 2,
                let latitude = object["lat"] as? Double, let longitude = object["lon"] as? Double,
                let time = (object["time"] as? String).flatMap(formatter.date(from:))
            else { continue }
            epochs[Self.key(time)] = (latitude, longitude)
        }
    }

    /// Milliseconds since 1970 modulo 1024 weeks.
    static func key(_ time: Date) -> Int64 {
        Int64((time.timeIntervalSince1970 * 1000).rounded()) % Int64(FixGate.weekRolloverPeriod * 1000)
    }
}
