import Foundation
import Location

/// The real receiver captures and GPX files in `Data/` (see `Data/README.md`).
enum TestData {
    /// The directory holding `gpsd-logs/` and `gpx/`.
    static let directory: URL = {
        guard let url = Bundle.module.url(forResource: "Data", withExtension: nil) else {
            fatalError("the LocationTests bundle has no Data directory")
        }
        return url
    }()

    /// Every gpsd test log's name, such as `bu353s4.log`, sorted.
    static let gpsdLogs: [String] = {
        let names =
            (try? FileManager.default.contentsOfDirectory(atPath: directory.appendingPathComponent("gpsd-logs").path))
            ?? []
        return names.filter { $0.hasSuffix(".log") }.sorted()
    }()

    /// The path of a file under `Data/`.
    static func path(_ relative: String) -> String {
        directory.appendingPathComponent(relative).path
    }

    /// The bytes of a file under `Data/`.
    static func bytes(_ relative: String) throws -> [UInt8] {
        Array(try Data(contentsOf: directory.appendingPathComponent(relative)))
    }
}

/// What gpsd itself decoded from a log: the TPV lines of its `.chk` file, read with Foundation's
/// JSON parser (not the code under test).
struct GpsdCheckFile {
    /// A TPV position.
    struct Position: Hashable {
        var latitude: Double
        var longitude: Double

        func agrees(with other: Position, within tolerance: Double = 1e-6) -> Bool {
            abs(latitude - other.latitude) <= tolerance && abs(longitude - other.longitude) <= tolerance
        }
    }

    /// The position of every epoch (TPV time) in which gpsd had a 2D or 3D fix with a position.
    var fixEpochs: [Date: Position] = [:]
    /// Positions of 2D/3D TPVs that gpsd sent without a time (before it knew the date).
    var timelessFixPositions: [Position] = []
    /// Every fix position gpsd reported, with or without time.
    var allFixPositions: [Position] = []

    init(contentsOf path: String) throws {
        let text = String(decoding: try Data(contentsOf: URL(fileURLWithPath: path)), as: UTF8.self)
        for line in text.split(whereSeparator: \.isNewline) where line.hasPrefix("{") {
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                object["class"] as? String == "TPV", (object["mode"] as? Int ?? 0) >= 2,
                let latitude = object["lat"] as? Double, let longitude = object["lon"] as? Double
            else { continue }
            let position = Position(latitude: latitude, longitude: longitude)
            allFixPositions.append(position)
            if let time = object["time"] as? String {
                fixEpochs[try Self.parse(time)] = position
            } else {
                timelessFixPositions.append(position)
            }
        }
    }

    static func parse(_ time: String) throws -> Date {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        guard let date = formatter.date(from: time) else { throw CheckFileError(time: time) }
        // Round to the millisecond as gpsd's text does, comparing instants rather than bit patterns.
        return Date(timeIntervalSince1970: (date.timeIntervalSince1970 * 1000).rounded() / 1000)
    }

    struct CheckFileError: Error {
        var time: String
    }
}

/// How a source's fixes compare with gpsd's epochs for one log.
struct Agreement: CustomStringConvertible {
    /// Distinct epochs in which gpsd had a fix.
    var gpsdEpochs = 0
    /// Those for which the source gave a fix at the same time within 1e-6 degrees.
    var agreeing = 0
    /// Source fixes at a time gpsd reported with another position, or at a time gpsd did not report
    /// with a position gpsd never had: must be zero.
    var contradictions: [String] = []
    /// Source fixes at times for which gpsd sent no TPV with a time, at a position gpsd had.
    var unmatchedButKnown = 0
    /// gpsd's epochs that the source did not match.
    var missed: [Date] = []

    var ratio: Double { gpsdEpochs == 0 ? 1 : Double(agreeing) / Double(gpsdEpochs) }

    var description: String {
        "\(agreeing)/\(gpsdEpochs) (\(String(format: "%.1f", ratio * 100)) %), \(unmatchedButKnown) extra, "
            + "\(contradictions.count) contradictions"
    }

    /// Times modulo 1024 GPS weeks: gpsd moves dates it judges too early by 1024 weeks, by a rule
    /// that changed between versions (the `.chk` files did so for neo-m8n.log only, Debian's 3.22
    /// for most logs), so instants are compared up to a week rollover.
    static func moduloRollover(_ time: Date) -> Date {
        Date(
            timeIntervalSince1970: time.timeIntervalSince1970.truncatingRemainder(
                dividingBy: FixGate.weekRolloverPeriod))
    }

    /// Compares fixes with the check file, matching times up to a GPS week rollover.
    init(fixes: [LocationFix], check: GpsdCheckFile, normalize: (Date) -> Date = Agreement.moduloRollover) {
        var gpsd: [Date: GpsdCheckFile.Position] = [:]
        for (time, position) in check.fixEpochs { gpsd[normalize(time)] = position }
        gpsdEpochs = gpsd.count
        var agreed = Set<Date>()
        for fix in fixes {
            let time = normalize(Date(timeIntervalSince1970: (fix.time.timeIntervalSince1970 * 1000).rounded() / 1000))
            let position = GpsdCheckFile.Position(latitude: fix.latitude, longitude: fix.longitude)
            if let expected = gpsd[time] {
                if position.agrees(with: expected) {
                    agreed.insert(time)
                } else {
                    contradictions.append("\(time): \(position) but gpsd had \(expected)")
                }
            } else if check.allFixPositions.contains(where: { $0.agrees(with: position) }) {
                unmatchedButKnown += 1
            } else {
                contradictions.append("\(time): \(position), a position gpsd never had")
            }
        }
        agreeing = agreed.count
        missed = gpsd.keys.filter { !agreed.contains($0) }.sorted()
    }
}
