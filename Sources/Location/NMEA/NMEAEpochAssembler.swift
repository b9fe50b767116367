import FoundationEssentials

/// Joins the NMEA sentences of one epoch (one time of day) into one update: a pure state machine.
///
/// A receiver sends several sentences per fix (RMC, GGA, GSA, VTG, ...). Sentences carrying a time
/// of day open a new epoch when the time changes; sentences without one (GSA, VTG) join the epoch
/// in progress. An epoch ends when the next begins or the input ends; it then becomes one update.
///
/// Only RMC and ZDA carry a date. Epochs seen before the first date wait (up to
/// ``maximumUndatedEpochs``) and are dated backwards from it; later epochs take the last date, plus
/// one day when the time of day wraps past midnight. A receiver that never sends a date (GGA or GLL
/// only) has its epochs dated from ``fallbackDay`` forwards, as soon as the wait is over or at the
/// end of the input; without one they are dropped (``FixDropReason/missingDate``).
///
/// RMC, GGA and GNS always have a time field: one with the field empty (a receiver that lost its
/// fix) starts an epoch without a time, which becomes a no-fix update without a time. Validity
/// comes from the position sentences: RMC and GLL status and mode, GGA quality, GNS modes; and, as
/// gpsd decides it, an epoch whose GGA says fewer than 3 satellites are used has no fix, whatever
/// its quality (several GGAs of one epoch from different talkers, each counting its own
/// constellation, add up; `GN` is the total), unless its GSA says 2D or 3D. A GGA repeating the time of the same talker's GGA in
/// the epoch is a receiver whose clock stopped, and is ignored (gpsd's "latch mode"). An epoch that
/// any sentence calls simulated (GGA quality 8, mode indicator `S`) has mode indicator `S`, so that
/// the fix gate turns it into an update without a fix.
///
/// At the end of the input, the epoch in progress becomes an update only if it has the position
/// sentence that ended the epochs before it (their last RMC, GGA, GNS or GLL, the sentence on which
/// gpsd reports an epoch): a recording cut off before it does not yield a half-known position, and
/// such a fix is counted as ``FixDropReason/incompleteEpoch``.
struct NMEAEpochAssembler {
    /// Epochs kept waiting for a date before the oldest is dropped.
    static let maximumUndatedEpochs = 600

    /// The date to assume (days since 1970) when a file never gives one; `nil` drops such fixes.
    var fallbackDay: Int?

    private var pending = Epoch()
    /// The kind of position sentence that ended the last complete timed epoch.
    private var enderKind: UInt16?
    private var knownDay: Int?
    private var knownDayTimeOfDay = 0
    private var undated: [Epoch] = []

    init(fallbackDay: Int? = nil) {
        self.fallbackDay = fallbackDay
    }

    /// Adds a decoded sentence; appends the updates of any epoch it completes.
    mutating func add(_ sentence: NMEASentence, into output: inout [LocationUpdate], statistics: inout SourceStatistics)
    {
        if let time = sentence.timeOfDay {
            if let current = pending.timeOfDay, current != time {
                close(into: &output, statistics: &statistics)
            } else if pending.timeOfDay == nil && pending.kinds & sentence.kindBit != 0 {
                close(into: &output, statistics: &statistics)
            }
            pending.timeOfDay = time
        } else if sentence.alwaysHasTimeField
            && (pending.timeOfDay != nil || pending.kinds & sentence.kindBit != 0)
        {
            // An RMC, GGA or GNS with an empty time (a receiver that lost its fix, as the Quectel
            // EC21 does) starts an epoch of its own rather than spoiling the last timed one.
            close(into: &output, statistics: &statistics)
        }
        pending.merge(sentence)
    }

    private mutating func close(into output: inout [LocationUpdate], statistics: inout SourceStatistics) {
        if pending.timeOfDay != nil, pending.lastPositionKind != 0 { enderKind = pending.lastPositionKind }
        finish(pending, into: &output, statistics: &statistics)
        pending = Epoch()
    }

    /// Ends the input: completes the epoch in progress and any still waiting for a date.
    mutating func finish(into output: inout [LocationUpdate], statistics: inout SourceStatistics) {
        if enderKind.map({ pending.kinds & $0 != 0 }) ?? true {
            finish(pending, into: &output, statistics: &statistics)
        } else if pending.isFix {
            statistics.dropped[.incompleteEpoch, default: 0] += 1
        }
        pending = Epoch()
        enderKind = nil
        if fallbackDay != nil {
            dateWaitingFromFallback(into: &output, statistics: &statistics)
        }
        let waiting = undated
        undated = []
        for epoch in waiting {
            if epoch.isFix {
                statistics.dropped[.missingDate, default: 0] += 1
            } else {
                output.append(LocationUpdate(noFix: .noFix))
            }
        }
    }

    /// Dates the epochs waiting for a date from ``fallbackDay`` forwards, which then stands for the
    /// known date until the input gives one.
    private mutating func dateWaitingFromFallback(
        into output: inout [LocationUpdate], statistics: inout SourceStatistics
    ) {
        guard let fallbackDay, knownDay == nil, let first = undated.first?.timeOfDay else { return }
        knownDay = fallbackDay
        knownDayTimeOfDay = first
        let waiting = undated
        undated = []
        for epoch in waiting {
            guard let time = epoch.timeOfDay else { continue }
            emit(epoch, day: dayForward(time), into: &output, statistics: &statistics)
        }
    }

