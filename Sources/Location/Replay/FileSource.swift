import Foundation
import Logging

/// Replays a recorded file as a location source: NMEA 0183, GPX, or a `gpspipe -w` capture of
/// gpsd JSON, detected from the content (``FileFormat/detect(_:fileName:)``).
///
/// Each iteration of ``updates`` reads the file (off the cooperative pool), decodes it with the
/// same decoders as the live source (a gpsd capture goes through ``GpsdDecoder``, exactly as
/// ``GpsdSource`` would have seen it), passes the fixes through a ``FixGate`` and yields them paced
/// by ``Options/pacing`` on the injected clock, once or in a loop. Updates without a fix are yielded
/// too (an NMEA receiver that lost its fix, a gpsd device that went away).
public struct FileSource: LocationSource {
    /// How the file is replayed.
    public struct Options: Hashable, Sendable {
        /// How fast: recorded pace (default), N times that pace, or as fast as possible.
        public var pacing: ReplayPacing
        /// Whether to start again at the end, for ever; `false` by default.
        public var loops: Bool
        /// The spacing of points without times (a GPX route, a track without `<time>`), in recorded
        /// time (scaled by the pacing like recorded spacing); also the gap between two laps. 1 s by default.
        public var untimedInterval: Duration
        /// Which fixes are dropped; by default ``FixGate/Configuration/recording`` (no week-rollover correction).
        public var gate: FixGate.Configuration
        /// Restamp every fix with the wall-clock time at which it is yielded (for a demo that must look
        /// live); `false` keeps recorded times. Points without a recorded time are always restamped.
        public var restampsTimes: Bool
        /// The format, or `nil` (default) to detect it from the content.
        public var format: FileFormat?
        /// NMEA only: the UTC date for a file that never gives one (no RMC or ZDA); `nil` (default)
        /// drops such fixes as ``FixDropReason/missingDate``.
        public var fallbackDate: Date?
        /// gpsd captures only: use only this device's messages; `nil` (default) uses any device.
        public var device: String?

        /// Creates options; every parameter has the default described on its property.
        public init(
            pacing: ReplayPacing = .recorded, loops: Bool = false, untimedInterval: Duration = .seconds(1),
            gate: FixGate.Configuration = .recording, restampsTimes: Bool = false, format: FileFormat? = nil,
            fallbackDate: Date? = nil, device: String? = nil
        ) {
            self.pacing = pacing
            self.loops = loops
            self.untimedInterval = untimedInterval
            self.gate = gate
            self.restampsTimes = restampsTimes
            self.format = format
            self.fallbackDate = fallbackDate
            self.device = device
        }

        func validate() throws(LocationError) {
            if case .scaled(let factor) = pacing, !(factor > 0 && factor.isFinite) {
                throw LocationError(
                    .invalidConfiguration, "invalid replay speed \(factor): use a positive factor such as 2 or 0.5")
            }
            guard untimedInterval > .zero else {
                throw LocationError(
                    .invalidConfiguration, "invalid untimed interval \(untimedInterval): use a positive duration")
            }
        }
    }

    /// The file replayed.
    public let path: String
    /// How it is replayed.
    public let options: Options
    private let logger: Logger
    private let timeline: Timeline
    private let now: @Sendable () -> Date
    private let store = StatisticsStore()

    /// Creates a file source; nothing is read until ``updates`` is iterated.
    ///
    /// - Parameters:
    ///   - path: the file.
    ///   - options: pacing, looping, gating, format.
    ///   - logger: where the first rejection of each kind is logged (info level).
    ///   - clock: the clock that paces the replay (tests pass a manual clock; never slept on when
    ///     the pacing is ``ReplayPacing/asFastAsPossible``).
    ///   - now: the wall clock for restamped times.
    /// - Throws: ``LocationError`` with code `.invalidConfiguration` for a non-positive speed or interval.
    public init<C: Clock>(
        path: String, options: Options = Options(), logger: Logger = Logger(label: "myeline.location.file"),
        clock: C = ContinuousClock(), now: @escaping @Sendable () -> Date = { Date() }
    ) throws(LocationError) where C.Duration == Duration {
        try options.validate()
        self.path = path
        self.options = options
        self.logger = logger
        self.timeline = Timeline(clock)
        self.now = now
    }

