import AsyncSupport

/// The waits between connection attempts: AsyncSupport's ``Backoff``, whose defaults double from
/// 1 s to 60 s with full jitter (the `mqtt.reconnect.*` configuration keys).
public typealias ReconnectBackoff = Backoff

/// Everything an `MQTTClient` needs to know before it connects.
///
/// A plain value with sensible defaults; only the broker address has none.
public struct MQTTConfiguration: Sendable {
    /// Where the broker listens.
    public var broker: BrokerAddress
    /// The MQTT client identifier; unique per broker (a second client with the same id takes over).
    public var clientID: String
    /// The keep-alive interval: the broker drops the client (and sends its will) after 1.5 times this
    /// without traffic. Whole seconds, at least 5.
    public var keepAlive: Duration
    /// The protocol version; MQTT 5 unless a broker needs 3.1.1.
    public var protocolVersion: MQTTProtocolVersion
    /// Whether the broker should forget the session (subscriptions, queued messages, QoS 2
    /// exchanges in flight) on connect.
    public var cleanSession: Bool
    /// With `cleanSession` false and MQTT 5, how long the broker keeps the session after a
    /// disconnection (whole seconds, at most 4294967295); zero ends it at the disconnection.
    /// MQTT 3.1.1 keeps a session that is not clean until the client connects clean.
    public var sessionExpiry: Duration
    /// Username and password, or `nil` for anonymous access.
    public var credentials: MQTTCredentials?
    /// TLS files; used (and required to verify) for `mqtts://` brokers.
    public var tls: MQTTTLSConfiguration
    /// The message the broker publishes on the client's behalf when it goes away without a DISCONNECT
    /// (its will): a publish topic (no wildcards), usually retained at QoS 1.
    public var will: MQTTMessage?
    /// How long to wait between connection attempts.
    public var reconnect: ReconnectBackoff
    /// How soon the client is back after its broker: the ceiling on the waits while a lost
    /// connection (or the start) is recent.
    public var promptRetry: MQTTPromptRetry
    /// How many received messages each subscription buffers before it drops the oldest (counted).
    public var subscriptionBufferSize: Int

    /// Creates a configuration for a broker, with defaults for everything else.
    public init(
        broker: BrokerAddress,
        clientID: String,
        keepAlive: Duration = .seconds(30),
        protocolVersion: MQTTProtocolVersion = .v5,
        cleanSession: Bool = true,
        sessionExpiry: Duration = .zero,
        credentials: MQTTCredentials? = nil,
        tls: MQTTTLSConfiguration = MQTTTLSConfiguration(),
        will: MQTTMessage? = nil,
        reconnect: ReconnectBackoff = ReconnectBackoff(),
        subscriptionBufferSize: Int = 65_536,
        promptRetry: MQTTPromptRetry = MQTTPromptRetry()
    ) {
        self.broker = broker
        self.clientID = clientID
        self.keepAlive = keepAlive
        self.protocolVersion = protocolVersion
        self.cleanSession = cleanSession
        self.sessionExpiry = sessionExpiry
        self.credentials = credentials
        self.tls = tls
        self.will = will
        self.reconnect = reconnect
        self.subscriptionBufferSize = subscriptionBufferSize
        self.promptRetry = promptRetry
    }

    /// Checks the values that libmosquitto would otherwise reject later, or silently.
    ///
    /// - Throws: `MQTTError` `.invalidConfiguration` naming the value and the fix.
    public func validate() throws(MQTTError) {
        let bytes = clientID.utf8.count
        guard (1...65_535).contains(bytes), !clientID.contains("\0") else {
            throw MQTTError(.invalidConfiguration, "invalid client id \"\(clientID)\": use 1 to 65535 bytes of UTF-8")
        }
        guard keepAlive >= .seconds(5), keepAlive <= .seconds(65_535) else {
            throw MQTTError(.invalidConfiguration, "invalid keep-alive \(keepAlive): use 5 to 65535 seconds")
        }
        guard sessionExpiry >= .zero, sessionExpiry <= .seconds(UInt32.max) else {
            throw MQTTError(
                .invalidConfiguration, "invalid session expiry \(sessionExpiry): use 0 to 4294967295 seconds")
        }
        guard subscriptionBufferSize > 0 else {
            throw MQTTError(
                .invalidConfiguration,
                "invalid subscription buffer size \(subscriptionBufferSize): use a positive number of messages")
        }
        if case .unix = broker.transport, tls.isConfigured {
            throw MQTTError(
                .invalidConfiguration,
                "TLS files are set for the unix socket broker \(broker): TLS needs an mqtts:// broker URL")
        }
        if case .tcp = broker.transport, tls.isConfigured {
            throw MQTTError(
                .invalidConfiguration,
                "TLS files are set but the broker URL \(broker) is plain mqtt://: use mqtts:// to connect with TLS")
        }
        if let problem = reconnect.problem {
            throw MQTTError(.invalidConfiguration, "invalid reconnect \(problem)")
        }
        guard promptRetry.interval > .zero, promptRetry.window >= .zero else {
            throw MQTTError(
                .invalidConfiguration,
                "invalid prompt retry every \(promptRetry.interval) for \(promptRetry.window): use a positive "
                    + "interval and a window of zero or more")
        }
        if let will { try MQTTTopic.validate(publishTopic: will.topic) }
    }
}

