import Foundation
import Testing

@testable import Location

/// One hostile input for a location decoder (NMEA, gpsd JSON or GPX) and what must come of it, after
/// the live fix gate (``FixGate`` with its defaults, week-rollover correction on).
struct HostileInput: Sendable, CustomTestStringConvertible {
    /// The decoders under test.
    enum Format: String, Sendable {
        case nmea, gpsd, gpx
    }

    /// What must come of the input.
    enum Outcome: Sendable, Equatable, CustomStringConvertible {
        /// Rejected and counted once for this reason; nothing else comes of it.
        case rejected(LineRejection)
        /// Read, but its fix dropped (by the decoder or the gate) for this reason.
        case dropped(FixDropReason)
        /// Well-formed and not used: nothing rejected or dropped, no update (GPX: no point at all).
        case ignored
        /// An update without a fix, nothing rejected.
        case noFix
        /// Exactly one fix, at this position (degrees) and time; nothing rejected or dropped but, once,
        /// `alsoRejected` and `alsoDropped` (decoding went on after them).
        case fix(
            latitude: Double, longitude: Double, time: Date, alsoRejected: LineRejection? = nil,
            alsoDropped: FixDropReason? = nil)

        /// `fix`, after a line rejected for `reason`.
        static func fixAfter(_ reason: LineRejection, _ fix: Self) -> Self {
            guard case .fix(let latitude, let longitude, let time, _, let dropped) = fix else { return fix }
            return .fix(
                latitude: latitude, longitude: longitude, time: time, alsoRejected: reason, alsoDropped: dropped)
        }

        var description: String {
            switch self {
            case .rejected(let reason): "rejected (\(reason.rawValue))"
            case .dropped(let reason): "dropped (\(reason.rawValue))"
            case .ignored: "ignored"
            case .noFix: "no fix"
            case .fix(let latitude, let longitude, let time, let rejected, let dropped):
                "fix \(latitude), \(longitude) at \(time.timeIntervalSince1970)"
                    + (rejected.map { " after rejecting (\($0.rawValue))" } ?? "")
                    + (dropped.map { " and dropping (\($0.rawValue))" } ?? "")
            }
        }
    }

    let format: Format
    let name: String
    let bytes: [UInt8]
    let outcome: Outcome

    var testDescription: String { "\(format.rawValue): \(name)" }

    init(_ format: Format, _ name: String, _ bytes: [UInt8], _ outcome: Outcome) {
        self.format = format
        self.name = name
        self.bytes = bytes
        self.outcome = outcome
    }

    init(_ format: Format, _ name: String, _ text: String, _ outcome: Outcome) {
        self.init(format, name, Array(text.utf8), outcome)
    }

    /// What the decoder and the gate made of the input, in the terms of ``Outcome``.
    func observe() -> Outcome? {
        var statistics: SourceStatistics
        var updates: [LocationUpdate]
        switch format {
        case .nmea:
            var decoder = NMEADecoder()
            updates = decoder.decode(bytes)
            statistics = decoder.statistics
        case .gpsd:
            var decoder = GpsdDecoder()
            updates = decoder.decode(bytes)
            statistics = decoder.statistics
        case .gpx:
            var decoder = GPXDecoder()
            updates = decoder.decode(bytes).map { point in
                guard let time = point.time else { return LocationUpdate(noFix: .noFix) }
                return LocationUpdate(
                    fix: LocationFix(
                        time: time, latitude: point.latitude, longitude: point.longitude, altitude: point.elevation,
                        mode: .threeDimensional))
            }
            statistics = decoder.statistics
        }
        var gate = FixGate()
        let passed = gate.admitAll(updates, statistics: &statistics)
        let fixes = passed.compactMap(\.fix)
        switch (statistics.rejected.count, statistics.dropped.count, fixes.count) {
        case (1, 0, 0) where statistics.totalRejected == 1: return .rejected(statistics.rejected.keys.first!)
        case (0, 1, 0) where statistics.totalDropped == 1: return .dropped(statistics.dropped.keys.first!)
        case (0, 0, 0) where passed.isEmpty: return .ignored
        case (0, 0, 0) where !passed.isEmpty: return .noFix
        case (0...1, 0...1, 1) where statistics.totalRejected <= 1 && statistics.totalDropped <= 1:
            return .fix(
                latitude: fixes[0].latitude, longitude: fixes[0].longitude, time: fixes[0].time,
                alsoRejected: statistics.rejected.keys.first, alsoDropped: statistics.dropped.keys.first)
        default: return nil
        }
    }
}

extension HostileInput.Outcome {
    /// Whether `observed` is this outcome, positions to 1e-9 degrees.
    func matches(_ observed: Self?) -> Bool {
        switch (self, observed) {
        case (
            .fix(let latitude, let longitude, let time, let rejected, let dropped),
            .fix(let seenLatitude, let seenLongitude, let seenTime, let seenRejected, let seenDropped)
        ):
            abs(latitude - seenLatitude) < 1e-9 && abs(longitude - seenLongitude) < 1e-9 && time == seenTime
                && rejected == seenRejected && dropped == seenDropped
        default: self == observed
        }
    }
}