    /// The updates of one replay; see ``FileSource``.
    public var updates: LocationUpdates {
        let path = path
        let options = options
        let logger = logger
        let timeline = timeline
        let now = now
        let store = store
        return LocationUpdates {
            FileReplay(path: path, options: options, logger: logger, timeline: timeline, now: now, store: store)
        }
    }

    /// What the replays read, used, rejected and dropped so far.
    public var statistics: SourceStatistics { store.snapshot }
}

/// A clock, type-erased to "wait until this long after the start".
struct Timeline: Sendable {
    /// Starts a timeline now; the returned function waits until an offset from this start.
    let start: @Sendable () -> @Sendable (Duration) async throws -> Void

    init<C: Clock>(_ clock: C) where C.Duration == Duration {
        start = {
            let origin = clock.now
            return { offset in try await clock.sleep(until: origin.advanced(by: offset), tolerance: nil) }
        }
    }
}

/// One replay of a file: reads, decodes, gates and paces.
private final class FileReplay: UpdateProducer {
    private let path: String
    private let options: Options
    private let logger: Logger
    private let timeline: Timeline
    private let now: @Sendable () -> Date
    private let store: StatisticsStore

    typealias Options = FileSource.Options

    private var bytes: [UInt8]?
    private var format = FileFormat.nmea
    private var decoder: (any LineDecoder)?
    private var published = SourceStatistics()
    private var cursor = 0
    private var gpxPoints: [GPXPoint] = []
    private var gpxUntimed = false
    private var queue: [LocationUpdate] = []
    private var queueIndex = 0
    private var gate: FixGate
    private var pacer: ReplayPacer
    private var wait: (@Sendable (Duration) async throws -> Void)?
    private var lap = 0
    private var lapShift = 0.0
    private var firstTime: Double?
    private var lastTime: Double?
    private var finished = false
    private var own = SourceStatistics()
    private var ownPublished = SourceStatistics()

    init(
        path: String, options: Options, logger: Logger, timeline: Timeline, now: @escaping @Sendable () -> Date,
        store: StatisticsStore
    ) {
        self.path = path
        self.options = options
        self.logger = logger
        self.timeline = timeline
        self.now = now
        self.store = store
        self.gate = FixGate(configuration: options.gate)
        self.pacer = ReplayPacer(pacing: options.pacing)
    }

    func next(isolation actor: isolated (any Actor)?) async throws(LocationError) -> LocationUpdate? {
        if bytes == nil { try await load(isolation: actor) }
        while !Task.isCancelled {
            guard let update = nextDecoded() else {
                publish()
                guard options.loops else { return nil }
                startNextLap()
                continue
            }
            guard var passed = admit(update) else { continue }
            if let offset = pacer.offset(forTime: passed.time?.timeIntervalSince1970) {
                let wait = self.wait ?? timeline.start()
                self.wait = wait
                do { try await wait(offset) } catch { return nil }
            }
            if options.restampsTimes || (format == .gpx && gpxUntimed) { restamp(&passed) }
            own.updates += 1
            if passed.fix != nil { own.fixes += 1 }
            publish()
            return passed
        }
        return nil
    }

    private func load(isolation actor: isolated (any Actor)?) async throws(LocationError) {
        let content = try await readWholeFile(path)
        let fileName = (path as NSString).lastPathComponent
        guard let detected = options.format ?? FileFormat.detect(content, fileName: fileName) else {
            throw LocationError(
                .unknownFormat,
                "'\(path)' is not NMEA 0183, GPX or gpsd JSON (gpspipe -w): its content matches none of them")
        }
        bytes = content
        format = detected
        if wait == nil, options.pacing != .asFastAsPossible { wait = timeline.start() }
        logger.debug(
            "replaying a location file",
            metadata: ["location.file": "\(path)", "location.format": "\(detected.rawValue)"])
        startLap()
    }

