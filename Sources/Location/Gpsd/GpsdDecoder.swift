import FoundationEssentials
import Logging

/// Decodes gpsd's JSON lines, as read from gpsd or from a `gpspipe -w` capture, into one update per
/// epoch: a pure state machine shared by the live ``GpsdSource`` and the file replay.
///
/// gpsd often sends several TPVs for one epoch, each with more fields: TPVs with the same time, fix
/// state and device are merged, and the epoch becomes one update when a TPV of another epoch
/// arrives, when the live source's epoch timer fires (``flush(into:)``), or at the end of a capture.
/// Mode 0 or 1 (or a TPV without a position) is "no fix": an update without a fix, never NaN.
///
/// SKY messages supply DOPs and the satellites used to their epoch. gpsd sends an epoch's SKY
/// before its TPV or after it, depending on the receiver's sentence order, and gpsd 3.22 gives SKY
/// no time: the order is learned from the first of the two after the start (or a reconnection),
/// leaving out the TPVs without a time that gpsd sends before it knows the date; a SKY with a time
/// (gpsd 3.23 and later) joins the epoch of that time whatever the order. An epoch without a SKY
/// of its own takes the latest one before it.
///
/// A fix without a time (gpsd had no date: a receiver that sends GGA or GLL but no RMC or ZDA) is
/// placed at the time `timelessFixTime` gives, the live source's clock; without one (a capture,
/// which cannot tell when it was) it is dropped (``FixDropReason/missingTime``). A TPV with a time
/// at the same position as the timeless epoch before it is that epoch, reported again once gpsd
/// knew the date (the first epoch of most sessions): they merge.
///
/// Lines longer than gpsd's 10,240-character limit, lines that are not JSON objects, objects
/// without a class and messages with unreadable fields are rejected and counted, each reason logged
/// once; other classes (WATCH, GST, PPS, ...), comments and NMEA pass-through lines are ignored.
public struct GpsdDecoder {
    /// gpsd's limit on the length of one JSON message (`GPS_JSON_RESPONSE_MAX`), in bytes.
    public static let maximumLineLength = 10_240

    /// Counters of lines read, used, ignored and rejected.
    public var statistics = SourceStatistics()
    /// The device whose messages are used (a gpsd path such as `/dev/ttyACM0`); `nil` uses any.
    public let device: String?

    /// What one line was, for the live source's connection logic.
    enum LineOutcome: Equatable {
        case version(GpsdVersion)
        case message
        case ignored
        case rejected(LineRejection)
    }

    /// Whether an epoch's SKY comes before its TPV; `nil` until the first of them arrives.
    private var skyFirst: Bool?
    private var pending: GpsdTPV?
    /// The latest SKY when the pending epoch's first TPV arrived, and the latest one since.
    private var skyBefore: GpsdSKY?
    private var skyAfter: GpsdSKY?
    private var latestSky: GpsdSKY?
    /// Whether a SKY came while no epoch was in progress (since the last one ended), and whether
    /// one had when the pending epoch's first TPV arrived: that SKY is then the epoch's own where
    /// gpsd sends SKY first, and the epoch need not wait for one after it.
    private var skySinceEpochEnded = false
    private var skyBeforeIsFresh = false
    private let timelessFixTime: (@Sendable () -> Date)?
    private var deviceAvailable: Bool?
    private var lastDevice: String?
    private var lastStatus: LocationUpdate.Status?
    /// Counts epochs opened, so that the live source can time each one.
    private(set) var epochsOpened = 0
    /// The fields the latest fix had: gpsd then knows them for this receiver. An epoch whose TPVs
    /// lack its altitude is still incomplete (``pendingEpochAwaitsAltitude``); one that has all of
    /// them, and its SKY, is whole (``pendingEpochIsComplete``). `nil` after the start and each
    /// reconnection, so that the first epoch waits for its altitude and is never taken as whole.
    private var expectedFields: GpsdTPV.Fields?
    /// How many 3D fixes in a row came without an altitude (since the start or the last
    /// reconnection): from ``threeDimensionalWithoutAltitudeLimit`` on, a 3D epoch without one
    /// is not held for it (``pendingEpochAwaitsAltitude``).
    private var threeDimensionalWithoutAltitude = 0
    /// How many 3D fixes without an altitude make the decoder stop waiting for one in 3D epochs.
    static let threeDimensionalWithoutAltitudeLimit = 3
    private var log: OnceLogger

