// The GPX reader before issue 20 (Sources/Location/GPX/BaselineGPXDecoder.swift at e85e298), kept as the
// baseline of the GPX benchmark: Foundation's XMLParser (libxml2), the whole document in memory.
// Only its names changed (BaselineBaselineGPXDecoder, BaselinePoint), so that it builds beside Location.
import Foundation
import Location

#if canImport(FoundationXML)
import FoundationXML
#endif

/// One point of a GPX file: a track point, or a route point or waypoint in a file without tracks.
struct BaselinePoint: Hashable, Sendable {
    /// Latitude in degrees (the `lat` attribute).
    var latitude: Double
    /// Longitude in degrees (the `lon` attribute).
    var longitude: Double
    /// Elevation in metres (`<ele>`), `nil` if absent.
    var elevation: Double?
    /// The time (`<time>`, UTC), `nil` if absent.
    var time: Date?
    /// Speed in metres per second (GPX 1.0 `<speed>`), `nil` if absent.
    var speed: Double?
    /// Course in degrees true (GPX 1.0 `<course>`), `nil` if absent.
    var course: Double?
    /// `<fix>`: `none`, `2d`, `3d`, `dgps` or `pps`; `nil` if absent.
    var fix: String?
    /// Satellites used (`<sat>`), `nil` if absent.
    var satellites: Int?
    /// `<hdop>`, `<vdop>`, `<pdop>`, `nil` if absent.
    var hdop: Double?
    /// Vertical dilution of precision.
    var vdop: Double?
    /// Position dilution of precision.
    var pdop: Double?
}

/// Decodes GPX 1.0 and 1.1 documents: track points in document order (all tracks and segments),
/// or, in a file without track points, its route points, or else its waypoints.
///
/// `<extensions>` are skipped, namespaces and a byte-order mark are accepted, points without
/// `<time>` are kept (their time is `nil`). Points with an unreadable position, elevation or time
/// are rejected and counted as ``LineRejection/invalidField``; a document that is not well-formed
/// XML keeps the points before the error and counts ``LineRejection/invalidXML``.
struct BaselineGPXDecoder {
    /// Counters: `linesRead` counts points read; rejections are counted by reason.
    var statistics = SourceStatistics()
    /// The XML parser's error, if the document was not well-formed.
    private(set) var xmlError: String?

    /// Creates a decoder.
    init() {}

    /// Decodes a whole document into its points.
    mutating func decode(_ bytes: [UInt8]) -> [BaselinePoint] {
        let collector = BaselineGPXCollector()
        // Foundation's XMLParser on Linux can crash on malformed UTF-8 (in attributes), so invalid
        // sequences are replaced by U+FFFD first, which then fail the element they are in.
        var data = Data(bytes)
        if String(validating: bytes, as: UTF8.self) == nil || bytes.contains(0) {
            data = Data(String(decoding: bytes.map { $0 == 0 ? 0x20 : $0 }, as: UTF8.self).utf8)
            statistics.rejected[.binary, default: 0] += 1
        }
        // Foundation's XMLParser on Linux crashes on a processing instruction without data (`<?x?>`,
        // found by fuzzing); GPX needs none, so every one but the XML declaration is blanked out.
        data = Self.blankingProcessingInstructions(data)
        let parser = XMLParser(data: data)
        // Namespaces are resolved by hand (a prefix is dropped): the parser's own namespace
        // processing is another path that malformed input can crash.
        parser.shouldProcessNamespaces = false
        parser.delegate = collector
        // Foundation's parser on Linux accepts a document that ends early (an empty file, a copy cut
        // short): it is well-formed only if its root element was opened and closed.
        let wellFormed = parser.parse() && collector.sawRoot && collector.openElements == 0
        statistics.bytesRead += bytes.count
        statistics.linesRead += collector.pointsRead
        statistics.linesDecoded += collector.pointsRead - collector.rejectedPoints
        if collector.rejectedPoints > 0 { statistics.rejected[.invalidField, default: 0] += collector.rejectedPoints }
        if !wellFormed {
            statistics.rejected[.invalidXML, default: 0] += 1
            xmlError =
                parser.parserError.map { "\($0.localizedDescription) at line \(parser.lineNumber)" }
                ?? (collector.sawRoot
                    ? "the document ends before its root element does" : "no root element: not an XML document")
        }
        if !collector.track.isEmpty { return collector.track }
        if !collector.route.isEmpty { return collector.route }
        return collector.waypoints
    }
}

