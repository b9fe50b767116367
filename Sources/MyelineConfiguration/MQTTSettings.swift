import Logging
import MQTT

import AsyncSupport
import Glibc

extension ConfigurationKey {
    /// The broker URL, `--broker`.
    public static let mqttBroker = ConfigurationKey("mqtt.broker", flag: "--broker")
    /// The MQTT client id.
    public static let mqttClientID = ConfigurationKey("mqtt.client-id")
    /// The keep-alive interval, seconds.
    public static let mqttKeepAlive = ConfigurationKey("mqtt.keepalive")
    /// The protocol version.
    public static let mqttProtocol = ConfigurationKey("mqtt.protocol")
    /// The username.
    public static let mqttUsername = ConfigurationKey("mqtt.username")
    /// The file whose first line is the password.
    public static let mqttPasswordFile = ConfigurationKey("mqtt.password-file")
    /// Whether a password may travel unencrypted.
    public static let mqttAllowPlainPassword = ConfigurationKey("mqtt.allow-plain-password")
    /// The certificate authorities' PEM file.
    public static let mqttTLSCAFile = ConfigurationKey("mqtt.tls.ca-file")
    /// The client certificate's PEM file.
    public static let mqttTLSCertFile = ConfigurationKey("mqtt.tls.cert-file")
    /// The client key's PEM file.
    public static let mqttTLSKeyFile = ConfigurationKey("mqtt.tls.key-file")
    /// The first reconnection delay, seconds.
    public static let mqttReconnectInitialDelay = ConfigurationKey("mqtt.reconnect.initial-delay")
    /// The longest reconnection delay, seconds.
    public static let mqttReconnectMaxDelay = ConfigurationKey("mqtt.reconnect.max-delay")
}

/// The broker connection settings (the `mqtt.*` keys) every Myeline executable reads; the password
/// itself is never held here, only where to read it from.
public struct MQTTSettings: Hashable, Sendable {
    /// The environment variable that may hold the broker password (the other place is a password file).
    public static let passwordVariable = "MYELINE_MQTT_PASSWORD"

    /// The `mqtt.*` keys, in the order reports print them.
    public static let keys: [ConfigurationKey] = [
        .mqttBroker, .mqttClientID, .mqttKeepAlive, .mqttProtocol, .mqttUsername, .mqttPasswordFile,
        .mqttAllowPlainPassword, .mqttTLSCAFile, .mqttTLSCertFile, .mqttTLSKeyFile, .mqttReconnectInitialDelay,
        .mqttReconnectMaxDelay,
    ]

    /// The broker URL (`mqtt.broker`); `mqtt://localhost` (port 1883) by default.
    public var broker = BrokerAddress(.tcp(host: "localhost", port: BrokerAddress.defaultTCPPort))
    /// The MQTT client id (`mqtt.client-id`); each executable has its own default.
    public var clientID: String
    /// The keep-alive interval (`mqtt.keepalive`), whole seconds 5...65535; 30 s by default.
    public var keepAlive: Duration = .seconds(30)
    /// The protocol version (`mqtt.protocol`), `5` or `3.1.1`; `5` by default.
    public var protocolVersion: MQTTProtocolVersion = .v5
    /// The username (`mqtt.username`); none (anonymous) by default.
    public var username: String?
    /// Where the password comes from: `mqtt.password-file`, else `MYELINE_MQTT_PASSWORD` if set; none by default.
    public var password: PasswordSource?
    /// Whether a password may travel unencrypted (`mqtt.allow-plain-password`): `mqtt://` to a
    /// host other than this machine's loopback is refused with a password unless this is true (a
    /// network the operator trusts, such as a VPN); false by default.
    public var allowsPlaintextPassword = false
    /// TLS files (`mqtt.tls.ca-file`, `mqtt.tls.cert-file`, `mqtt.tls.key-file`); none by default.
    public var tls = MQTTTLSConfiguration()
    /// Reconnection delays (`mqtt.reconnect.initial-delay`, `mqtt.reconnect.max-delay`); 1 s to 60 s by default.
    public var reconnect = ReconnectBackoff()

    /// Creates the default settings with a client id.
    public init(clientID: String) {
        self.clientID = clientID
    }

    /// The MQTT client's configuration, with the password already read (or `nil` without credentials).
    public func clientConfiguration(password: String?) -> MQTTConfiguration {
        MQTTConfiguration(
            broker: broker, clientID: clientID, keepAlive: keepAlive, protocolVersion: protocolVersion,
            credentials: username.map { MQTTCredentials(username: $0, password: password) }, tls: tls,
            reconnect: reconnect)
    }

