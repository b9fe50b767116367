import FoundationEssentials
import Logging
import AsyncSupport

/// Replays a recorded file as a location source: NMEA 0183, GPX, or a `gpspipe -w` capture of
/// gpsd JSON, detected from the content (``FileFormat/detect(_:fileName:)``).
///
/// Each iteration of ``updates`` reads the file in chunks of 256 KiB (off the cooperative pool; its
/// memory does not grow with the file), decodes it with the same decoders as the live source (a
/// gpsd capture goes through ``GpsdDecoder``, exactly as ``GpsdSource`` would have seen it), passes
/// the fixes through a ``FixGate``, fills in a speed and course the file lacks from the recorded
/// positions and times (``MotionEstimator``) and yields them paced by ``Options/pacing`` on the
/// injected clock, once or in a loop. Updates without a fix are yielded too (an NMEA receiver that
/// lost its fix, a gpsd device that went away). A GPX file is read twice: once to learn which
/// points it stands for (tracks, else routes, else waypoints) and whether all have a time.
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
        /// NMEA only: the UTC date for a file that never gives one (no RMC or ZDA, a receiver that
        /// sends GGA or GLL only); `nil` (default) takes the date at the start of the replay (from the
        /// `now` clock), as gpsd would report such fixes live. Only its day is used.
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
    ///   - logger: where the first rejection of each kind is logged (info level); nothing is logged without one.
    ///   - clock: the clock that paces the replay (tests pass a manual clock; never slept on when
    ///     the pacing is ``ReplayPacing/asFastAsPossible``).
    ///   - now: the wall clock for restamped times.
    /// - Throws: ``LocationError`` with code `.invalidConfiguration` for a non-positive speed or interval.
    public init<C: Clock>(
        path: String, options: Options = Options(), logger: Logger = .discarding,
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

/// One replay of a file: reads it in chunks, decodes, gates, derives missing motion and paces.
private final class FileReplay: UpdateProducer {
    private let path: String
    private let options: Options
    private let logger: Logger
    private let timeline: Timeline
    private let now: @Sendable () -> Date
    private let store: StatisticsStore

    typealias Options = FileSource.Options

    private var format: FileFormat?
    /// The date of the replay's start: the date of NMEA fixes in a file that has none.
    private var replayDate = Date()
    private var file: FileReader?
    /// The first chunk, read to detect the format, waiting to be decoded.
    private var firstChunk: [UInt8]?
    private var lineDecoder: (any LineDecoder)?
    private var splitter = LineSplitter()
    private var gpx = GPXDecoder()
    private var gpxKind = GPXPointKind.track
    /// Whether the GPX file has points without a time: all are then replayed at `untimedInterval`.
    private var gpxUntimed = false
    private var gpxIndex = 0
    private var points: [GPXPoint] = []
    private var decoded: [LocationUpdate] = []
    private var ready: [LocationUpdate] = []
    private var readyIndex = 0
    private var lapDone = false
    private var published = SourceStatistics()
    private var gate: FixGate
    private var motion = MotionEstimator()
    private var pacer: ReplayPacer
    private var wait: (@Sendable (Duration) async throws -> Void)?
    private var lap = 0
    private var lapShift = 0.0
    private var firstTime: Double?
    private var lastTime: Double?
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
        if format == nil { try await load(isolation: actor) }
        while !Task.isCancelled {
            if readyIndex < ready.count {
                var update = ready[readyIndex]
                readyIndex += 1
                if let offset = pacer.offset(forTime: update.time?.timeIntervalSince1970) {
                    let wait = self.wait ?? timeline.start()
                    self.wait = wait
                    do { try await wait(offset) } catch { return nil }
                }
                if options.restampsTimes || (format == .gpx && gpxUntimed) { restamp(&update) }
                own.updates += 1
                if update.fix != nil { own.fixes += 1 }
                publish()
                return update
            }
            ready.removeAll(keepingCapacity: true)
            readyIndex = 0
            if lapDone {
                publish()
                guard options.loops else { return nil }
                try startNextLap()
                continue
            }
            try await decodeChunk(isolation: actor)
        }
        return nil
    }

    private func load(isolation actor: isolated (any Actor)?) async throws(LocationError) {
        let reader = try FileReader.open(path)
        let first = try await reader.read()
        let fileName = String(path.split(separator: "/").last ?? "")
        guard let detected = options.format ?? FileFormat.detect(first, fileName: fileName) else {
            throw LocationError(
                .unknownFormat,
                "'\(path)' is not NMEA 0183, GPX or gpsd JSON (gpspipe -w): its content matches none of them")
        }
        format = detected
        replayDate = now()
        if wait == nil, options.pacing != .asFastAsPossible { wait = timeline.start() }
        logger.debug(
            "Replaying a location file",
            metadata: ["event": "file.replaying", "file.path": "\(path)", "location.format": "\(detected.rawValue)"])
        if detected == .gpx {
            try await surveyGPX(isolation: actor)
            try startLap()
        } else {
            file = reader
            firstChunk = first
            startDecoder()
        }
    }

    /// Reads the GPX file once to learn which points it stands for and whether all are timed.
    private func surveyGPX(isolation actor: isolated (any Actor)?) async throws(LocationError) {
        let path = path
        typealias Survey = (counts: [GPXPointKind: Int], untimed: [GPXPointKind: Int], error: String?)
        let survey = try await fileReads.run { () throws(LocationError) -> Survey in
            let reader = try FileReader.open(path)
            var survey = GPXDecoder(yielding: [])
            var points: [GPXPoint] = []
            while true {
                let chunk = try reader.readBlocking()
                if chunk.isEmpty { break }
                chunk.withUnsafeBufferPointer { survey.decode(chunk: $0, into: &points) }
            }
            survey.finish(into: &points)
            return (survey.pointCounts, survey.untimedCounts, survey.xmlError)
        }
        gpxKind = GPXDecoder.preferredKind(survey.counts)
        gpxUntimed = survey.untimed[gpxKind, default: 0] > 0
        if let error = survey.error {
            logger.info(
                "The GPX file is not well-formed; replaying the points before the error",
                metadata: ["event": "gpx.malformed", "file.path": "\(path)", "error": "\(error)"])
        }
    }

    private func startDecoder() {
        switch format {
        case .gpx:
            gpx = GPXDecoder(yielding: gpxKind)
            gpxIndex = 0
        case .gpsdJSON:
            lineDecoder = GpsdDecoder(device: options.device, logger: logger)
        case .nmea, nil:
            lineDecoder = NMEADecoder(fallbackDate: options.fallbackDate ?? replayDate, logger: logger)
        }
        splitter = LineSplitter()
    }

    private func startLap() throws(LocationError) {
        lapDone = false
        if format == .gpx || lap > 0 { file = try FileReader.open(path) }
        startDecoder()
    }

    private func startNextLap() throws(LocationError) {
        let interval = options.untimedInterval.inSeconds
        if let firstTime, let lastTime { lapShift += lastTime - firstTime + interval }
        lap += 1
        pacer.startLap(gap: interval)
        motion.reset()
        if options.restampsTimes || gpxUntimed { gate.reset(statistics: &own, into: &ready) }
        try startLap()
    }

    /// Reads and decodes the next chunk, gating what it completes into `ready`; at the end of the
    /// file, finishes the lap.
    private func decodeChunk(isolation actor: isolated (any Actor)?) async throws(LocationError) {
        let chunk: [UInt8]
        if let first = firstChunk {
            chunk = first
            firstChunk = nil
        } else {
            chunk = try await file?.read() ?? []
        }
        decoded.removeAll(keepingCapacity: true)
        if format == .gpx {
            chunk.withUnsafeBufferPointer { gpx.decode(chunk: $0, into: &points) }
            if chunk.isEmpty { gpx.finish(into: &points) }
            let interval = options.untimedInterval.inSeconds
            for point in points {
                // Untimed points get evenly spaced stand-in times, replaced when yielded.
                let time = gpxUntimed ? Date(timeIntervalSince1970: Double(gpxIndex) * interval) : point.time!
                decoded.append(LocationUpdate(fix: point.fix(time: time)))
                gpxIndex += 1
            }
            points.removeAll(keepingCapacity: true)
        } else if var decoder = lineDecoder {
            chunk.withUnsafeBufferPointer { splitter.split($0, into: &decoder, output: &decoded) }
            if chunk.isEmpty {
                splitter.finish(into: &decoder, output: &decoded)
                decoder.finish(into: &decoded)
            }
            lineDecoder = decoder
        }
        for update in decoded { admit(update) }
        if chunk.isEmpty {
            let before = ready.count
            gate.finish(statistics: &own, into: &ready)
            deriveMotion(from: before)
            lapDone = true
            file = nil
            if format == .gpx && lap == 0 { countGPX() }
        }
        publish()
    }

    /// Shifts a looped lap's times and passes the update through the gate into `ready`.
    private func admit(_ update: LocationUpdate) {
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
        let before = ready.count
        gate.admit(update, statistics: &own, into: &ready)
        deriveMotion(from: before)
    }

    /// Derives the missing speed and course of the fixes gated into `ready` from `index` on, from
    /// their recorded times (stand-in times of untimed GPX points say nothing of motion).
    private func deriveMotion(from index: Int) {
        guard !(format == .gpx && gpxUntimed) else { return }
        for position in index..<ready.count {
            if let fix = ready[position].fix { ready[position].fix = motion.estimate(fix) }
        }
    }

    /// Counts the GPX decoder's figures (its points, rejections) once, for the first lap.
    private func countGPX() {
        let statistics = gpx.statistics
        own.bytesRead += statistics.bytesRead
        own.linesRead += statistics.linesRead
        own.linesDecoded += statistics.linesDecoded
        for (reason, count) in statistics.rejected { own.rejected[reason, default: 0] += count }
    }

    private func restamp(_ update: inout LocationUpdate) {
        let stamp = now()
        if update.time != nil || update.fix != nil { update.time = stamp }
        update.fix?.time = stamp
    }

    private func publish() {
        if let decoder = lineDecoder, lap == 0 {
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