extension BaselineGPXDecoder {
    /// `data` with every `<?…?>` but an XML declaration at the start replaced by spaces.
    static func blankingProcessingInstructions(_ data: Data) -> Data {
        var bytes = [UInt8](data)
        var index = 0
        while index + 1 < bytes.count {
            guard bytes[index] == UInt8(ascii: "<"), bytes[index + 1] == UInt8(ascii: "?") else {
                index += 1
                continue
            }
            let isDeclaration =
                bytes[..<index].allSatisfy { [0x20, 0x09, 0x0A, 0x0D, 0xEF, 0xBB, 0xBF].contains($0) }
                && bytes[(index + 2)...].starts(with: Array("xml ".utf8))
            // The declaration is kept, and the search goes on inside it: one left open must not hide
            // the instructions after it (found by fuzzing).
            guard !isDeclaration else {
                index += 2
                continue
            }
            var end = index + 2
            while end + 1 < bytes.count, !(bytes[end] == UInt8(ascii: "?") && bytes[end + 1] == UInt8(ascii: ">")) {
                end += 1
            }
            for position in index..<min(end + 2, bytes.count) { bytes[position] = 0x20 }
            index = end + 2
        }
        return Data(bytes)
    }
}

/// The XMLParser delegate: collects points by kind.
private final class BaselineGPXCollector: NSObject, XMLParserDelegate {
    var track: [BaselinePoint] = []
    var route: [BaselinePoint] = []
    var waypoints: [BaselinePoint] = []
    var pointsRead = 0
    var rejectedPoints = 0

    /// Whether an element was opened, and how many are open.
    var sawRoot = false
    var openElements = 0

    private enum Kind { case track, route, waypoint }
    private var current: (kind: Kind, point: BaselinePoint, valid: Bool)?
    private var text = ""
    private var extensionDepth = 0

    func parser(
        _ parser: XMLParser, didStartElement qualifiedElementName: String, namespaceURI: String?,
        qualifiedName: String?,
        attributes: [String: String] = [:]
    ) {
        sawRoot = true
        openElements += 1
        let elementName = Self.localName(qualifiedElementName)
        if extensionDepth > 0 || elementName == "extensions" {
            extensionDepth += 1
            return
        }
        text = ""
        let kind: Kind? =
            switch elementName {
            case "trkpt": .track
            case "rtept": .route
            case "wpt": .waypoint
            default: nil
            }
        guard let kind else { return }
        pointsRead += 1
        let latitude = attributes["lat"].flatMap(Self.number)
        let longitude = attributes["lon"].flatMap(Self.number)
        current = (
            kind, BaselinePoint(latitude: latitude ?? .nan, longitude: longitude ?? .nan),
            latitude != nil && longitude != nil
        )
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) {
        if extensionDepth == 0 && current != nil { text += string }
    }

    func parser(
        _ parser: XMLParser, didEndElement qualifiedElementName: String, namespaceURI: String?, qualifiedName: String?
    ) {
        openElements -= 1
        let elementName = Self.localName(qualifiedElementName)
        if extensionDepth > 0 {
            extensionDepth -= 1
            return
        }
        guard let kind = current?.kind, var point = current?.point, var valid = current?.valid else { return }
        let value = text.trimmingCharacters(in: .whitespacesAndNewlines)
        text = ""
        switch elementName {
        case "ele":
            point.elevation = Self.number(value)
            if point.elevation == nil { valid = false }
        case "time":
            point.time = CivilTime.parseISO8601(value)
            if point.time == nil { valid = false }
        case "speed": point.speed = Self.number(value)
        case "course": point.course = Self.number(value)
        case "fix": point.fix = value
        case "sat": point.satellites = Int(value)
        case "hdop": point.hdop = Self.number(value)
        case "vdop": point.vdop = Self.number(value)
        case "pdop": point.pdop = Self.number(value)
        case "trkpt", "rtept", "wpt":
            current = nil
            guard valid else {
                rejectedPoints += 1
                return
            }
            switch kind {
            case .track: track.append(point)
            case .route: route.append(point)
            case .waypoint: waypoints.append(point)
            }
            return
        default: break
        }
        current = (kind, point, valid)
    }

    /// `trkpt` for `gpx:trkpt`.
    private static func localName(_ name: String) -> String {
        guard let colon = name.lastIndex(of: ":") else { return name }
        return String(name[name.index(after: colon)...])
    }

    /// A decimal number, without the NaN and infinities that Double(String) would accept.
    private static func number(_ text: String) -> Double? {
        var text = text
        return text.withUTF8 { DecimalParsing.double($0) }
    }
}
