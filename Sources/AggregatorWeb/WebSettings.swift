import Foundation
import MyelineConfiguration

extension ConfigurationKey {
    /// Where the web map listens.
    public static let webListen = ConfigurationKey("web.listen", flag: "--http")
    /// The file holding the web map's access token.
    public static let webTokenFile = ConfigurationKey("web.token-file", flag: "--http-token-file")
    /// The tiles' URL template, or `none`.
    public static let webTiles = ConfigurationKey("web.tiles", flag: "--tiles")
    /// The tiles' attribution.
    public static let webTilesAttribution = ConfigurationKey("web.tiles-attribution")
    /// The most points of each activity's trail.
    public static let webTrailLength = ConfigurationKey("web.trail-length", flag: "--trail-length")
    /// The most pages following the event stream at once.
    public static let webMaxClients = ConfigurationKey("web.max-clients")
    /// The most bytes queued for one page.
    public static let webClientBuffer = ConfigurationKey("web.client-buffer")
}

/// The web map's settings (`web.*`, docs/web.md): where it listens, who may read it, its tiles.
public struct WebSettings: Hashable, Sendable {
    /// Every key the web map reads, with its flag.
    public static let keys: [ConfigurationKey] = [
        .webListen, .webTokenFile, .webTiles, .webTilesAttribution, .webTrailLength, .webMaxClients, .webClientBuffer,
    ]

    /// OpenStreetMap's tiles, for browsers that reach them (their usage policy asks for the attribution).
    public static let openStreetMapTiles = "https://tile.openstreetmap.org/{z}/{x}/{y}.png"
    /// OpenStreetMap's attribution.
    public static let openStreetMapAttribution = "© OpenStreetMap contributors"
    /// Where Debian's libjs-leaflet installs Leaflet.
    public static let debianLeafletDirectory = "/usr/share/javascript/leaflet"

    /// The host to listen on (`web.listen`'s host): loopback unless told otherwise.
    public var host = "127.0.0.1"
    /// The TCP port (`web.listen`'s port); 0 takes a free one (logged).
    public var port = 8080
    /// The file holding the access token (`web.token-file`); none by default.
    public var tokenFile: String?
    /// The tiles' URL template (`web.tiles`), `{z}/{x}/{y}` and optionally `{s}`; nil for none (`none`).
    public var tiles: String? = openStreetMapTiles
    /// The tiles' attribution (`web.tiles-attribution`), shown as text on the map.
    public var tilesAttribution = openStreetMapAttribution
    /// The most points each activity's trail keeps (`web.trail-length`); 100 by default.
    public var trailLength = 100
    /// The most pages that may follow the event stream at once (`web.max-clients`); 32 by default.
    public var maximumClients = 32
    /// The most bytes of frames queued for one page before it is dropped (`web.client-buffer`); 1 MiB by default.
    public var maximumQueuedBytes = 1 << 20
    /// Where Leaflet's files are read from.
    public var leafletDirectory = debianLeafletDirectory

    /// The defaults (listening on 127.0.0.1:8080).
    public init() {}