    /// Creates a decoder.
    ///
    /// - Parameters:
    ///   - device: use only this device's messages; `nil` uses any device's.
    ///   - logger: where the first rejection of each kind and gpsd's ERROR messages are logged (info); nothing is logged without one.
    ///   - timelessFixTime: the time of a fix that gpsd sent without one (the live source's clock,
    ///     called when the fix is reported); `nil` drops such fixes (``FixDropReason/missingTime``).
    public init(
        device: String? = nil, logger: Logger = .discarding,
        timelessFixTime: (@Sendable () -> Date)? = nil
    ) {
        self.device = device
        self.log = OnceLogger(logger: logger)
        self.timelessFixTime = timelessFixTime
    }

    /// Decodes a whole capture (for tests and tools): every update, in order.
    public mutating func decode(_ bytes: [UInt8]) -> [LocationUpdate] {
        decodeAll(bytes)
    }

    /// Whether an epoch is waiting to become an update.
    var hasPendingEpoch: Bool { pending != nil }

    /// Whether the epoch in progress is a fix without an altitude while one is to be expected:
    /// gpsd has not sent all of it yet. gpsd 3.22 sends an epoch of a u-blox 8's NMEA as a TPV at
    /// RMC (3D, without the altitude) and, about 0.85 s later (after the next epoch's SKY), one of
    /// the same time with the altitude; the live source holds such an epoch longer
    /// (``GpsdConfiguration/incompleteEpochTimeout``) and reports it as soon as the altitude comes.
    ///
    /// Expected: after a fix with an altitude, and in a 3D epoch (a 3D fix has one) unless
    /// ``threeDimensionalWithoutAltitudeLimit`` 3D fixes in a row came without. So an epoch that
    /// ended without its altitude (a receiver that lost its vertical fix, the last epoch before a
    /// capture's gap) does not make the next 3D epoch go without the altitude gpsd is still to
    /// send; a receiver without altitudes costs one held epoch per connection in 2D, three in 3D.
    var pendingEpochAwaitsAltitude: Bool {
        guard let epoch = pending, epoch.isFix, !epoch.hasAltitude else { return false }
        if expectedFields?.contains(.altitude) ?? true { return true }
        return epoch.fields.contains(.threeDimensional)
            && threeDimensionalWithoutAltitude < Self.threeDimensionalWithoutAltitudeLimit
    }

    /// Whether the epoch in progress is a fix with every field the fix before it had, and with its
    /// own SKY: gpsd has nothing more to send for it, and the live source reports it at once
    /// rather than at ``GpsdConfiguration/epochTimeout`` (a wake-up of its thread a fix saved, and
    /// the fix out 0.5 s sooner). Its SKY: one with the epoch's time (gpsd 3.23 and later); without
    /// times (gpsd 3.22), the SKY that joined it after its TPV, or one that came between the end
    /// of the epoch before and its first TPV (gpsd sends SKY first: not the learned order, which a
    /// connection made between an epoch's SKY and its TPV learns wrong). Never the first epoch
    /// after the start or a reconnection, nor a fix with fewer fields than the one before (a
    /// receiver whose epochs come in parts waits for the rest, as before), nor one that awaits its
    /// altitude (``pendingEpochAwaitsAltitude``).
    var pendingEpochIsComplete: Bool {
        guard let expected = expectedFields, let epoch = pending, epoch.isFix, epoch.fields.isSuperset(of: expected),
            !pendingEpochAwaitsAltitude
        else { return false }
        if skyAfter != nil { return true }
        guard let skyBefore else { return false }
        if let skyTime = skyBefore.time, let time = epoch.time { return skyTime == time }
        return skyBeforeIsFresh
    }