    private func startLap() {
        cursor = 0
        queue = []
        queueIndex = 0
        switch format {
        case .nmea:
            decoder = NMEADecoder(fallbackDate: options.fallbackDate, logger: logger)
        case .gpsdJSON:
            decoder = GpsdDecoder(device: options.device, logger: logger)
        case .gpx:
            decoder = nil
            var gpx = GPXDecoder()
            gpxPoints = gpx.decode(bytes ?? [])
            if let error = gpx.xmlError, lap == 0 {
                logger.info(
                    "GPX file is not well-formed; replaying the points before the error",
                    metadata: ["location.file": "\(path)", "gpx.error": "\(error)"])
            }
            gpxUntimed = gpxPoints.contains { $0.time == nil }
            let interval = options.untimedInterval.inSeconds
            queue = gpxPoints.enumerated().map { index, point in
                // Untimed points get evenly spaced stand-in times, replaced when yielded.
                let time = gpxUntimed ? Date(timeIntervalSince1970: Double(index) * interval) : point.time!
                return LocationUpdate(fix: point.fix(time: time))
            }
            if lap == 0 {
                own.bytesRead += gpx.statistics.bytesRead
                own.linesRead += gpx.statistics.linesRead
                own.linesDecoded += gpx.statistics.linesDecoded
                for (reason, count) in gpx.statistics.rejected { own.rejected[reason, default: 0] += count }
            }
            finished = true
        }
    }

    private func startNextLap() {
        let interval = options.untimedInterval.inSeconds
        if let firstTime, let lastTime { lapShift += lastTime - firstTime + interval }
        lap += 1
        finished = false
        pacer.startLap(gap: interval)
        if options.restampsTimes || gpxUntimed { gate.reset() }
        startLap()
    }

    /// The next decoded update, decoding more lines as needed; `nil` at the end of the file.
    private func nextDecoded() -> LocationUpdate? {
        while true {
            if queueIndex < queue.count {
                defer { queueIndex += 1 }
                return queue[queueIndex]
            }
            guard format != .gpx, let bytes, !finished, var decoder else { return nil }
            queue.removeAll(keepingCapacity: true)
            queueIndex = 0
            bytes.withUnsafeBufferPointer { buffer in
                // Decode line by line until something comes out, so that a long file starts at once.
                while queue.isEmpty, cursor < buffer.count {
                    var end = cursor
                    while end < buffer.count, buffer[end] != UInt8(ascii: "\n") { end += 1 }
                    decoder.decode(line: UnsafeBufferPointer(rebasing: buffer[cursor..<end]), into: &queue)
                    cursor = end + 1
                }
                if cursor >= buffer.count && queue.isEmpty {
                    decoder.finish(into: &queue)
                    finished = true
                }
            }
            self.decoder = decoder
            if finished && queue.isEmpty { return nil }
        }
    }

    /// Shifts a looped lap's times and passes the update through the gate.
    private func admit(_ update: LocationUpdate) -> LocationUpdate? {
        var update = update
        if let time = update.time?.timeIntervalSince1970 {
            if lap == 0 {
                firstTime = min(firstTime ?? time, time)
                lastTime = max(lastTime ?? time, time)
            }
            if lapShift != 0 && !options.restampsTimes {
                let shifted = Date(timeIntervalSince1970: time + lapShift)
                update.time = shifted
                update.fix?.time = shifted
            }
        }
        return gate.admit(update, statistics: &own)
    }

    private func restamp(_ update: inout LocationUpdate) {
        let stamp = now()
        if update.time != nil || update.fix != nil { update.time = stamp }
        update.fix?.time = stamp
    }

    private func publish() {
        if let decoder, lap == 0 {
            store.add(decoder.statistics, since: published)
            published = decoder.statistics
        }
        store.add(own, since: ownPublished)
        ownPublished = own
    }
}

extension GPXPoint {
    /// The fix this point stands for, at `time`.
    func fix(time: Date) -> LocationFix {
        let mode: LocationFixMode? =
            switch fix {
            case "2d": .twoDimensional
            case "3d", "dgps", "pps": .threeDimensional
            default: nil
            }
        return LocationFix(
            time: time, latitude: latitude, longitude: longitude, altitude: elevation, speed: speed, course: course,
            mode: mode, satellitesUsed: satellites, quality: LocationQuality(hdop: hdop, vdop: vdop, pdop: pdop))
    }
}