    /// Reads the `web.*` keys; returns nil when `web.listen` is not set (the map is off).
    ///
    /// | Key | Type | Default |
    /// |---|---|---|
    /// | `web.listen` | `PORT`, `HOST:PORT` or `[IPv6]:PORT` | off |
    /// | `web.token-file` | path | none |
    /// | `web.tiles` | URL template or `none` | OpenStreetMap's |
    /// | `web.tiles-attribution` | text | `© OpenStreetMap contributors` |
    /// | `web.trail-length` | points, 0...10000 | `100` |
    /// | `web.max-clients` | 1...10000 | `32` |
    /// | `web.client-buffer` | bytes, 4096...1073741824 | `1048576` |
    ///
    /// - Throws: ``ConfigurationError`` naming the first key at fault.
    public static func read(_ values: KeyReader) throws(ConfigurationError) -> WebSettings? {
        guard let listen = try values.string(.webListen) else { return nil }
        var settings = WebSettings()
        guard let (host, port) = parseListen(listen) else {
            throw values.error(
                .webListen, "\"\(listen)\" is not PORT, HOST:PORT or [IPv6]:PORT (such as 127.0.0.1:8080)")
        }
        (settings.host, settings.port) = (host, port)
        settings.tokenFile = try values.string(.webTokenFile)
        if let tiles = try values.string(.webTiles) {
            if tiles == "none" {
                settings.tiles = nil
            } else {
                let host = tiles.split(separator: "/", omittingEmptySubsequences: true).dropFirst().first ?? ""
                let hostCharacters = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-:{}")
                guard tiles.hasPrefix("https://") || tiles.hasPrefix("http://"), tiles.contains("{z}"),
                    tiles.contains("{x}"), tiles.contains("{y}"), !host.isEmpty,
                    host.allSatisfy(hostCharacters.contains)
                else {
                    throw values.error(
                        .webTiles, "\"\(tiles)\" is not an http(s) URL template with {z}, {x} and {y}, nor none")
                }
                settings.tiles = tiles
            }
        }
        if let attribution = try values.string(.webTilesAttribution) { settings.tilesAttribution = attribution }
        if let length = try values.integer(.webTrailLength, in: 0...10_000, unit: "points") {
            settings.trailLength = length
        }
        if let clients = try values.integer(.webMaxClients, in: 1...10_000, unit: "clients") {
            settings.maximumClients = clients
        }
        if let bytes = try values.integer(.webClientBuffer, in: 4096...(1 << 30), unit: "bytes") {
            settings.maximumQueuedBytes = bytes
        }
        return settings
    }

    /// `PORT`, `HOST:PORT` or `[IPv6]:PORT` as host and port; a bare port listens on loopback.
    public static func parseListen(_ text: String) -> (host: String, port: Int)? {
        func port(_ text: Substring) -> Int? {
            guard let port = Int(text), (0...65535).contains(port) else { return nil }
            return port
        }
        if let bare = port(Substring(text)) { return ("127.0.0.1", bare) }
        if text.hasPrefix("["), let close = text.firstIndex(of: "]") {
            let host = text[text.index(after: text.startIndex)..<close]
            let rest = text[text.index(after: close)...]
            guard !host.isEmpty, rest.hasPrefix(":"), let value = port(rest.dropFirst()) else { return nil }
            return (String(host), value)
        }
        guard let colon = text.lastIndex(of: ":"), !text[..<colon].contains(":") else { return nil }
        let host = text[..<colon]
        guard !host.isEmpty, let value = port(text[text.index(after: colon)...]) else { return nil }
        return (String(host), value)
    }

    /// The token from ``tokenFile``, if one is set.
    ///
    /// - Throws: ``ConfigurationError`` (key `web.token-file`) when it cannot be read or holds no token.
    public func loadToken() throws(ConfigurationError) -> AccessToken? {
        guard let tokenFile else { return nil }
        let contents: String
        do {
            contents = try String(contentsOfFile: tokenFile, encoding: .utf8)
        } catch {
            throw ConfigurationError(
                key: .webTokenFile,
                "cannot read \(tokenFile): \(error.localizedDescription); check the path and its permissions")
        }
        guard let token = AccessToken(fileContents: contents) else {
            throw ConfigurationError(
                key: .webTokenFile,
                "\(tokenFile) must hold the token on its first line: letters, digits and -._~+/= only")
        }
        return token
    }

    /// The origin the tiles come from, for the Content-Security-Policy (`{s}` subdomains as `*`).
    var tilesOrigin: String? {
        guard let tiles, let schemeEnd = tiles.range(of: "://") else { return nil }
        let rest = tiles[schemeEnd.upperBound...]
        let host = rest.prefix { $0 != "/" }
        return tiles[..<schemeEnd.upperBound] + host.replacingOccurrences(of: "{s}", with: "*")
    }
}