    /// Decodes one line (without its line feed), appending the updates it completes.
    mutating func decodeLine(_ line: UnsafeBufferPointer<UInt8>, into output: inout [LocationUpdate]) -> LineOutcome {
        statistics.linesRead += 1
        statistics.bytesRead += line.count + 1
        var end = line.count
        while end > 0, line[end - 1] == 0x0D || line[end - 1] == 0x20 { end -= 1 }
        guard end > 0 else { return .ignored }
        guard end <= Self.maximumLineLength else { return reject(.tooLong, line) }
        let content = UnsafeBufferPointer(rebasing: line[0..<end])
        switch content[0] {
        case UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "!"):
            // Comments, and NMEA that gpsd passed through (`"nmea":true` or `gpspipe -r`).
            statistics.linesIgnored += 1
            return .ignored
        default:
            break
        }
        switch GpsdMessage.decode(content) {
        case .failure(.notJSON):
            return reject(content.contains { ($0 < 0x20 && $0 != 0x09) || $0 == 0x7F } ? .binary : .notJSON, line)
        case .failure(.noClass):
            return reject(.unknown, line)
        case .failure(.invalidField):
            return reject(.invalidField, line)
        case .success(let message):
            return handle(message, into: &output)
        }
    }

    /// Counts a line that the reader discarded for exceeding ``maximumLineLength`` before its end.
    mutating func countTooLongLine() {
        statistics.linesRead += 1
        statistics.rejected[.tooLong, default: 0] += 1
        log.log(
            "gpsd.tooLong", "Rejected a gpsd line; later rejections of this kind are only counted",
            metadata: ["event": "gpsd.line.rejected", "gpsd.reason": "tooLong", "gpsd.line": "\(statistics.linesRead)"])
    }

    /// Ends the epoch in progress now (the live source's timer): appends its update, if any.
    mutating func flush(into output: inout [LocationUpdate]) {
        guard let epoch = pending else { return }
        emit(epoch, into: &output)
        pending = nil
        skyBefore = nil
        skyAfter = nil
    }

    /// The connection to gpsd is gone: ends the epoch in progress and, unless the last update
    /// already said so, appends a "source unavailable" update.
    mutating func connectionLost(into output: inout [LocationUpdate]) {
        flush(into: &output)
        latestSky = nil
        skySinceEpochEnded = false
        skyFirst = nil
        deviceAvailable = nil
        expectedFields = nil
        threeDimensionalWithoutAltitude = 0
        if lastStatus != .sourceUnavailable {
            append(LocationUpdate(noFix: .sourceUnavailable, device: device ?? lastDevice), into: &output)
        }
    }

    private mutating func handle(_ message: GpsdMessage, into output: inout [LocationUpdate]) -> LineOutcome {
        switch message {
        case .version(let version):
            statistics.linesDecoded += 1
            return .version(version)
        case .tpv(let tpv):
            guard isWatched(tpv.device) else { return ignore() }
            statistics.linesDecoded += 1
            receive(tpv, into: &output)
        case .sky(let sky):
            guard isWatched(sky.device) else { return ignore() }
            statistics.linesDecoded += 1
            receive(sky)
        case .devices(let devices):
            statistics.linesDecoded += 1
            let watched = devices.filter { $0.activated != false && isWatched($0.path) }
            if watched.isEmpty {
                deviceGone(into: &output)
            } else {
                deviceAvailable = true
            }
        case .device(let reported):
            guard isWatched(reported.path) else { return ignore() }
            statistics.linesDecoded += 1
            if reported.activated == false {
                // With no device chosen, only the loss of the device that gave the fixes matters.
                if device != nil || lastDevice == nil || reported.path == nil || reported.path == lastDevice {
                    deviceGone(into: &output)
                }
            } else if reported.activated == true {
                deviceAvailable = true
            }
        case .error(let text):
            statistics.linesDecoded += 1
            statistics.gpsdErrors += 1
            log.log(
                "gpsd.error.\(text)", "gpsd reported an error",
                metadata: ["event": "gpsd.error", "gpsd.message": "\(text)"])
        case .other:
            return ignore()
        }
        return .message
    }

    private mutating func ignore() -> LineOutcome {
        statistics.linesIgnored += 1
        return .ignored
    }

    private func isWatched(_ path: String?) -> Bool {
        guard let device, let path else { return true }
        return path == device
    }

    private mutating func receive(_ sky: GpsdSKY) {
        if skyFirst == nil { skyFirst = pending == nil }
        latestSky = sky
        guard let epoch = pending else {
            skySinceEpochEnded = true
            return
        }
        if let time = sky.time, let epochTime = epoch.time {
            // A SKY with a time joins its own epoch.
            if time == epochTime { skyAfter = sky }
        } else if skyFirst == false {
            skyAfter = sky
        }
    }

    private mutating func deviceGone(into output: inout [LocationUpdate]) {
        flush(into: &output)
        latestSky = nil
        if deviceAvailable != false {
            deviceAvailable = false
            append(LocationUpdate(noFix: .deviceUnavailable, device: device ?? lastDevice), into: &output)
        }
    }

    private mutating func receive(_ tpv: GpsdTPV, into output: inout [LocationUpdate]) {
        // A "fix" mode without a position carries nothing to report (gpsd sends such TPVs from GSA).
        if (tpv.mode ?? 0) >= 2 && !tpv.isFix && tpv.latitude == nil && tpv.longitude == nil { return }
        deviceAvailable = true
        if let path = tpv.device { lastDevice = path }
        if var epoch = pending {
            // gpsd reports an epoch without a time until a sentence of it gives the date, then again
            // with the time: the same epoch when the position is the same.
            let sameTime =
                epoch.time == tpv.time
                || (epoch.time == nil && epoch.latitude == tpv.latitude && epoch.longitude == tpv.longitude)
            if sameTime && epoch.isFix == tpv.isFix && (tpv.device == nil || epoch.device == tpv.device) {
                epoch.merge(tpv)
                pending = epoch
                return
            }
            pending = nil
            emit(epoch, into: &output)
        }
        if skyFirst == nil, tpv.time != nil { skyFirst = false }
        pending = tpv
        // This epoch's SKY if gpsd sends SKY first; otherwise the stand-in until the epoch's own comes.
        skyBefore = latestSky.flatMap { sky in
            guard let time = sky.time, let epochTime = tpv.time else { return sky }
            return time <= epochTime ? sky : nil
        }
        skyAfter = nil
        skyBeforeIsFresh = skySinceEpochEnded
        skySinceEpochEnded = false
        epochsOpened += 1
    }

    private mutating func emit(_ epoch: GpsdTPV, into output: inout [LocationUpdate]) {
        let path = epoch.device ?? device ?? lastDevice
        guard epoch.isFix, let latitude = epoch.latitude, let longitude = epoch.longitude else {
            append(LocationUpdate(noFix: .noFix, time: epoch.time, device: path), into: &output)
            return
        }
        guard let time = epoch.time ?? timelessFixTime?() else {
            statistics.dropped[.missingTime, default: 0] += 1
            return
        }
        expectedFields = epoch.fields
        if epoch.hasAltitude {
            threeDimensionalWithoutAltitude = 0
        } else if epoch.fields.contains(.threeDimensional) {
            threeDimensionalWithoutAltitude += 1
        }
        var accuracy = epoch.eph
        if accuracy == nil, let epx = epoch.epx, let epy = epoch.epy { accuracy = (epx * epx + epy * epy).squareRoot() }
        let sky = skyAfter ?? skyBefore
        let fix = LocationFix(
            time: time, latitude: latitude, longitude: longitude, altitude: epoch.altitudeMSL ?? epoch.altitude,
            speed: epoch.speed, course: epoch.track, horizontalAccuracy: accuracy,
            mode: (epoch.mode ?? 2) >= 3 ? .threeDimensional : .twoDimensional, satellitesUsed: sky?.satellitesUsed,
            quality: LocationQuality(
                hdop: sky?.hdop, vdop: sky?.vdop, pdop: sky?.pdop, verticalAccuracy: epoch.epv,
                speedAccuracy: epoch.eps, courseAccuracy: epoch.epd, climb: epoch.climb,
                ellipsoidAltitude: epoch.altitudeHAE, geoidSeparation: epoch.geoidSeparation, gpsdStatus: epoch.status))
        append(LocationUpdate(fix: fix, device: path), into: &output)
    }

    private mutating func append(_ update: LocationUpdate, into output: inout [LocationUpdate]) {
        lastStatus = update.status
        output.append(update)
    }

    private mutating func reject(_ reason: LineRejection, _ line: UnsafeBufferPointer<UInt8>) -> LineOutcome {
        statistics.rejected[reason, default: 0] += 1
        log.log(
            "gpsd.\(reason.rawValue)", "Rejected a gpsd line; later rejections of this kind are only counted",
            metadata: [
                "event": "gpsd.line.rejected", "gpsd.reason": "\(reason.rawValue)",
                "gpsd.line": "\(statistics.linesRead)",
                "gpsd.excerpt": "\(printableExcerpt(line))",
            ])
        return .rejected(reason)
    }
}

extension GpsdDecoder: LineDecoder {
    mutating func decode(line: UnsafeBufferPointer<UInt8>, into output: inout [LocationUpdate]) {
        _ = decodeLine(line, into: &output)
    }

    mutating func countTooLongLine(bytes: Int) {
        statistics.bytesRead += bytes
        countTooLongLine()
    }

    mutating func finish(into output: inout [LocationUpdate]) {
        flush(into: &output)
    }
}
