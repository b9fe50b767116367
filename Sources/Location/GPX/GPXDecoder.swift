import FoundationEssentials

/// One point of a GPX file: a track point, or a route point or waypoint in a file without tracks.
public struct GPXPoint: Hashable, Sendable {
    /// Latitude in degrees (the `lat` attribute).
    public var latitude: Double
    /// Longitude in degrees (the `lon` attribute).
    public var longitude: Double
    /// Elevation in metres (`<ele>`), `nil` if absent.
    public var elevation: Double?
    /// The time (`<time>`, UTC), `nil` if absent.
    public var time: Date?
    /// Speed in metres per second (GPX 1.0 `<speed>`), `nil` if absent.
    public var speed: Double?
    /// Course in degrees true (GPX 1.0 `<course>`), `nil` if absent.
    public var course: Double?
    /// `<fix>`: `none`, `2d`, `3d`, `dgps` or `pps`; `nil` if absent.
    public var fix: String?
    /// Satellites used (`<sat>`), `nil` if absent.
    public var satellites: Int?
    /// `<hdop>`, `<vdop>`, `<pdop>`, `nil` if absent.
    public var hdop: Double?
    /// Vertical dilution of precision.
    public var vdop: Double?
    /// Position dilution of precision.
    public var pdop: Double?
}

/// The kinds of GPX point, by the element that holds them.
public enum GPXPointKind: String, Hashable, Sendable, CaseIterable {
    /// `<trkpt>`, in `<trk><trkseg>`.
    case track
    /// `<rtept>`, in `<rte>`.
    case route
    /// `<wpt>`, directly in `<gpx>`.
    case waypoint
}

/// Decodes GPX 1.0 and 1.1 documents, streaming: fed the document in chunks of any size, it yields
/// the points of one kind as it reads them, in memory bounded by a constant (the XML tokenizer's
/// limits, ``XMLTokenizer``), not by the document.
///
/// Which points a file stands for: its track points in document order (all tracks and segments),
/// or, in a file without track points, its route points, or else its waypoints. A streaming reader
/// cannot know that before the end: ``decode(_:)`` reads a whole document and chooses; a file is
/// read once to count its points (``pointCounts``) and once more for the kind chosen
/// (``preferredKind``), as ``FileSource`` does.
///
/// `<extensions>` are skipped, namespace prefixes and a byte-order mark accepted, points without
/// `<time>` kept (their time is `nil`). Points with an unreadable position, elevation or time are
/// rejected and counted as ``LineRejection/invalidField``; a document that is not well-formed XML
/// keeps the points before the error, counts ``LineRejection/invalidXML`` and says why in
/// ``xmlError``. Control characters, which XML does not allow, are counted as
/// ``LineRejection/binary`` (once per document) and skipped. Foundation's XMLParser is not used:
/// it would bring libxml2 and ICU's data into the agent (issue 24).
public struct GPXDecoder {
    /// Counters: `linesRead` counts points read (of every kind), `linesDecoded` those with a
    /// readable position, elevation and time; rejections are counted by reason.
    public var statistics = SourceStatistics()
    /// Why the document is not well-formed XML, if it is not.
    public private(set) var xmlError: String?
    /// The points of each kind read so far, valid or not.
    public var pointCounts: [GPXPointKind: Int] { collector.counts }
    /// The valid points of each kind that have no time.
    public var untimedCounts: [GPXPointKind: Int] { collector.untimed }

    private var tokenizer = XMLTokenizer()
    private var collector: GPXCollector
    private var failed = false

    /// Creates a decoder that yields the points of `kind` only (and counts the others).
    public init(yielding kind: GPXPointKind) {
        collector = GPXCollector(yielding: [kind])
    }

    /// Creates a decoder that yields the points of these kinds (none: it only counts them).
    init(yielding kinds: Set<GPXPointKind>) {
        collector = GPXCollector(yielding: kinds)
    }

    /// Creates a decoder for ``decode(_:)``, which yields the points a whole document stands for.
    public init() {
        collector = GPXCollector(yielding: Set(GPXPointKind.allCases))
    }

    /// The kind of point a document with these counts stands for: tracks, else routes, else waypoints.
    public static func preferredKind(_ counts: [GPXPointKind: Int]) -> GPXPointKind {
        if counts[.track, default: 0] > 0 { return .track }
        if counts[.route, default: 0] > 0 { return .route }
        return counts[.waypoint, default: 0] > 0 ? .waypoint : .track
    }

    /// Decodes the next chunk of the document, appending the points it completes to `points`.
    public mutating func decode(chunk: UnsafeBufferPointer<UInt8>, into points: inout [GPXPoint]) {
        statistics.bytesRead += chunk.count
        guard !failed else { return }
        collector.output = points
        points = []
        do {
            try tokenizer.feed(chunk, to: &collector)
        } catch {
            fail(error)
        }
        swap(&points, &collector.output)
        countPoints()
    }

    /// Ends the document, appending any points still to come; counts what the document held.
    public mutating func finish(into points: inout [GPXPoint]) {
        if !failed {
            collector.output = points
            points = []
            do {
                try tokenizer.finish(to: &collector)
            } catch {
                fail(error)
            }
            swap(&points, &collector.output)
        }
        countPoints()
        if tokenizer.controlCharacters > 0 { statistics.rejected[.binary, default: 0] += 1 }
    }

    /// Moves the collector's counts of points read and rejected into ``statistics``.
    private mutating func countPoints() {
        statistics.linesRead += collector.pointsRead
        statistics.linesDecoded += collector.pointsRead - collector.rejectedPoints
        if collector.rejectedPoints > 0 { statistics.rejected[.invalidField, default: 0] += collector.rejectedPoints }
        collector.pointsRead = 0
        collector.rejectedPoints = 0
    }

