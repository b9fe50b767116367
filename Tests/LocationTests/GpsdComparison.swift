import Foundation
import Location

/// What gpsd itself decoded from a capture: the TPV lines of its `.chk` file, read with Foundation's
/// JSON parser (not the code under test).
struct GpsdCheckFile {
    /// A TPV position.
    struct Position: Hashable, CustomStringConvertible {
        var latitude: Double
        var longitude: Double

        func agrees(with other: Position, within tolerance: Double = 1e-6) -> Bool {
            abs(latitude - other.latitude) <= tolerance && abs(longitude - other.longitude) <= tolerance
        }

        var description: String { String(format: "%.7f, %.7f", latitude, longitude) }
    }

    /// A fix gpsd reported without a time (it had no date yet): its position and, when the check
    /// file echoes the NMEA (`"nmea":true`), the time of day (ms) of the sentence it came from.
    struct TimelessFix {
        var position: Position
        var millisecondOfDay: Int?
    }

    /// Every position gpsd reported as a 2D or 3D fix at each TPV time (several TPVs often share one).
    var fixEpochs: [Date: [Position]] = [:]
    /// TPV times at which gpsd reported no fix (mode 0 or 1, or no position) and never a fix.
    var noFixTimes: Set<Date> = []
    /// Fixes gpsd sent without a time, one per epoch, leaving out those of an epoch that gpsd
    /// reported again with a time once it knew the date (the first epoch of most logs).
    var timelessFixes: [TimelessFix] = []
    /// Every fix position gpsd reported, with or without time.
    var allFixPositions: [Position] = []

    init(contentsOf path: String) throws {
        try self.init(bytes: Array(Data(contentsOf: URL(fileURLWithPath: path))))
    }

    init(bytes: [UInt8]) throws {
        var noFix = Set<Date>()
        var timeless: [TimelessFix] = []
        var millisecondOfDay: Int?
        for line in bytes.split(separator: UInt8(ascii: "\n")) {
            if line.first == UInt8(ascii: "$") {
                millisecondOfDay = Self.millisecondOfDay(String(decoding: line, as: UTF8.self)) ?? millisecondOfDay
                continue
            }
            guard line.first == UInt8(ascii: "{"),
                let object = try? JSONSerialization.jsonObject(with: Data(line)) as? [String: Any],
                object["class"] as? String == "TPV"
            else { continue }
            let time = try (object["time"] as? String).map(Self.parse)
            guard (object["mode"] as? Int ?? 0) >= 2, let latitude = object["lat"] as? Double,
                let longitude = object["lon"] as? Double
            else {
                if let time { noFix.insert(time) }
                continue
            }
            let position = Position(latitude: latitude, longitude: longitude)
            allFixPositions.append(position)
            if let time {
                fixEpochs[time, default: []].append(position)
            } else if timeless.last.map({ $0.millisecondOfDay == nil || $0.millisecondOfDay != millisecondOfDay })
                ?? true
            {
                timeless.append(TimelessFix(position: position, millisecondOfDay: millisecondOfDay))
            } else {
                // Another report of the same epoch: the last position gpsd had.
                timeless[timeless.count - 1].position = position
            }
        }
        noFixTimes = noFix.subtracting(fixEpochs.keys)
        let timedDays = Set(fixEpochs.keys.map { Self.millisecondOfDay($0) })
        timelessFixes = timeless.filter { fix in fix.millisecondOfDay.map { !timedDays.contains($0) } ?? true }
    }

    /// The time of day of an NMEA sentence that has one (RMC, GGA, GNS, GLL, ZDA, GST), in ms.
    static func millisecondOfDay(_ sentence: String) -> Int? {
        let fields = sentence.split(separator: ",", omittingEmptySubsequences: false)
        guard let address = fields.first, address.count == 6 else { return nil }
        let index = address.hasSuffix("GLL") ? 5 : 1
        guard ["RMC", "GGA", "GNS", "GLL", "ZDA", "GST"].contains(String(address.suffix(3))), index < fields.count
        else { return nil }
        let field = fields[index]
        guard field.count >= 6, let hours = Int(field.prefix(2)), let minutes = Int(field.dropFirst(2).prefix(2)),
            let seconds = Double(field.dropFirst(4))
        else { return nil }
        return (hours * 3600 + minutes * 60) * 1000 + Int((seconds * 1000).rounded())
    }

    /// The time of day of an instant, in ms.
    static func millisecondOfDay(_ date: Date) -> Int {
        Int((date.timeIntervalSince1970 * 1000).rounded()) % 86_400_000
    }

    static func parse(_ time: String) throws -> Date {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        guard let date = formatter.date(from: time) else { throw CheckFileError(time: time) }
        return milliseconds(date)
    }

    /// Rounded to the millisecond as gpsd's text is, comparing instants rather than bit patterns.
    static func milliseconds(_ date: Date) -> Date {
        Date(timeIntervalSince1970: (date.timeIntervalSince1970 * 1000).rounded() / 1000)
    }

