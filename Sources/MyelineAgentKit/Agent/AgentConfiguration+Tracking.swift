import AgentCore
import FoundationEssentials
import LiveActivity
import MyelineWire
import Location
import Tracking
import MyelineConfiguration
import MQTT

extension AgentConfiguration {
    /// The tracker's policy from `updates.*`, `alerts.*` and `device.priority`.
    var trackingPolicy: TrackingPolicy {
        TrackingPolicy(
            minimumDistance: updates.minimumDistance, minimumInterval: updates.minimumInterval,
            heartbeat: updates.heartbeat, staleAfter: updates.staleAfter, noFixGrace: updates.noFixGrace,
            geofences: alerts.geofences.map {
                Tracking.Geofence(
                    name: $0.name, center: Coordinate(latitude: $0.latitude, longitude: $0.longitude), radius: $0.radius
                )
            },
            overspeed: alerts.overspeedThreshold.map { Overspeed(threshold: $0, duration: alerts.overspeedDuration) },
            relevanceScore: device.priority)
    }

    /// The attributes of this device's location activities (`device.*`).
    var activityAttributes: LocationActivityAttributes {
        LocationActivityAttributes(
            deviceID: device.id, name: device.name, vehicle: device.vehicle, driver: device.driver,
            destination: device.destination)
    }

    /// The replay options of a file source (`source.speed`). The recorded times pace the replay
    /// and time the trip; the core stamps each fix with the wall clock when it is replayed, so the
    /// activity runs live like one fed by gpsd (its stale dates are in the present). A loop
    /// (`source.loop`) is the ``SourceFeeder``'s: it reads the file again, and the core joins the
    /// laps into one timeline.
    var fileOptions: FileSource.Options {
        FileSource.Options(pacing: source.pacing, loops: false, restampsTimes: false)
    }

    /// What the agent core needs of the configuration, for the process `instance`.
    func coreSettings(instance: String) -> AgentCoreSettings {
        let kind: AgentCoreSettings.SourceKind =
            switch source.address {
            case .gpsd: .receiver
            case .file: .replay
            }
        return AgentCoreSettings(
            device: device.id, topics: TopicTree(prefix: topicPrefix), attributes: activityAttributes,
            policy: trackingPolicy, maximumActivities: activity.maximumActivities, dismissal: activity.dismissal,
            endOnExit: activity.endOnExit, autostart: activity.autostart, source: kind, silence: source.silence,
            instance: instance, messageExpiry: mqtt.protocolVersion == .v5, stateDirectory: stateDirectory)
    }
}