    /// The known day for an undated epoch at this time of day, a day later when it wrapped past midnight.
    private mutating func dayForward(_ time: Int) -> Int {
        var day = knownDay ?? 0
        if time < knownDayTimeOfDay - 43_200_000 {
            day += 1
            knownDay = day
        }
        knownDayTimeOfDay = time
        return day
    }

    private mutating func finish(
        _ epoch: Epoch, into output: inout [LocationUpdate], statistics: inout SourceStatistics
    ) {
        guard let time = epoch.timeOfDay else {
            // Only an epoch with a position sentence says anything about the fix.
            guard epoch.kinds & NMEASentence.positionKinds != 0 else { return }
            if epoch.isFix {
                statistics.dropped[.missingTime, default: 0] += 1
            } else {
                output.append(LocationUpdate(noFix: .noFix))
            }
            return
        }
        if let day = epoch.day {
            knownDay = day
            knownDayTimeOfDay = time
            if !undated.isEmpty {
                let waiting = undated
                undated = []
                for earlier in waiting {
                    // An earlier epoch with a later time of day was before midnight.
                    emit(
                        earlier, day: (earlier.timeOfDay ?? 0) > time ? day - 1 : day, into: &output,
                        statistics: &statistics)
                }
            }
            emit(epoch, day: day, into: &output, statistics: &statistics)
        } else if knownDay != nil {
            emit(epoch, day: dayForward(time), into: &output, statistics: &statistics)
        } else {
            if undated.count >= Self.maximumUndatedEpochs {
                if fallbackDay != nil {
                    // Long enough without a date: a receiver that sends none.
                    dateWaitingFromFallback(into: &output, statistics: &statistics)
                    emit(epoch, day: dayForward(time), into: &output, statistics: &statistics)
                    return
                }
                let oldest = undated.removeFirst()
                if oldest.isFix { statistics.dropped[.missingDate, default: 0] += 1 }
            }
            undated.append(epoch)
        }
    }

    private func emit(
        _ epoch: Epoch, day: Int, into output: inout [LocationUpdate], statistics: inout SourceStatistics
    ) {
        guard let timeOfDay = epoch.timeOfDay else { return }
        let time = CivilTime.date(milliseconds: CivilTime.milliseconds(days: day, millisecondOfDay: timeOfDay))
        output.append(epoch.update(time: time))
    }
}

/// What the sentences of one epoch said, merged: later sentences override earlier values.
private struct Epoch {
    /// One bit per kind of sentence merged.
    var kinds: UInt16 = 0
    var timeOfDay: Int?
    var day: Int?
    var latitude: Double?
    var longitude: Double?
    var sawValid = false
    var sawInvalid = false
    var altitude: Double?
    var geoidSeparation: Double?
    var speed: Double?
    var course: Double?
    var hdop: Double?
    var vdop: Double?
    var pdop: Double?
    var satellites: Int?
    var gsaSatellites = 0
    var gsaFixType: Int?
    var quality: Int?
    var modeIndicator: Character?
    var differentialAge: Double?
    var latitudeError: Double?
    var longitudeError: Double?
    /// The kind of the last position sentence merged (RMC, GGA, GNS or GLL), 0 before one.
    var lastPositionKind: UInt16 = 0
    /// One bit per GGA talker merged (``talkerBit(_:)``), so that a repeated one is recognised.
    var ggaTalkers: UInt8 = 0
    /// Satellites used: the `GN` GGA's total, and the sum of the other talkers' counts.
    var ggaTotalSatellites: Int?
    var ggaSatelliteSum = 0
    var isSimulated = false

    /// Whether the epoch has a position that its sentences call valid, from at least 3 satellites if
    /// a GGA says how many (unless a GSA says the receiver has a 2D or 3D solution, as the Garmin
    /// 25LP's GSA does while its GGA says 00, and as gpsd, which takes the GSA's mode, decides).
    var isFix: Bool {
        latitude != nil && longitude != nil && sawValid && !sawInvalid
            && (ggaTalkers == 0 || (ggaTotalSatellites ?? ggaSatelliteSum) >= 3 || (gsaFixType ?? 0) >= 2)
    }

    /// A bit for each constellation's talker; 0x40 for any other, 0x80 for `GN` (all of them).
    static func talkerBit(_ talker: UInt16) -> UInt8 {
        switch talker {
        case 0x4750: 0x01  // GP
        case 0x474C: 0x02  // GL
        case 0x4741: 0x04  // GA
        case 0x4742, 0x4244: 0x08  // GB, BD
        case 0x4751, 0x515A: 0x10  // GQ, QZ
        case 0x4749: 0x20  // GI
        case 0x474E: 0x80  // GN
        default: 0x40
        }
    }

    private mutating func position(_ latitude: Double?, _ longitude: Double?) {
        guard let latitude, let longitude else { return }
        self.latitude = latitude
        self.longitude = longitude
    }