/// How soon a client is back after its broker comes back, and what that costs the broker.
///
/// For `window` after the client starts or loses a connection it had, a failed attempt is retried
/// once after the backoff's first step (a quick retry, for a blip), and from then on at most
/// `interval` apart (or the backoff's maximum, if that is shorter). The first wait at that
/// ceiling is drawn at random from 0 to it (full jitter), which gives each client a phase of its
/// own; its attempts then come every `interval` on that phase. Once the broker is back, every
/// client is back within one interval (5 s on average with the defaults), and a fleet cut off
/// together comes back spread evenly over the interval, 10 % of it in each second for 10 s,
/// however long the outage was. Full jitter drawn afresh for every wait under the same ceiling
/// would bunch the fleet at the start of the interval instead, and a growing backoff bunches it
/// after short outages. After the window the backoff grows to its maximum again, so that a broker
/// away for long is not called every few seconds by every tracker. Refusals that need a person
/// (credentials, certificates) always wait the growing backoff. docs/broker-connection.md gives
/// the figures for a fleet of 10,000.
public struct MQTTPromptRetry: Hashable, Sendable {
    /// The longest wait between attempts while the window lasts; 10 s by default.
    public var interval: Duration
    /// How long after the start or a lost connection the ceiling holds; 5 minutes by default. Zero
    /// turns prompt retries off: the backoff alone sets every wait.
    public var window: Duration

    /// Creates the policy; the defaults retry at least every 10 s for 5 minutes.
    public init(interval: Duration = .seconds(10), window: Duration = .seconds(300)) {
        self.interval = interval
        self.window = window
    }
}

/// The MQTT protocol version spoken to the broker.
public enum MQTTProtocolVersion: String, Hashable, Sendable, CaseIterable {
    /// MQTT 5.0: reason codes, message properties (content type, expiry).
    case v5 = "5"
    /// MQTT 3.1.1, for older brokers; message properties are not sent.
    case v311 = "3.1.1"
}

/// MQTT quality of service.
public enum MQTTQoS: Int32, Hashable, Sendable, CaseIterable {
    /// At most once: no acknowledgement, lost when offline.
    case atMostOnce = 0
    /// At least once: acknowledged by the broker, resent until it is; duplicates are possible.
    case atLeastOnce = 1
    /// Exactly once: a four-way handshake with the broker.
    case exactlyOnce = 2
}

/// MQTT 5 properties of a published message. Both are dropped when speaking MQTT 3.1.1.
public struct MQTTPublishProperties: Hashable, Sendable {
    /// The payload's media type, such as `application/json`.
    public var contentType: String?
    /// How long, in whole seconds, the broker keeps the message for subscribers that have not
    /// received it yet; `nil` keeps it indefinitely.
    public var messageExpiry: UInt32?

    /// Creates a set of properties.
    public init(contentType: String? = nil, messageExpiry: UInt32? = nil) {
        self.contentType = contentType
        self.messageExpiry = messageExpiry
    }

    /// Whether any property is set.
    var isEmpty: Bool { contentType == nil && messageExpiry == nil }
}

/// Files for TLS. Certificate verification is always on: there is no option to turn it off.
public struct MQTTTLSConfiguration: Hashable, Sendable {
    /// PEM file of the certificate authorities to trust; `nil` trusts the system's (`/etc/ssl/certs`).
    public var caFile: String?
    /// PEM file of the client certificate, for brokers that require one; needs `keyFile`.
    public var certificateFile: String?
    /// PEM file of the client certificate's private key; needs `certificateFile`.
    public var keyFile: String?

    /// Creates a TLS configuration.
    public init(caFile: String? = nil, certificateFile: String? = nil, keyFile: String? = nil) {
        self.caFile = caFile
        self.certificateFile = certificateFile
        self.keyFile = keyFile
    }

    /// Whether any TLS file is set.
    public var isConfigured: Bool { caFile != nil || certificateFile != nil || keyFile != nil }
}
