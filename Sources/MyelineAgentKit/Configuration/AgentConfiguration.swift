import AgentCore
import FoundationEssentials
import LiveActivity
import MyelineWire
import Location
import Logging
import MQTT
import MyelineConfiguration

import Glibc

/// Everything `myeline-agent` is configured with: a plain value with a default for every setting but
/// the device id.
///
/// Read it with ``init(reader:sources:environment:)`` (flags, `MYELINE_*` environment variables, the
/// YAML file, defaults); docs/configuration.md lists every key. Times are in seconds, distances in
/// metres, speeds in m/s, coordinates in degrees (WGS 84).
struct AgentConfiguration: Hashable, Sendable {
    /// This tracker and what its activities show about it.
    var device: Device
    /// How the agent reaches the broker.
    var mqtt: MQTTSettings
    /// The first levels of every topic (`topic-prefix`); `myeline` by default.
    var topicPrefix: TopicPrefix = .default
    /// Where locations come from and how a file is replayed.
    var source: Source = Source()
    /// Where the agent keeps its activities and the outbox (`state-directory`).
    var stateDirectory: String = "/var/lib/myeline"
    /// How activities start and end.
    var activity: Activity = Activity()
    /// When an activity update is published (the "frequent updates" budget).
    var updates: Updates = Updates()
    /// The offline outbox of track points.
    var outbox: Outbox = Outbox()
    /// What the agent writes to its state directory, and when (`storage.*`).
    var storage: Storage = Storage()
    /// Geofence and overspeed alerts.
    var alerts: Alerts = Alerts()
    /// The lowest level logged (`log-level`); `info` by default.
    var logLevel: Logger.Level = .info
    /// The OwnTracks output (`owntracks.*`, docs/integrations.md); off by default.
    var ownTracks = OwnTracks(device: "")
    /// Home Assistant MQTT discovery (`homeassistant.*`, docs/integrations.md); off by default.
    var homeAssistant = HomeAssistant()

    /// Creates a configuration with every default for this device.
    init(deviceID: DeviceID) {
        device = Device(id: deviceID)
        mqtt = MQTTSettings(clientID: "myeline-\(deviceID.rawValue)")
        ownTracks = OwnTracks(device: deviceID.rawValue)
    }

    /// This tracker.
    struct Device: Hashable, Sendable {
        /// The device id (`device.id`), a topic level such as `van-7`; required.
        var id: DeviceID
        /// The display name (`device.name`); the id by default.
        var name: String
        /// The vehicle (`device.vehicle`), such as a registration plate; none by default.
        var vehicle: String?
        /// The driver's name (`device.driver`); none by default.
        var driver: String?
        /// The trip's destination (`device.destination.*`); none by default.
        var destination: LocationActivityAttributes.Destination?
        /// The relevance score every activity carries (`device.priority`): higher sorts first on the board; 0 by default.
        var priority: Double = 0

        init(id: DeviceID) {
            self.id = id
            self.name = id.rawValue
        }
    }

    /// Where locations come from.
    struct Source: Hashable, Sendable {
        /// gpsd or a file (`source.address`); `gpsd://localhost` (port 2947) by default.
        var address = LocationSourceAddress.gpsd(host: "localhost", port: 2947, device: nil)
        /// How fast a file is replayed (`source.speed`): `1` (recorded pace) by default, `N`, or `max`.
        var pacing = ReplayPacing.recorded
        /// Whether a file replay starts again at its end (`source.loop`); `false` by default.
        var loops = false
        /// How long the source may say nothing before the activity drops its position
        /// (`source.silence-timeout`); by default 5 s past its usual interval between updates.
        var silence = AgentCoreSettings.SilenceTimeout.default
    }

    /// Activity lifecycle settings.
    struct Activity: Hashable, Sendable {
        /// Whether `run` starts an activity at once (`activity.autostart`); `true` by default.
        var autostart = true
        /// How long an ended activity stays visible (`activity.dismissal`); `immediate` by default.
        var dismissal = Dismissal.immediate
        /// Whether a shutdown ends the activity instead of keeping it (`activity.end-on-exit`); `false` by default.
        var endOnExit = false
        /// The most live activities at once (`activity.max-activities`), 1...64; 8 by default.
        var maximumActivities = 8
    }

    /// The dismissal policy of an ended activity, as configured.
    typealias Dismissal = DismissalSetting