    private mutating func validity(_ valid: Bool?) {
        switch valid {
        case true?: sawValid = true
        case false?: sawInvalid = true
        case nil: break
        }
    }

    private mutating func mode(_ indicator: Character?) {
        guard let indicator else { return }
        // NMEA 2.3+: N = data not valid; A, D, E, F, M, P, R are fixes of some kind; S is a simulator.
        if indicator == "N" { sawInvalid = true }
        if indicator == "S" { isSimulated = true }
        modeIndicator = indicator
    }

    mutating func merge(_ sentence: NMEASentence) {
        if case .gga(let gga) = sentence {
            let bit = Self.talkerBit(gga.talker)
            // The same talker's GGA again at the same time: a receiver whose clock stopped.
            guard ggaTalkers & bit == 0 || bit == 0x40 else { return }
            ggaTalkers |= bit
            if bit == 0x80 {
                ggaTotalSatellites = gga.satellites ?? 0
            } else {
                ggaSatelliteSum += gga.satellites ?? 0
            }
        }
        kinds |= sentence.kindBit
        if sentence.kindBit & NMEASentence.positionKinds != 0 { lastPositionKind = sentence.kindBit }
        switch sentence {
        case .rmc(let rmc):
            position(rmc.latitude, rmc.longitude)
            validity(rmc.valid)
            mode(rmc.modeIndicator)
            if let speed = rmc.speed { self.speed = speed }
            if let course = rmc.course { self.course = course }
            if let day = rmc.day { self.day = day }
        case .gga(let gga):
            position(gga.latitude, gga.longitude)
            if let quality = gga.quality {
                self.quality = quality
                validity(quality > 0)
                if quality == 8 { isSimulated = true }
            }
            if let satellites = gga.satellites { self.satellites = satellites }
            if let hdop = gga.hdop { self.hdop = hdop }
            if let altitude = gga.altitude { self.altitude = altitude }
            if let separation = gga.geoidSeparation { geoidSeparation = separation }
            if let age = gga.differentialAge { differentialAge = age }
        case .gns(let gns):
            position(gns.latitude, gns.longitude)
            if !gns.modes.isEmpty {
                validity(gns.modes.contains { $0 != "N" })
                if gns.modes.contains("S") { isSimulated = true }
                if let first = gns.modes.first(where: { $0 != "N" }) { modeIndicator = first }
            }
            if let satellites = gns.satellites { self.satellites = satellites }
            if let hdop = gns.hdop { self.hdop = hdop }
            if let altitude = gns.altitude { self.altitude = altitude }
            if let separation = gns.geoidSeparation { geoidSeparation = separation }
        case .gll(let gll):
            position(gll.latitude, gll.longitude)
            validity(gll.valid)
            mode(gll.modeIndicator)
        case .gsa(let gsa):
            if let fixType = gsa.fixType { gsaFixType = fixType }
            gsaSatellites += gsa.satellitesUsed
            if let pdop = gsa.pdop { self.pdop = pdop }
            if let hdop = gsa.hdop { self.hdop = hdop }
            if let vdop = gsa.vdop { self.vdop = vdop }
        case .vtg(let vtg):
            // VTG's mode says nothing of the position; it often says N while the position is valid.
            if let course = vtg.course { self.course = course }
            if let speed = vtg.speed { self.speed = speed }
        case .zda(let zda):
            if let day = zda.day { self.day = day }
        case .gst(let gst):
            if let error = gst.latitudeError { latitudeError = error }
            if let error = gst.longitudeError { longitudeError = error }
        }
    }

    func update(time: Date) -> LocationUpdate {
        guard isFix, let latitude, let longitude else { return LocationUpdate(noFix: .noFix, time: time) }
        var satellitesUsed = ggaTotalSatellites ?? (ggaTalkers != 0 ? ggaSatelliteSum : satellites)
        if let count = satellitesUsed, count < gsaSatellites { satellitesUsed = gsaSatellites }
        let mode: LocationFixMode =
            switch gsaFixType {
            case 3: .threeDimensional
            case 2: .twoDimensional
            // Without GSA, as gpsd: 3D needs an altitude and more than 3 satellites.
            default: altitude == nil || (satellitesUsed ?? 4) <= 3 ? .twoDimensional : .threeDimensional
            }
        var accuracy: Double? = nil
        if let latitudeError, let longitudeError {
            accuracy = (latitudeError * latitudeError + longitudeError * longitudeError).squareRoot()
        }
        let quality = LocationQuality(
            hdop: hdop, vdop: vdop, pdop: pdop, geoidSeparation: geoidSeparation, nmeaQuality: quality,
            nmeaModeIndicator: isSimulated ? "S" : modeIndicator, differentialAge: differentialAge)
        return LocationUpdate(
            fix: LocationFix(
                time: time, latitude: latitude, longitude: longitude, altitude: altitude, speed: speed,
                course: course, horizontalAccuracy: accuracy, mode: mode,
                satellitesUsed: satellitesUsed ?? (gsaSatellites > 0 ? gsaSatellites : nil), quality: quality))
    }
}
