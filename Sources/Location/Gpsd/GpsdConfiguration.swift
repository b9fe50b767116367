import AsyncSupport
import FoundationEssentials

/// How ``GpsdSource`` reaches gpsd and what it does when gpsd goes away.
public struct GpsdConfiguration: Hashable, Sendable {
    /// gpsd's default TCP port.
    public static let defaultPort = 2947

    /// The host gpsd listens on; `localhost` by default.
    public var host: String
    /// The TCP port; 2947 by default.
    public var port: Int
    /// Watch only this device (a path such as `/dev/ttyACM0`, sent in `?WATCH`); `nil` (default) watches all.
    public var device: String?
    /// With no data from gpsd for this long, the source asks gpsd for its version; with none for the
    /// whole timeout, it takes the connection for dead (silent or half-open), reconnects and watches
    /// again. 5 s by default.
    public var silenceTimeout: Duration
    /// How long one connection attempt may take; 5 s by default.
    public var connectTimeout: Duration
    /// An epoch's TPVs are merged into one update, sent when the next epoch starts or at the latest
    /// this long after the epoch's first TPV; 0.5 s by default.
    public var epochTimeout: Duration
    /// How long an incomplete epoch (a fix without the altitude that the fix before it had) waits
    /// for the rest of it: it is sent as soon as the altitude comes, when the next epoch starts, or
    /// this long after its first TPV, whichever is first (never sooner than ``epochTimeout``).
    /// 1.5 s by default: gpsd 3.22 sends a u-blox 8's altitude up to 0.85 s after the epoch's first
    /// TPV at 1 Hz, and the next epoch's TPV ends the wait before this at 1 Hz or faster. At or
    /// below ``epochTimeout`` it turns the holding off.
    public var incompleteEpochTimeout: Duration
    /// The waits between reconnection attempts: by default 0.5 s growing to 2 s, each drawn from
    /// 75 % to 125 % of that (``defaultReconnect``). gpsd runs on the tracker itself, so a retry
    /// costs one local connection attempt, and a short limit brings the source back within about
    /// 2 s of gpsd's return (systemd restarts it in seconds).
    public var reconnect: Backoff
    /// Which fixes are dropped; by default the live gate (with week-rollover correction).
    public var gate: FixGate.Configuration
    /// Updates kept for a consumer that falls behind; older ones are discarded (and counted). 64 by default.
    public var bufferSize: Int

    /// Creates a configuration; every parameter has the default described on its property.
    public init(
        host: String = "localhost", port: Int = GpsdConfiguration.defaultPort, device: String? = nil,
        silenceTimeout: Duration = .seconds(5), connectTimeout: Duration = .seconds(5),
        epochTimeout: Duration = .milliseconds(500), incompleteEpochTimeout: Duration = .milliseconds(1500),
        reconnect: Backoff = GpsdConfiguration.defaultReconnect,
        gate: FixGate.Configuration = FixGate.Configuration(), bufferSize: Int = 64
    ) {
        self.host = host
        self.port = port
        self.device = device
        self.silenceTimeout = silenceTimeout
        self.connectTimeout = connectTimeout
        self.epochTimeout = epochTimeout
        self.incompleteEpochTimeout = incompleteEpochTimeout
        self.reconnect = reconnect
        self.gate = gate
        self.bufferSize = bufferSize
    }

    /// Checks every value.
    ///
    /// - Throws: ``LocationError`` with code `.invalidConfiguration`, naming the value and its valid range.
    public func validate() throws(LocationError) {
        guard !host.isEmpty else {
            throw LocationError(.invalidConfiguration, "empty gpsd host: use a name or address such as localhost")
        }
        guard (1...65535).contains(port) else {
            throw LocationError(
                .invalidConfiguration, "invalid gpsd port \(port): use 1 to 65535 (gpsd's default is 2947)")
        }
        for (name, value) in [("silence timeout", silenceTimeout), ("connect timeout", connectTimeout)]
        where value <= .zero {
            throw LocationError(.invalidConfiguration, "invalid gpsd \(name) \(value): use a positive duration")
        }
        for (name, value) in [("epoch timeout", epochTimeout), ("incomplete epoch timeout", incompleteEpochTimeout)]
        where value < .zero {
            throw LocationError(.invalidConfiguration, "invalid gpsd \(name) \(value): use zero or more")
        }
        guard bufferSize >= 1 else {
            throw LocationError(.invalidConfiguration, "invalid gpsd buffer size \(bufferSize): use 1 or more")
        }
        if let problem = reconnect.problem {
            throw LocationError(.invalidConfiguration, "invalid gpsd reconnect \(problem)")
        }
    }

    /// 0.5 s growing to 2 s, each wait drawn from 75 % to 125 % of its step: the nominal steps of
    /// 0.625 s to 2.5 s, less up to 40 % (``AsyncSupport/Backoff``'s jitter is downward).
    public static let defaultReconnect = Backoff(
        initialDelay: .milliseconds(625), maximumDelay: .milliseconds(2500), multiplier: 2, jitter: 0.4)

    /// The `?WATCH` command that starts the JSON stream, for one device if one is set.
    var watchCommand: String {
        guard let device else { return "?WATCH={\"enable\":true,\"json\":true};\n" }
        let escaped = device.replacing("\\", with: "\\\\").replacing("\"", with: "\\\"")
        return "?WATCH={\"enable\":true,\"json\":true,\"device\":\"\(escaped)\"};\n"
    }
}