    /// When activity updates are published.
    struct Updates: Hashable, Sendable {
        /// Publish when the tracker moved at least this far (`updates.min-distance`), metres; 25 by default.
        var minimumDistance: Double = 25
        /// Publish at most once per this interval (`updates.min-interval`), seconds; 5 by default.
        var minimumInterval: Double = 5
        /// Publish at least this often, even standing still (`updates.heartbeat`), seconds; 60 by default.
        var heartbeat: Double = 60
        /// The stale date is the last fix time plus this (`updates.stale-after`), seconds; `nil` means 3 × heartbeat.
        var staleAfterSetting: Double?
        /// After this long without a fix, publish content without a location (`updates.no-fix-grace`), seconds; 30 by default.
        var noFixGrace: Double = 30

        /// The effective stale-after interval, seconds.
        var staleAfter: Double { staleAfterSetting ?? 3 * heartbeat }
    }

    /// The on-disk outbox for track points while the broker is unreachable.
    /// How the agent keeps what must survive it: docs/agent-store.md.
    struct Storage: Hashable, Sendable {
        /// What a power cut may lose (`storage.durability`, `storage.sync-interval`): with
        /// `interval` (the default, 5 s) the points of the last interval not delivered yet; with
        /// `every-fix`, nothing.
        var durability = AgentStorage.Durability.interval(.seconds(5))
        /// The spool, in memory (`storage.spool-directory`); nil for the default
        /// (``resolvedSpoolDirectory(stateDirectory:environment:)``).
        var spoolDirectory: String?

        /// The spool's directory: `storage.spool-directory`, else `$RUNTIME_DIRECTORY/spool` under
        /// systemd (`RuntimeDirectory=myeline`), else a directory of this state directory's in
        /// `/dev/shm` (tmpfs on Linux), else `STATE-DIRECTORY/spool` (on the card: a spool that
        /// is not in memory spares the card nothing).
        func resolvedSpoolDirectory(stateDirectory: String, environment: [String: String]) -> String {
            if let spoolDirectory { return spoolDirectory }
            if let runtime = environment["RUNTIME_DIRECTORY"]?.split(separator: ":").first, runtime.hasPrefix("/") {
                return runtime + "/spool"
            }
            if access("/dev/shm", W_OK) == 0 {
                let name = stateDirectory.split(separator: "/").joined(separator: "-")
                return "/dev/shm/myeline-spool-" + (name.isEmpty ? "root" : name)
            }
            return stateDirectory + "/spool"
        }
    }

    struct Outbox: Hashable, Sendable {
        /// The most track points kept (`outbox.capacity`); the oldest are dropped beyond it; 100000 by default.
        var capacity = 100_000
    }

    /// Alerts carried by activity updates.
    struct Alerts: Hashable, Sendable {
        /// Geofences (`alerts.geofences`); none by default.
        var geofences: [Geofence] = []
        /// The overspeed threshold (`alerts.overspeed.threshold`), m/s; `nil` (default) turns the alert off.
        var overspeedThreshold: Double?
        /// How long the speed must stay above the threshold (`alerts.overspeed.duration`), seconds; 5 by default.
        var overspeedDuration: Double = 5
    }

    /// A circular geofence: entering or leaving it raises an alert.
    struct Geofence: Hashable, Sendable, CustomStringConvertible {
        /// The fence's name, shown in the alert.
        var name: String
        /// The centre's latitude, degrees.
        var latitude: Double
        /// The centre's longitude, degrees.
        var longitude: Double
        /// The radius, metres.
        var radius: Double

        /// The form the configuration uses: `NAME:LATITUDE:LONGITUDE:RADIUS`.
        var description: String {
            "\(name):\(ConfigurationFormat.number(latitude)):\(ConfigurationFormat.number(longitude)):\(ConfigurationFormat.number(radius))"
        }
    }
}

extension DismissalSetting: CustomStringConvertible {
    /// The form the configuration uses: `default`, `immediate` or `after:SECONDS`.
    public var description: String {
        switch self {
        case .default: "default"
        case .immediate: "immediate"
        case .after(let seconds): "after:\(ConfigurationFormat.number(seconds))"
        }
    }
}

extension AgentCoreSettings.SilenceTimeout: CustomStringConvertible {
    /// The form the configuration uses: `auto`, `off` or seconds.
    public var description: String {
        switch self {
        case .afterCadence(let margin): margin == 5 ? "auto" : "auto (+\(ConfigurationFormat.number(margin)) s)"
        case .fixed(let seconds): ConfigurationFormat.number(seconds)
        case .off: "off"
        }
    }
}
