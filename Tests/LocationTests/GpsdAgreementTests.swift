import Foundation
import Location
import Testing

/// The comparison harness: every receiver capture under `Data/` that has gpsd's own decoding beside
/// it (`NAME.chk`) is replayed through the file source, as the agent replays a file, and compared
/// with gpsd position by position (``GpsdComparison``); the table is printed.
///
/// A capture added under `Data/` with its `.chk` is checked the same way. To check captures
/// kept elsewhere, set `MYELINE_GPSD_CAPTURES` to their directory (each `NAME` beside `NAME.chk`).
@Suite struct GpsdAgreementTests {
    struct Row {
        var capture: String
        var comparison: GpsdComparison
        var statistics: SourceStatistics
    }

    /// The captures: (name, capture path, check path).
    static var captures: [(String, String, String)] {
        if let directory = ProcessInfo.processInfo.environment["MYELINE_GPSD_CAPTURES"] {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
            return names.filter { $0.hasSuffix(".chk") }.sorted().map {
                let capture = String($0.dropLast(4))
                return (capture, directory + "/" + capture, directory + "/" + $0)
            }
        }
        return TestData.capturesWithCheckFiles.map { ($0, TestData.path($0), TestData.path($0 + ".chk")) }
    }

    static func replay(_ path: String) async throws -> (fixes: [LocationFix], statistics: SourceStatistics) {
        let source = try FileSource(path: path, options: FileSource.Options(pacing: .asFastAsPossible))
        var fixes: [LocationFix] = []
        for try await update in source.updates {
            if let fix = update.fix { fixes.append(fix) }
        }
        return (fixes, source.statistics)
    }

    static func table(_ rows: [Row]) -> String {
        let kinds = GpsdComparison.ExtraKind.allCases
        var lines = [
            "| Capture | gpsd fixes | Published | Coverage | Extras | "
                + kinds.map(\.rawValue).joined(separator: " | ") + " | Missed | Rejected / dropped by the source |",
            "|---|---|---|---|---|" + kinds.map { _ in "---|" }.joined() + "---|---|",
        ]
        func percent(_ value: Double) -> String { String(format: "%.1f %%", value * 100) }
        for row in rows {
            let comparison = row.comparison
            let missed =
                comparison.missedTimes.prefix(3).map { ISO8601DateFormatter().string(from: $0) }
                + (comparison.missedTimeless > 0 ? ["\(comparison.missedTimeless) timeless"] : [])
            let counts =
                row.statistics.rejected.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key.rawValue)" }
                + row.statistics.dropped.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key.rawValue)" }
            lines.append(
                "| \(row.capture) | \(comparison.gpsdFixes) | \(comparison.covered) | \(percent(comparison.coverage)) | "
                    + "\(comparison.extraCount) | "
                    + kinds.map { "\(comparison.extras[$0]?.count ?? 0) | " }.joined()
                    + "\(comparison.missed)\(missed.isEmpty ? "" : " (\(missed.joined(separator: ", "))\(comparison.missedTimes.count > 3 ? ", ..." : ""))") | "
                    + "\(counts.joined(separator: ", ")) |")
        }
        let gpsd = rows.reduce(0) { $0 + $1.comparison.gpsdFixes }
        let covered = rows.reduce(0) { $0 + $1.comparison.covered }
        let extras = rows.reduce(0) { $0 + $1.comparison.extraCount }
        lines.append(
            "| **all \(rows.count)** | \(gpsd) | \(covered) | \(percent(gpsd == 0 ? 1 : Double(covered) / Double(gpsd))) | "
                + "\(extras) | "
                + kinds.map { kind in "\(rows.reduce(0) { $0 + ($1.comparison.extras[kind]?.count ?? 0) }) | " }
                .joined()
                + "\(rows.reduce(0) { $0 + $1.comparison.missed }) | |")
        return lines.joined(separator: "\n")
    }

    @Test func everyCaptureAgreesWithGpsd() async throws {
        var rows: [Row] = []
        for (name, capture, check) in Self.captures {
            let (fixes, statistics) = try await Self.replay(capture)
            rows.append(
                Row(
                    capture: name,
                    comparison: GpsdComparison(fixes: fixes, check: try GpsdCheckFile(contentsOf: check)),
                    statistics: statistics))
        }
        print("gpsd agreement of the file source, \(rows.count) captures:\n" + Self.table(rows))
        try #require(!rows.isEmpty)
        for row in rows {
            for kind in [GpsdComparison.ExtraKind.gpsdSaidNoFix, .otherPosition, .unknownPosition] {
                #expect(
                    row.comparison.extras[kind] == nil,
                    "\(row.capture): \(kind.rawValue): \(row.comparison.extras[kind] ?? [])")
            }
        }
        let gpsd = rows.reduce(0) { $0 + $1.comparison.gpsdFixes }
        let covered = rows.reduce(0) { $0 + $1.comparison.covered }
        #expect(Double(covered) >= 0.99 * Double(gpsd), "\(covered) of gpsd's \(gpsd) fixes published")
    }
}
