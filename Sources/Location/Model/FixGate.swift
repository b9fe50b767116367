import Foundation

/// Decides which fixes a source passes on: a pure state machine, configurable, counting what it
/// drops and why.
///
/// In order, a fix is dropped when its latitude or longitude is NaN or infinite, out of range, or
/// exactly (0, 0) (unless allowed); its time is moved forward by 1024 GPS weeks while it is before
/// ``Configuration/weekRolloverPivot`` (or dropped if it is before GPS time began); it is then dropped when its time equals (a repeated epoch) or
/// precedes (time going backwards) the last passed fix. Non-finite optional values (altitude, speed,
/// ...) are cleared to `nil`, not dropped. Updates without a fix always pass.
///
/// So that one wild timestamp cannot block a source for ever, after
/// ``Configuration/backwardsResetCount`` fixes in a row went backwards the gate accepts the next
/// one as a new timeline.
public struct FixGate: Sendable {
    /// What the gate checks.
    public struct Configuration: Hashable, Sendable {
        /// Whether (0, 0) is a real position here (a ship in the Gulf of Guinea); `false` by default.
        public var allowsNullIsland: Bool
        /// Whether a fix with the same time as the previous one is dropped; `true` by default.
        public var dropsDuplicateTimes: Bool
        /// Whether a fix earlier than the previous one is dropped; `true` by default.
        public var dropsBackwardTimes: Bool
        /// Fix times before this are 1024 GPS weeks (19.6 years) too early, from receivers hit by the
        /// week-number rollover, and are moved forward until they are not; `nil` turns this off.
        /// The default for live sources is 2019-04-07T00:00:00Z, the last rollover.
        public var weekRolloverPivot: Date?
        /// Backward fixes in a row after which the gate starts a new timeline (at least 1); 5 by default.
        public var backwardsResetCount: Int

        /// The last GPS week rollover, 2019-04-07T00:00:00Z (the second of the 10-bit week number).
        public static let lastWeekRollover = Date(timeIntervalSince1970: 1_554_595_200)

        /// Creates a configuration; the defaults suit a live receiver.
        public init(
            allowsNullIsland: Bool = false, dropsDuplicateTimes: Bool = true, dropsBackwardTimes: Bool = true,
            weekRolloverPivot: Date? = Configuration.lastWeekRollover, backwardsResetCount: Int = 5
        ) {
            self.allowsNullIsland = allowsNullIsland
            self.dropsDuplicateTimes = dropsDuplicateTimes
            self.dropsBackwardTimes = dropsBackwardTimes
            self.weekRolloverPivot = weekRolloverPivot
            self.backwardsResetCount = max(1, backwardsResetCount)
        }

        /// For recordings: as the default, but without week-rollover correction, so that a file
        /// recorded in 2005 replays with 2005 dates.
        public static let recording = Configuration(weekRolloverPivot: nil)

        /// Passes every finite, in-range fix: no time checks, (0, 0) allowed, no rollover correction.
        public static let permissive = Configuration(
            allowsNullIsland: true, dropsDuplicateTimes: false, dropsBackwardTimes: false, weekRolloverPivot: nil)
    }

    /// What the gate did with one update.
    public enum Decision: Hashable, Sendable {
        /// Pass this update on (possibly with a corrected time or cleared fields).
        case pass(LocationUpdate)
        /// Drop the update's fix for this reason.
        case drop(FixDropReason)
    }

    /// 1024 weeks in seconds.
    public static let weekRolloverPeriod: TimeInterval = 1024 * 7 * 86_400

    /// When GPS time began, 1980-01-06T00:00:00Z: with rollover correction on, earlier fix times are
    /// garbage, not rollovers, and are dropped (``FixDropReason/beforeGPSEpoch``).
    public static let gpsEpoch = Date(timeIntervalSince1970: 315_964_800)

    /// The checks in force.
    public var configuration: Configuration
    private var lastTime: Date?
    private var backwardsInARow = 0

    /// Creates a gate.
    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
    }

    /// Checks one update, counting drops and corrections in `statistics`.
    public mutating func admit(_ update: LocationUpdate, statistics: inout SourceStatistics) -> LocationUpdate? {
        switch check(update, statistics: &statistics) {
        case .pass(let passed): return passed
        case .drop(let reason):
            statistics.dropped[reason, default: 0] += 1
            return nil
        }
    }

    /// Checks one update: the decision, and the counts of corrections in `statistics`.
    public mutating func check(_ update: LocationUpdate, statistics: inout SourceStatistics) -> Decision {
        guard var fix = update.fix else { return .pass(update) }
        guard fix.latitude.isFinite, fix.longitude.isFinite else { return .drop(.nonFinite) }
        guard (-90...90).contains(fix.latitude) else { return .drop(.latitudeOutOfRange) }
        guard (-180...180).contains(fix.longitude) else { return .drop(.longitudeOutOfRange) }
        if !configuration.allowsNullIsland && fix.latitude == 0 && fix.longitude == 0 { return .drop(.nullIsland) }
        statistics.nonFiniteFieldsCleared += Self.clearNonFinite(&fix)
        if let pivot = configuration.weekRolloverPivot, fix.time < pivot {
            // No GPS receiver reports a time before GPS time began, rollover or not.
            guard fix.time >= Self.gpsEpoch else { return .drop(.beforeGPSEpoch) }
            let periods = (pivot.timeIntervalSince(fix.time) / Self.weekRolloverPeriod).rounded(.up)
            fix.time += periods * Self.weekRolloverPeriod
            statistics.weekRolloverCorrections += 1
        }
        if let lastTime {
            if fix.time == lastTime && configuration.dropsDuplicateTimes { return .drop(.duplicateTime) }
            if fix.time < lastTime && configuration.dropsBackwardTimes {
                backwardsInARow += 1
                if backwardsInARow < configuration.backwardsResetCount { return .drop(.timeWentBackwards) }
            }
        }
        backwardsInARow = 0
        lastTime = fix.time
        var passed = update
        passed.fix = fix
        passed.time = fix.time
        return .pass(passed)
    }

    /// Forgets the last time, so that the next fix starts a new timeline (a file replay's next lap).
    public mutating func reset() {
        lastTime = nil
        backwardsInARow = 0
    }

    private static func clearNonFinite(_ fix: inout LocationFix) -> Int {
        var cleared = 0
        func clear(_ value: inout Double?) {
            if let current = value, !current.isFinite {
                value = nil
                cleared += 1
            }
        }
        clear(&fix.altitude)
        clear(&fix.speed)
        clear(&fix.course)
        clear(&fix.horizontalAccuracy)
        clear(&fix.quality.hdop)
        clear(&fix.quality.vdop)
        clear(&fix.quality.pdop)
        clear(&fix.quality.verticalAccuracy)
        clear(&fix.quality.speedAccuracy)
        clear(&fix.quality.courseAccuracy)
        clear(&fix.quality.climb)
        clear(&fix.quality.ellipsoidAltitude)
        clear(&fix.quality.geoidSeparation)
        clear(&fix.quality.differentialAge)
        return cleared
    }
}