    /// Decodes a whole document into its points: the track points, or the route points of a file
    /// without tracks, or else its waypoints.
    public mutating func decode(_ bytes: [UInt8]) -> [GPXPoint] {
        var points: [GPXPoint] = []
        bytes.withUnsafeBufferPointer { decode(chunk: $0, into: &points) }
        finish(into: &points)
        let kind = Self.preferredKind(pointCounts)
        return zip(points, collector.outputKinds).filter { $0.1 == kind }.map(\.0)
    }

    private mutating func fail(_ error: XMLError) {
        failed = true
        statistics.rejected[.invalidXML, default: 0] += 1
        xmlError = error.description
    }
}

/// Turns the tokenizer's events into points.
private struct GPXCollector: XMLHandler {
    /// The fields of a point read from its child elements.
    private enum Field {
        case elevation, time, speed, course, fix, satellites, hdop, vdop, pdop
    }

    /// The longest text of a point's field that is read; a longer one is unreadable.
    static let maximumFieldLength = 64

    let yielding: Set<GPXPointKind>
    var output: [GPXPoint] = []
    var counts: [GPXPointKind: Int] = [:]
    var untimed: [GPXPointKind: Int] = [:]
    var pointsRead = 0
    var rejectedPoints = 0
    /// When more than one kind is yielded (``GPXDecoder/decode(_:)``): the kind of each point yielded.
    var outputKinds: [GPXPointKind] = []

    private var current: (kind: GPXPointKind, point: GPXPoint, valid: Bool, depth: Int)?
    private var depth = 0
    private var extensionDepth = 0
    private var field: Field?
    private var fieldText: [UInt8] = []
    private var fieldTooLong = false

    init(yielding: Set<GPXPointKind>) {
        self.yielding = yielding
        fieldText.reserveCapacity(Self.maximumFieldLength)
    }

    mutating func startElement(_ name: XMLName, attributes: XMLAttributes) {
        depth += 1
        if extensionDepth > 0 || name.is("extensions") {
            extensionDepth += 1
            return
        }
        if let point = current {
            // A child of the point: one of its fields, read from its text.
            guard depth == point.depth + 1 else { return }
            field = Self.field(name)
            fieldText.removeAll(keepingCapacity: true)
            fieldTooLong = false
            return
        }
        let kind: GPXPointKind? =
            if name.is("trkpt") { .track } else if name.is("rtept") { .route } else if name.is("wpt") { .waypoint } else
            { nil }
        guard let kind else { return }
        pointsRead += 1
        counts[kind, default: 0] += 1
        let latitude = attributes.withValue("lat") { DecimalParsing.double($0) } ?? nil
        let longitude = attributes.withValue("lon") { DecimalParsing.double($0) } ?? nil
        current = (
            kind, GPXPoint(latitude: latitude ?? .nan, longitude: longitude ?? .nan),
            latitude != nil && longitude != nil,
            depth
        )
    }

    mutating func text(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard field != nil, extensionDepth == 0 else { return }
        if fieldText.count + bytes.count > Self.maximumFieldLength {
            fieldTooLong = true
            return
        }
        fieldText.append(contentsOf: bytes)
    }

    mutating func endElement(_ name: XMLName) {
        defer { depth -= 1 }
        if extensionDepth > 0 {
            extensionDepth -= 1
            return
        }
        guard var point = current else { return }
        if depth == point.depth {
            current = nil
            guard point.valid else {
                rejectedPoints += 1
                return
            }
            if point.point.time == nil { untimed[point.kind, default: 0] += 1 }
            if yielding.contains(point.kind) {
                output.append(point.point)
                if yielding.count > 1 { outputKinds.append(point.kind) }
            }
            return
        }
        guard depth == point.depth + 1, let field else { return }
        self.field = nil
        let tooLong = fieldTooLong
        fieldText.withUnsafeBufferPointer { text in
            let value = tooLong ? nil : Self.trimmed(text)
            func number() -> Double? { value.flatMap { DecimalParsing.double($0) } }
            switch field {
            case .elevation:
                point.point.elevation = number()
                if point.point.elevation == nil { point.valid = false }
            case .time:
                point.point.time = value.flatMap { CivilTime.parseISO8601($0) }
                if point.point.time == nil { point.valid = false }
            case .speed: point.point.speed = number()
            case .course: point.point.course = number()
            case .fix: point.point.fix = value.map { String(decoding: $0, as: UTF8.self) }
            case .satellites: point.point.satellites = value.flatMap { DecimalParsing.integer($0) }
            case .hdop: point.point.hdop = number()
            case .vdop: point.point.vdop = number()
            case .pdop: point.point.pdop = number()
            }
        }
        current = point
    }

    private static func field(_ name: XMLName) -> Field? {
        if name.is("ele") { return .elevation }
        if name.is("time") { return .time }
        if name.is("speed") { return .speed }
        if name.is("course") { return .course }
        if name.is("fix") { return .fix }
        if name.is("sat") { return .satellites }
        if name.is("hdop") { return .hdop }
        if name.is("vdop") { return .vdop }
        if name.is("pdop") { return .pdop }
        return nil
    }

    /// The text without the white space around it.
    private static func trimmed(_ text: UnsafeBufferPointer<UInt8>) -> UnsafeBufferPointer<UInt8> {
        var start = 0
        var end = text.count
        while start < end, XMLTokenizer.isSpace(text[start]) { start += 1 }
        while end > start, XMLTokenizer.isSpace(text[end - 1]) { end -= 1 }
        return UnsafeBufferPointer(rebasing: text[start..<end])
    }
}