    /// Reads every `mqtt.*` key that is set over these settings, and checks them together.
    ///
    /// | Key | Type | Default |
    /// |---|---|---|
    /// | `mqtt.broker` | `mqtt://HOST[:PORT]`, `mqtts://HOST[:PORT]`, `unix:/PATH` | `mqtt://localhost` |
    /// | `mqtt.client-id` | string, 1-65535 bytes | per executable |
    /// | `mqtt.keepalive` | whole seconds, 5...65535 | `30` |
    /// | `mqtt.protocol` | `5` or `3.1.1` | `5` |
    /// | `mqtt.username` | string | none (anonymous) |
    /// | `mqtt.password-file` | path | none (then `MYELINE_MQTT_PASSWORD`, if set) |
    /// | `mqtt.allow-plain-password` | boolean | `false` |
    /// | `mqtt.tls.ca-file` | path | none (system CAs with `mqtts://`) |
    /// | `mqtt.tls.cert-file` | path | none |
    /// | `mqtt.tls.key-file` | path | none |
    /// | `mqtt.reconnect.initial-delay` | seconds, > 0 | `1` |
    /// | `mqtt.reconnect.max-delay` | seconds, ≥ initial delay | `60` |
    ///
    /// A password over `mqtt://` to a host that is not this machine's loopback (`localhost`,
    /// 127.0.0.0/8, `::1`) is refused, naming `mqtt.broker`, unless `mqtt.allow-plain-password`.
    ///
    /// - Throws: ``ConfigurationError`` naming the first key at fault.
    public mutating func read(_ values: KeyReader, environment: [String: String]) throws(ConfigurationError) {
        if let broker = try values.value(.mqttBroker, { text throws(MQTTError) in try BrokerAddress(parsing: text) }) {
            self.broker = broker
        }
        if let clientID = try values.string(.mqttClientID) { self.clientID = clientID }
        if let keepAlive = try values.integer(.mqttKeepAlive, in: 5...65_535, unit: "seconds") {
            self.keepAlive = .seconds(keepAlive)
        }
        if let version = try values.choice(.mqttProtocol, MQTTProtocolVersion.allCases.map { ($0.rawValue, $0) }) {
            protocolVersion = version
        }
        username = try values.string(.mqttUsername)
        if let file = try values.string(.mqttPasswordFile) {
            password = .file(file)
        } else if environment[Self.passwordVariable] != nil {
            password = .environment(Self.passwordVariable)
        }
        if password != nil, username == nil {
            throw ConfigurationError(
                key: ConfigurationKey.mqttUsername.name,
                "a password is set (\(password.map(Self.describe) ?? "")) but no username: set mqtt.username")
        }
        if let allow = try values.boolean(.mqttAllowPlainPassword) { allowsPlaintextPassword = allow }
        if password != nil, !allowsPlaintextPassword, case .tcp(let host, _) = broker.transport,
            !Self.isLoopback(host)
        {
            throw values.error(
                .mqttBroker,
                "mqtt:// would send the password of \(username ?? "") to \(host) unencrypted, for anyone on the way "
                    + "to read: use mqtts://\(host) (TLS, docs/broker-connection.md), or, on a network you trust "
                    + "(a VPN), set mqtt.allow-plain-password: true")
        }
        tls.caFile = try values.string(.mqttTLSCAFile)
        tls.certificateFile = try values.string(.mqttTLSCertFile)
        tls.keyFile = try values.string(.mqttTLSKeyFile)
        if (tls.certificateFile == nil) != (tls.keyFile == nil) {
            let missing = tls.certificateFile == nil ? ConfigurationKey.mqttTLSCertFile : .mqttTLSKeyFile
            throw ConfigurationError(
                key: missing.name,
                "a client certificate needs both mqtt.tls.cert-file and mqtt.tls.key-file: set \(missing)"
            )
        }
        if let initial = try values.number(.mqttReconnectInitialDelay, in: 0.001...3600, unit: "seconds") {
            reconnect.initialDelay = .seconds(initial)
        }
        if let maximum = try values.number(.mqttReconnectMaxDelay, in: 0.001...86_400, unit: "seconds") {
            reconnect.maximumDelay = .seconds(maximum)
        }
        do {
            try clientConfiguration(password: nil).validate()
        } catch {
            throw ConfigurationError(key: key(for: error.message), source: nil, error.message)
        }
    }

