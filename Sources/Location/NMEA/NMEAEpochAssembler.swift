import Foundation

/// Joins the NMEA sentences of one epoch (one time of day) into one update: a pure state machine.
///
/// A receiver sends several sentences per fix (RMC, GGA, GSA, VTG, ...). Sentences carrying a time
/// of day open a new epoch when the time changes; sentences without one (GSA, VTG) join the epoch
/// in progress. An epoch ends when the next begins or the input ends; it then becomes one update.
///
/// Only RMC and ZDA carry a date. Epochs seen before the first date wait (up to
/// ``maximumUndatedEpochs``) and are dated backwards from it; later epochs take the last date, plus
/// one day when the time of day wraps past midnight.
///
/// RMC, GGA and GNS always have a time field: one with the field empty (a receiver that lost its
/// fix) starts an epoch without a time, which becomes a no-fix update without a time. Validity
/// comes from the position sentences: RMC and GLL status and mode, GGA quality, GNS modes.
///
/// At the end of the input, the epoch in progress becomes an update only if it has every kind of
/// sentence that all complete epochs had: a recording cut off in the middle of an epoch does not
/// yield a half-known position (gpsd, which waits for the end of the cycle, would not report it
/// either); such a fix is counted as ``FixDropReason/incompleteEpoch``.
struct NMEAEpochAssembler {
    /// Epochs kept waiting for a date before the oldest is dropped.
    static let maximumUndatedEpochs = 600

    /// The date to assume (days since 1970) when a file never gives one; `nil` drops such fixes.
    var fallbackDay: Int?

    private var pending = Epoch()
    /// The kinds of sentence every complete timed epoch so far had.
    private var commonKinds: UInt16?
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
        if pending.timeOfDay != nil {
            commonKinds = commonKinds.map { $0 & pending.kinds } ?? pending.kinds
        }
        finish(pending, into: &output, statistics: &statistics)
        pending = Epoch()
    }

    /// Ends the input: completes the epoch in progress and any still waiting for a date.
    mutating func finish(into output: inout [LocationUpdate], statistics: inout SourceStatistics) {
        let required = commonKinds ?? 0
        if pending.kinds & required == required {
            finish(pending, into: &output, statistics: &statistics)
        } else if pending.isFix {
            statistics.dropped[.incompleteEpoch, default: 0] += 1
        }
        pending = Epoch()
        commonKinds = nil
        if !undated.isEmpty {
            let waiting = undated
            undated = []
            for epoch in waiting {
                if let fallbackDay {
                    emit(epoch, day: fallbackDay, into: &output)
                } else if epoch.isFix {
                    statistics.dropped[.missingDate, default: 0] += 1
                } else {
                    output.append(LocationUpdate(noFix: .noFix))
                }
            }
        }
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
                    emit(earlier, day: (earlier.timeOfDay ?? 0) > time ? day - 1 : day, into: &output)
                }
            }
            emit(epoch, day: day, into: &output)
        } else if var day = knownDay {
            if time < knownDayTimeOfDay - 43_200_000 {
                day += 1
                knownDay = day
            }
            knownDayTimeOfDay = time
            emit(epoch, day: day, into: &output)
        } else {
            if undated.count >= Self.maximumUndatedEpochs {
                let oldest = undated.removeFirst()
                if oldest.isFix { statistics.dropped[.missingDate, default: 0] += 1 }
            }
            undated.append(epoch)
        }
    }

    private func emit(_ epoch: Epoch, day: Int, into output: inout [LocationUpdate]) {
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

    var isFix: Bool { latitude != nil && longitude != nil && sawValid && !sawInvalid }

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
        // NMEA 2.3+: N = data not valid; A, D, E, F, M, P, R, S are fixes of some kind.
        if indicator == "N" { sawInvalid = true }
        modeIndicator = indicator
    }

    mutating func merge(_ sentence: NMEASentence) {
        kinds |= sentence.kindBit
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
        let mode: LocationFixMode =
            switch gsaFixType {
            case 3: .threeDimensional
            case 2: .twoDimensional
            default: altitude == nil ? .twoDimensional : .threeDimensional
            }
        var accuracy: Double? = nil
        if let latitudeError, let longitudeError {
            accuracy = (latitudeError * latitudeError + longitudeError * longitudeError).squareRoot()
        }
        let quality = LocationQuality(
            hdop: hdop, vdop: vdop, pdop: pdop, geoidSeparation: geoidSeparation, nmeaQuality: quality,
            nmeaModeIndicator: modeIndicator, differentialAge: differentialAge)
        return LocationUpdate(
            fix: LocationFix(
                time: time, latitude: latitude, longitude: longitude, altitude: altitude, speed: speed,
                course: course, horizontalAccuracy: accuracy, mode: mode,
                satellitesUsed: satellites ?? (gsaSatellites > 0 ? gsaSatellites : nil), quality: quality))
    }
}
