import AsyncSupport
import FoundationEssentials
import Logging

/// Where locations come from, as a command line or configuration file gives it: a gpsd URL
/// (`gpsd://HOST[:PORT][/DEVICE]`) or the path of a file to replay.
///
/// Examples: `gpsd://localhost` (port 2947, all devices), `gpsd://10.0.0.5:3000`,
/// `gpsd://[::1]:2947/dev/ttyACM0` (one device), `/var/lib/myeline/trip.nmea`, `file:///tmp/ride.gpx`.
public enum LocationSourceAddress: Hashable, Sendable, CustomStringConvertible {
    /// gpsd at `host:port`, watching one `device` or (`nil`) all of them.
    case gpsd(host: String, port: Int, device: String?)
    /// A file to replay (NMEA, GPX or a gpspipe capture).
    case file(path: String)

    /// Parses a source address.
    ///
    /// - Throws: ``LocationError`` with code `.invalidSource`, quoting the value and saying what would be valid.
    public init(parsing text: String) throws(LocationError) {
        let value = String(text.drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed())
        let usage =
            "use gpsd://HOST[:PORT][/DEVICE] (for example gpsd://localhost) or the path of an NMEA, GPX or gpspipe file"
        guard !value.isEmpty else { throw LocationError(.invalidSource, "empty location source: \(usage)") }
        guard let schemeEnd = value.firstRange(of: "://") else {
            self = .file(path: value)
            return
        }
        let scheme = value[..<schemeEnd.lowerBound].lowercased()
        let rest = String(value[schemeEnd.upperBound...])
        switch scheme {
        case "file":
            guard rest.hasPrefix("/"), rest.count > 1 else {
                throw LocationError(
                    .invalidSource,
                    "invalid location source '\(text)': a file URL needs an absolute path, as in file:///var/trip.nmea")
            }
            self = .file(path: Self.percentDecoded(rest) ?? rest)
        case "gpsd":
            self = try Self.parseGpsd(rest, original: text, usage: usage)
        default:
            throw LocationError(.invalidSource, "unsupported location source scheme '\(scheme)' in '\(text)': \(usage)")
        }
    }

    /// `text` with its `%XX` escapes decoded, or nil if an escape is malformed or the bytes are
    /// not UTF-8 (as Foundation's `removingPercentEncoding`, which FoundationEssentials lacks).
    static func percentDecoded(_ text: String) -> String? {
        var bytes: [UInt8] = []
        var iterator = text.utf8.makeIterator()
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard let high = iterator.next().flatMap(DecimalParsing.hexDigit),
                let low = iterator.next().flatMap(DecimalParsing.hexDigit)
            else {
                return nil
            }
            bytes.append(high << 4 | low)
        }
        return String(validating: bytes, as: UTF8.self)
    }

    private static func parseGpsd(_ rest: String, original: String, usage: String) throws(LocationError) -> Self {
        var authority = Substring(rest)
        var device: String? = nil
        if let slash = rest.firstIndex(of: "/") {
            authority = rest[..<slash]
            let path = String(rest[slash...])
            device = path == "/" ? nil : (Self.percentDecoded(path) ?? path)
        }
        var host: Substring
        var portText: Substring? = nil
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else {
                throw LocationError(
                    .invalidSource,
                    "invalid location source '\(original)': an IPv6 address needs its closing ']': \(usage)")
            }
            host = authority[authority.index(after: authority.startIndex)..<close]
            let after = authority[authority.index(after: close)...]
            if after.hasPrefix(":") {
                portText = after.dropFirst()
            } else if !after.isEmpty {
                throw LocationError(
                    .invalidSource,
                    "invalid location source '\(original)': unexpected '\(after)' after the address: \(usage)")
            }
        } else if let colon = authority.lastIndex(of: ":") {
            host = authority[..<colon]
            portText = authority[authority.index(after: colon)...]
        } else {
            host = authority
        }
        guard !host.isEmpty else {
            throw LocationError(.invalidSource, "invalid location source '\(original)': no host: \(usage)")
        }
        var port = GpsdConfiguration.defaultPort
        if let portText {
            guard let parsed = Int(portText), (1...65535).contains(parsed) else {
                throw LocationError(
                    .invalidSource,
                    "invalid gpsd port '\(portText)' in '\(original)': use 1 to 65535 (gpsd's default is 2947)")
            }
            port = parsed
        }
        return .gpsd(host: String(host), port: port, device: device)
    }

    /// The address in the form ``init(parsing:)`` reads.
    public var description: String {
        switch self {
        case .gpsd(let host, let port, let device):
            let shownHost = host.contains(":") ? "[\(host)]" : host
            return "gpsd://\(shownHost):\(port)\(device ?? "")"
        case .file(let path):
            return path
        }
    }

    /// Makes the source this address names.
    ///
    /// - Parameters:
    ///   - gpsd: the gpsd settings other than host, port and device (which come from the address).
    ///   - file: the replay options for a file.
    ///   - logger: the source's logger; nothing is logged without one.
    ///   - now: the wall clock (UTC): for gpsd, the time of a fix that gpsd reports without one (a
    ///     receiver that sends no date); for a file, the date of fixes in a file without dates and
    ///     the time of restamped fixes. The system clock by default.
    ///   - loop: the event loop a gpsd connection runs on
    ///     (``GpsdSource/init(configuration:logger:now:loop:)``); nil for one of its own.
    /// - Throws: ``LocationError`` with code `.invalidConfiguration` for out-of-range settings.
    public func makeSource(
        gpsd: GpsdConfiguration = GpsdConfiguration(), file: FileSource.Options = FileSource.Options(),
        logger: Logger = .discarding, now: @escaping @Sendable () -> Date = { Date() }, loop: EventLoop? = nil
    ) throws(LocationError) -> any LocationSource {
        switch self {
        case .gpsd(let host, let port, let device):
            var configuration = gpsd
            configuration.host = host
            configuration.port = port
            configuration.device = device
            return try GpsdSource(configuration: configuration, logger: logger, now: now, loop: loop)
        case .file(let path):
            return try FileSource(path: path, options: file, logger: logger, now: now)
        }
    }
}