    struct CheckFileError: Error {
        var time: String
    }
}

/// How a source's fixes compare with gpsd's, position by position, for one capture.
///
/// A gpsd fix is an epoch (a TPV time) in which gpsd reported a 2D/3D fix, or a fix TPV without a
/// time. The source covers a timed one with a fix at the same time (up to a GPS week rollover) at
/// one of gpsd's positions for that time, within 1e-6 degrees; a timeless one with a fix at its
/// position that matched nothing else. Every other source fix is an extra, of one of three kinds.
struct GpsdComparison: CustomStringConvertible {
    /// Why a source fix is not one of gpsd's.
    enum ExtraKind: String, CaseIterable, Comparable {
        /// gpsd reported this time, and only as no fix: a position gpsd rejects.
        case gpsdSaidNoFix = "gpsd said no fix"
        /// gpsd reported this time with another position.
        case otherPosition = "another position"
        /// gpsd sent no TPV at this time (an epoch it never closed, or skipped), at a position it had.
        case timeNotReported = "time not reported"
        /// A position gpsd never had.
        case unknownPosition = "unknown position"

        static func < (lhs: ExtraKind, rhs: ExtraKind) -> Bool {
            allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
        }
    }

    /// gpsd's fixes: timed epochs and timeless fix TPVs.
    var gpsdFixes = 0
    /// Those the source published.
    var covered = 0
    /// gpsd's timed fix epochs the source did not publish.
    var missedTimes: [Date] = []
    /// gpsd's timeless fixes the source did not publish.
    var missedTimeless = 0
    /// Source fixes that are not gpsd's, by kind, each described.
    var extras: [ExtraKind: [String]] = [:]

    var coverage: Double { gpsdFixes == 0 ? 1 : Double(covered) / Double(gpsdFixes) }
    var extraCount: Int { extras.values.reduce(0) { $0 + $1.count } }
    var missed: Int { missedTimes.count + missedTimeless }

    var description: String {
        "\(covered)/\(gpsdFixes) (\(String(format: "%.1f", coverage * 100)) %), \(extraCount) extra"
            + extras.keys.sorted().map { " \($0.rawValue): \(extras[$0]!.count)" }.joined(separator: ",")
    }

    /// Times modulo 1024 GPS weeks: gpsd moves dates it judges too early by 1024 weeks, by a rule
    /// that changed between versions (the `.chk` files did so for neo-m8n.log only, Debian's 3.22
    /// for most logs), so instants are compared up to a week rollover.
    static func moduloRollover(_ time: Date) -> Date {
        Date(
            timeIntervalSince1970: time.timeIntervalSince1970.truncatingRemainder(
                dividingBy: FixGate.weekRolloverPeriod))
    }

    /// Compares fixes with the check file, matching times up to a GPS week rollover unless
    /// `normalize` says otherwise.
    init(fixes: [LocationFix], check: GpsdCheckFile, normalize: (Date) -> Date = GpsdComparison.moduloRollover) {
        var gpsd: [Date: [GpsdCheckFile.Position]] = [:]
        for (time, positions) in check.fixEpochs { gpsd[normalize(time), default: []] += positions }
        let noFix = Set(check.noFixTimes.map(normalize))
        var timeless = check.timelessFixes.map { ($0, false) }
        func matchesTimeless(_ fix: GpsdCheckFile.TimelessFix, _ position: GpsdCheckFile.Position, _ time: Date) -> Bool
        {
            fix.position.agrees(with: position)
                && fix.millisecondOfDay.map { $0 == GpsdCheckFile.millisecondOfDay(time) } ?? true
        }
        gpsdFixes = gpsd.count + timeless.count
        var agreed = Set<Date>()
        for fix in fixes {
            let time = normalize(GpsdCheckFile.milliseconds(fix.time))
            let position = GpsdCheckFile.Position(latitude: fix.latitude, longitude: fix.longitude)
            let described = "\(ISO8601DateFormatter().string(from: fix.time)) \(position)"
            if let expected = gpsd[time] {
                if expected.contains(where: { $0.agrees(with: position) }) {
                    agreed.insert(time)
                } else {
                    extras[.otherPosition, default: []].append("\(described), gpsd had \(expected[0])")
                }
            } else if noFix.contains(time) {
                extras[.gpsdSaidNoFix, default: []].append(described)
            } else if let index = timeless.firstIndex(where: { !$0.1 && matchesTimeless($0.0, position, fix.time) }) {
                timeless[index].1 = true
            } else if check.allFixPositions.contains(where: { $0.agrees(with: position) }) {
                extras[.timeNotReported, default: []].append(described)
            } else {
                extras[.unknownPosition, default: []].append(described)
            }
        }
        missedTimeless = timeless.filter { !$0.1 }.count
        covered = agreed.count + timeless.count - missedTimeless
        missedTimes = gpsd.keys.filter { !agreed.contains($0) }.sorted()
    }
}
