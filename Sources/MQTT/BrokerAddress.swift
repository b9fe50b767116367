/// Where the broker listens, parsed from a URL.
///
/// Accepted forms: `mqtt://host[:port]` (TCP, port 1883 by default), `mqtts://host[:port]`
/// (TLS, port 8883 by default), and `unix:/path/to/socket` (a local socket; `unix:///path` works too).
/// IPv6 hosts go in brackets: `mqtt://[::1]:1883`. Credentials never go in the URL: they would
/// show in `ps` and in logs; use a username with a password file or environment variable instead.
public struct BrokerAddress: Hashable, Sendable, CustomStringConvertible {
    /// How the broker is reached.
    public enum Transport: Hashable, Sendable {
        /// Plain TCP to `host` on `port`.
        case tcp(host: String, port: Int)
        /// TLS over TCP to `host` on `port`; the certificate is always verified.
        case tls(host: String, port: Int)
        /// A unix-domain socket at this file-system path.
        case unix(path: String)
    }

    /// The default port of `mqtt://`.
    public static let defaultTCPPort = 1883
    /// The default port of `mqtts://`.
    public static let defaultTLSPort = 8883

    /// How and where the broker is reached.
    public var transport: Transport

    /// Creates an address from its parts.
    public init(_ transport: Transport) {
        self.transport = transport
    }

    /// Parses a broker URL.
    ///
    /// - Throws: `MQTTError` with code `.invalidConfiguration` whose message names the URL and
    ///   says which forms are accepted.
    public init(parsing text: String) throws(MQTTError) {
        func invalid(_ why: String) -> MQTTError {
            MQTTError(
                .invalidConfiguration,
                "invalid broker URL \"\(text)\": \(why); use mqtt://host[:port], mqtts://host[:port] or unix:/path/to/socket"
            )
        }
        guard let colon = text.firstIndex(of: ":") else { throw invalid("no scheme") }
        let scheme = text[..<colon].lowercased()
        let rest = text[text.index(after: colon)...]
        switch scheme {
        case "unix":
            var path = Substring(rest)
            if path.hasPrefix("//") { path = path.dropFirst(2) }
            guard path.hasPrefix("/"), path.count > 1 else { throw invalid("a unix socket needs an absolute path") }
            guard !path.contains("\0") else { throw invalid("the path contains a NUL character") }
            self.init(.unix(path: String(path)))
        case "mqtt", "mqtts":
            guard rest.hasPrefix("//") else { throw invalid("expected // after \(scheme):") }
            var authority = rest.dropFirst(2)
            if authority.hasSuffix("/") { authority = authority.dropLast() }
            guard !authority.contains("/"), !authority.contains("?"), !authority.contains("#") else {
                throw invalid("a broker URL has no path, query or fragment")
            }
            guard !authority.contains("@") else {
                throw invalid("credentials do not belong in the URL (they would show in ps and logs)")
            }
            let (host, port) = try Self.splitHostPort(
                authority, defaultPort: scheme == "mqtt" ? Self.defaultTCPPort : Self.defaultTLSPort, invalid: invalid)
            self.init(scheme == "mqtt" ? .tcp(host: host, port: port) : .tls(host: host, port: port))
        default:
            throw invalid("unknown scheme \"\(scheme)\"")
        }
    }

    private static func splitHostPort(
        _ authority: Substring, defaultPort: Int, invalid: (String) -> MQTTError
    ) throws(MQTTError) -> (String, Int) {
        var host: Substring
        var portText: Substring?
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { throw invalid("unclosed [ in an IPv6 host") }
            host = authority[authority.index(after: authority.startIndex)..<close]
            let after = authority[authority.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { throw invalid("unexpected text after the IPv6 host") }
                portText = after.dropFirst()
            }
        } else if let colon = authority.lastIndex(of: ":") {
            host = authority[..<colon]
            portText = authority[authority.index(after: colon)...]
        } else {
            host = authority
        }
        guard !host.isEmpty else { throw invalid("no host") }
        guard host.allSatisfy({ $0.isLetter || $0.isNumber || ".-_:%".contains($0) }) else {
            throw invalid("the host \"\(host)\" has characters a host name cannot have")
        }
        guard let portText else { return (String(host), defaultPort) }
        guard let port = Int(portText), (1...65535).contains(port) else {
            throw invalid("the port \"\(portText)\" is not a number from 1 to 65535")
        }
        return (String(host), port)
    }

    /// The URL this address was parsed from, in its canonical form.
    public var description: String {
        switch transport {
        case .tcp(let host, let port): "mqtt://\(Self.bracketed(host)):\(port)"
        case .tls(let host, let port): "mqtts://\(Self.bracketed(host)):\(port)"
        case .unix(let path): "unix:\(path)"
        }
    }

    /// Whether the connection uses TLS.
    public var usesTLS: Bool {
        if case .tls = transport { return true }
        return false
    }

    private static func bracketed(_ host: String) -> String {
        host.contains(":") ? "[\(host)]" : host
    }
}
