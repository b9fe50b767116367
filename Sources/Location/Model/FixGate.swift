import FoundationEssentials

/// Decides which fixes a source passes on: a pure state machine, configurable, counting what it
/// drops and why.
///
/// In order, a fix is dropped when its latitude or longitude is NaN or infinite, out of range, or
/// exactly (0, 0) (unless allowed); its time is moved forward by 1024 GPS weeks while it is before
/// ``Configuration/weekRolloverPivot`` (or dropped if it is before GPS time began); it is then dropped when its time equals (a repeated epoch) the
/// last passed fix. A simulated fix (gpsd status 8, NMEA quality 8 or mode `S`) becomes an update
/// without a fix. Non-finite optional values (altitude, speed, ...) are cleared to `nil`, not
/// dropped. Updates without a fix always pass.
///
/// A fix earlier than the last passed one is held back until the next update decides what it was:
/// the first of a new timeline (a receiver reset, a log of two sessions) when the next is later than
/// it but not later than the last passed fix, and then both pass; a wild timestamp when the next
/// continues the old timeline, and then it is dropped (``FixDropReason/timeWentBackwards``). An
/// update without a time, or the end of the input (``finish(statistics:into:)``), lets a held fix
/// pass. So a new timeline loses no fix, and a wild one costs one fix held back for one epoch.
/// After ``Configuration/backwardsResetCount`` fixes in a row each earlier than the one before, the
/// gate accepts the last as a new timeline.
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
        /// Fixes in a row, each earlier than the one before, after which the gate starts a new timeline
        /// (at least 1); 5 by default.
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

    /// What the gate's checks make of one fix, time aside.
    enum Verdict: Hashable, Sendable {
        /// A fix to place in time (possibly with a corrected time or cleared fields).
        case fix(LocationUpdate)
        /// Not a fix any more (a simulated one): pass this update without a fix.
        case noFix(LocationUpdate)
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
    /// A fix earlier than ``lastTime``, waiting for the next update to say whether a new timeline began.
    private var held: LocationUpdate?
    private var backwardsInARow = 0

    /// Creates a gate.
    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
    }

    /// Checks one update, appending what passes to `output` in order: nothing, the update, or a fix
    /// held back before it and then the update (see ``FixGate``). Drops and corrections are counted
    /// in `statistics`.
    public mutating func admit(
        _ update: LocationUpdate, statistics: inout SourceStatistics, into output: inout [LocationUpdate]
    ) {
        switch verdict(update, statistics: &statistics) {
        case .drop(let reason):
            statistics.dropped[reason, default: 0] += 1
        case .noFix(let update):
            settleHeld(before: update.time, statistics: &statistics, into: &output)
            output.append(update)
        case .fix(let update):
            place(update, statistics: &statistics, into: &output)
        }
    }

    /// Checks every update of a finite input in order and finishes it: what passes, in order.
    public mutating func admitAll(
        _ updates: some Sequence<LocationUpdate>, statistics: inout SourceStatistics
    ) -> [LocationUpdate] {
        var output: [LocationUpdate] = []
        for update in updates { admit(update, statistics: &statistics, into: &output) }
        finish(statistics: &statistics, into: &output)
        return output
    }

    /// Ends the input: a fix still held back passes (nothing came to contradict it).
    public mutating func finish(statistics: inout SourceStatistics, into output: inout [LocationUpdate]) {
        settleHeld(before: nil, statistics: &statistics, into: &output)
    }

    /// Lets a held fix pass and forgets the last time, so that the next fix starts a new timeline (a
    /// file replay's next lap).
    public mutating func reset(statistics: inout SourceStatistics, into output: inout [LocationUpdate]) {
        finish(statistics: &statistics, into: &output)
        lastTime = nil
        backwardsInARow = 0
    }

    /// Places a fix in time against the last passed one and the one held back.
    private mutating func place(
        _ update: LocationUpdate, statistics: inout SourceStatistics, into output: inout [LocationUpdate]
    ) {
        let time = update.time ?? .distantPast
        if let candidate = held?.time {
            if time == candidate {
                if configuration.dropsDuplicateTimes {
                    statistics.dropped[.duplicateTime, default: 0] += 1
                    return
                }
            } else if time < candidate {
                // Further back again: the held one was no timeline; this one may be.
                statistics.dropped[.timeWentBackwards, default: 0] += 1
                backwardsInARow += 1
                held = nil
                if backwardsInARow >= configuration.backwardsResetCount {
                    pass(update, into: &output)
                } else {
                    held = update
                }
                return
            }
            settleHeld(before: time, statistics: &statistics, into: &output)
        }
        if let lastTime {
            if time == lastTime && configuration.dropsDuplicateTimes {
                statistics.dropped[.duplicateTime, default: 0] += 1
                return
            }
            if time < lastTime && configuration.dropsBackwardTimes {
                backwardsInARow = 1
                if backwardsInARow >= configuration.backwardsResetCount {
                    pass(update, into: &output)
                } else {
                    held = update
                }
                return
            }
        }
        pass(update, into: &output)
    }

    /// Decides the held fix, if any, by the time of the update after it (`nil`: unknown or the end):
    /// it passes when that time is after it and not after the old timeline's last, or is unknown; it
    /// is dropped when that time continues the old timeline.
    private mutating func settleHeld(
        before next: Date?, statistics: inout SourceStatistics, into output: inout [LocationUpdate]
    ) {
        guard let candidate = held, let time = candidate.time else { return }
        if let next, next <= time { return }
        held = nil
        if let next, let lastTime, next > lastTime {
            statistics.dropped[.timeWentBackwards, default: 0] += 1
            backwardsInARow = 0
            return
        }
        pass(candidate, into: &output)
    }

    private mutating func pass(_ update: LocationUpdate, into output: inout [LocationUpdate]) {
        backwardsInARow = 0
        lastTime = update.time
        output.append(update)
    }

    /// Checks one update but for its time against the others: validity, simulation, rollover.
    func verdict(_ update: LocationUpdate, statistics: inout SourceStatistics) -> Verdict {
        guard var fix = update.fix else { return .noFix(update) }
        guard fix.latitude.isFinite, fix.longitude.isFinite else { return .drop(.nonFinite) }
        guard (-90...90).contains(fix.latitude) else { return .drop(.latitudeOutOfRange) }
        guard (-180...180).contains(fix.longitude) else { return .drop(.longitudeOutOfRange) }
        if !configuration.allowsNullIsland && fix.latitude == 0 && fix.longitude == 0 { return .drop(.nullIsland) }
        if fix.isSimulated {
            statistics.dropped[.simulated, default: 0] += 1
            return .noFix(LocationUpdate(noFix: .noFix, time: fix.time, device: update.device))
        }
        statistics.nonFiniteFieldsCleared += Self.clearNonFinite(&fix)
        if let pivot = configuration.weekRolloverPivot, fix.time < pivot {
            // No GPS receiver reports a time before GPS time began, rollover or not.
            guard fix.time >= Self.gpsEpoch else { return .drop(.beforeGPSEpoch) }
            let periods = (pivot.timeIntervalSince(fix.time) / Self.weekRolloverPeriod).rounded(.up)
            fix.time += periods * Self.weekRolloverPeriod
            statistics.weekRolloverCorrections += 1
        }
        var passed = update
        passed.fix = fix
        passed.time = fix.time
        return .fix(passed)
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
