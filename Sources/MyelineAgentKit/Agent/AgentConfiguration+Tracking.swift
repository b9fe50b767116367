import Foundation
import LiveActivity
import Location
import Tracking

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

    /// The replay options of a file source (`source.speed`, `source.loop`). Fixes are stamped
    /// with the time they are replayed, so the activity runs live on the wall clock like one fed
    /// by gpsd (its stale dates are in the present); the recorded times only pace the replay.
    var fileOptions: FileSource.Options {
        FileSource.Options(pacing: source.pacing, loops: source.loops, restampsTimes: true)
    }
}

extension AgentConfiguration.Dismissal {
    /// The ActivityKit dismissal policy for an activity that ends at `end`.
    func policy(endingAt end: Date) -> ActivityUIDismissalPolicy {
        switch self {
        case .default: .default
        case .immediate: .immediate
        case .after(let seconds): .after(end.addingTimeInterval(seconds))
        }
    }
}