    /// Whether `host` (a name or an address literal) is this machine's loopback without asking a
    /// resolver: `localhost` and names under `.localhost` (RFC 6761), 127.0.0.0/8, `::1` and
    /// `::ffff:127.x.x.x`. Any other name counts as remote, even one that resolves to loopback.
    public static func isLoopback(_ host: String) -> Bool {
        let name = host.lowercased()
        if name == "localhost" || name == "localhost." || name.hasSuffix(".localhost")
            || name.hasSuffix(".localhost.")
        {
            return true
        }
        var v4 = in_addr()
        if inet_pton(AF_INET, name, &v4) == 1 { return UInt32(bigEndian: v4.s_addr) >> 24 == 127 }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, name, &v6) == 1 else { return false }
        let bytes = withUnsafeBytes(of: v6) { Array($0) }
        let mapped = bytes[0..<10].allSatisfy { $0 == 0 } && bytes[10] == 0xFF && bytes[11] == 0xFF
        return bytes == Array(repeating: 0, count: 15) + [1] || (mapped && bytes[12] == 127)
    }

    /// A warning when the password file can be read by any user of this machine (mode `o+r`):
    /// its path and mode, and the fix; nil when it cannot, or when there is no password file. The
    /// programs log it once at start.
    public func passwordFileExposure() -> (message: String, metadata: [String: String])? {
        guard case .file(let path)? = password else { return nil }
        var status = stat()
        guard stat(path, &status) == 0, status.st_mode & S_IROTH != 0 else { return nil }
        return (
            "The password file is readable by every user of this machine: make it mode 0640, owner root, group of the service's user (or 0600)",
            ["mqtt.password_file": path, "file.mode": String(status.st_mode & 0o7777, radix: 8)]
        )
    }

    /// Warns on `logger` when the password file is readable by every user of the machine
    /// (``passwordFileExposure()``): what a command that connects does once its log output started.
    public func warnIfPasswordExposed(logger: Logger) {
        guard let (message, metadata) = passwordFileExposure() else { return }
        var fields: Logger.Metadata = metadata.mapValues { .string($0) }
        fields["event"] = "mqtt.password.exposed"
        logger.warning("\(message)", metadata: fields)
    }

    /// Reads the password, if one is configured; it is never logged.
    ///
    /// - Throws: ``ConfigurationError`` naming `mqtt.password-file` or the variable when it cannot be read.
    public func loadPassword(environment: [String: String]) throws(ConfigurationError) -> String? {
        guard let password else { return nil }
        do {
            return try password.load(environment: environment)
        } catch {
            let key = if case .file = password { ConfigurationKey.mqttPasswordFile.name } else { Self.passwordVariable }
            throw ConfigurationError(key: key, error.message)
        }
    }

    /// The report rows of the `mqtt.*` keys and the password (masked): key, value, source.
    ///
    /// - Parameter clientIDDefault: what the default client id is derived from, such as `device.id`.
    public func reportRows(sources: ValueSources, clientIDDefault: String) -> [(
        key: String, value: String, source: String
    )] {
        func row(_ key: ConfigurationKey, _ value: String?, derived: String = "default") -> (String, String, String) {
            (key.name, value ?? "(none)", sources.source(of: key) ?? derived)
        }
        let passwordRow: (String, String, String) =
            switch password {
            case nil: ("mqtt.password", "(none)", "default")
            case .file(let path)?: ("mqtt.password", "********", path)
            case .environment(let name)?: ("mqtt.password", "********", name)
            }
        return [
            row(.mqttBroker, broker.description),
            row(.mqttClientID, clientID, derived: clientIDDefault),
            row(.mqttKeepAlive, "\(keepAlive.components.seconds) s"),
            row(.mqttProtocol, protocolVersion.rawValue),
            row(.mqttUsername, username),
            row(.mqttPasswordFile, { if case .file(let path)? = password { path } else { nil } }()),
            passwordRow,
            row(.mqttAllowPlainPassword, "\(allowsPlaintextPassword)"),
            row(.mqttTLSCAFile, tls.caFile),
            row(.mqttTLSCertFile, tls.certificateFile),
            row(.mqttTLSKeyFile, tls.keyFile),
            row(.mqttReconnectInitialDelay, "\(ConfigurationFormat.seconds(reconnect.initialDelay)) s"),
            row(.mqttReconnectMaxDelay, "\(ConfigurationFormat.seconds(reconnect.maximumDelay)) s"),
        ]
    }

    /// How a password source is shown: the file's path or the variable's name, never the password.
    static func describe(_ source: PasswordSource) -> String {
        switch source {
        case .file(let path): "file \(path)"
        case .environment(let name): "variable \(name)"
        }
    }

    /// The key an `MQTTConfiguration.validate()` message is about.
    private func key(for message: String) -> String {
        if message.contains("client id") { return ConfigurationKey.mqttClientID.name }
        if message.contains("keep-alive") { return ConfigurationKey.mqttKeepAlive.name }
        if message.contains("TLS") {
            if tls.caFile != nil { return ConfigurationKey.mqttTLSCAFile.name }
            return ConfigurationKey.mqttTLSCertFile.name
        }
        if message.contains("reconnect") { return ConfigurationKey.mqttReconnectMaxDelay.name }
        return "mqtt"
    }
}

/// A configuration report: one line per key with its value and where the value came from.
public enum ConfigurationTable {
    /// The rows as aligned columns under a `KEY VALUE SOURCE` header line, ending with a newline.
    public static func text(_ rows: [(key: String, value: String, source: String)]) -> String {
        let all = [("KEY", "VALUE", "SOURCE")] + rows
        let keyWidth = all.map(\.0.count).max()!
        let valueWidth = all.map(\.1.count).max()!
        return all.map { key, value, source in
            key.padding(keyWidth) + "  " + value.padding(valueWidth) + "  " + source
        }.joined(separator: "\n") + "\n"
    }
}

extension String {
    fileprivate func padding(_ width: Int) -> String {
        count >= width ? self : self + String(repeating: " ", count: width - count)
    }
}
