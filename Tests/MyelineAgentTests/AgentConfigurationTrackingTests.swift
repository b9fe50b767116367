import Foundation
import LiveActivity
import Location
import Testing
import Tracking

@testable import MyelineAgentKit

/// The glue from the agent's configuration to the tracker, the activity and the dismissal policy.
struct AgentConfigurationTrackingTests {
    @Test func defaultsGiveTheTrackerDefaults() throws {
        let configuration = AgentConfiguration(deviceID: try DeviceID("van-7"))
        #expect(configuration.trackingPolicy == TrackingPolicy())
        #expect(
            configuration.activityAttributes
                == LocationActivityAttributes(deviceID: try DeviceID("van-7"), name: "van-7"))
        #expect(configuration.fileOptions == FileSource.Options(restampsTimes: false))
    }

    @Test func everyKeyReachesThePolicyAndTheAttributes() throws {
        var configuration = AgentConfiguration(deviceID: try DeviceID("van-7"))
        configuration.device.name = "Van 7"
        configuration.device.vehicle = "B-MY 1234"
        configuration.device.driver = "Ana"
        configuration.device.destination = .init(name: "Depot", latitude: 52.5, longitude: 13.4)
        configuration.device.priority = 7
        configuration.updates = .init(
            minimumDistance: 10, minimumInterval: 2, heartbeat: 30, staleAfterSetting: 45, noFixGrace: 12)
        configuration.alerts = .init(
            geofences: [.init(name: "depot", latitude: 52.52, longitude: 13.405, radius: 150)],
            overspeedThreshold: 25, overspeedDuration: 3)
        configuration.source = .init(address: .file(path: "/tmp/trip.nmea"), pacing: .asFastAsPossible, loops: true)

        #expect(
            configuration.trackingPolicy
                == TrackingPolicy(
                    minimumDistance: 10, minimumInterval: 2, heartbeat: 30, staleAfter: 45, noFixGrace: 12,
                    geofences: [
                        Geofence(name: "depot", center: Coordinate(latitude: 52.52, longitude: 13.405), radius: 150)
                    ],
                    overspeed: Overspeed(threshold: 25, duration: 3), relevanceScore: 7))
        let attributes = configuration.activityAttributes
        #expect(attributes.name == "Van 7")
        #expect(attributes.vehicle == "B-MY 1234")
        #expect(attributes.driver == "Ana")
        #expect(attributes.destination == .init(name: "Depot", latitude: 52.5, longitude: 13.4))
        // The source feeder loops (configuration.source.loops), the core stamps the times.
        #expect(configuration.source.loops)
        #expect(
            configuration.fileOptions
                == FileSource.Options(pacing: .asFastAsPossible, loops: false, restampsTimes: false)
        )
    }

    @Test func dismissalPolicies() {
        let end = Date(timeIntervalSince1970: 1_700_000_000)
        #expect(AgentConfiguration.Dismissal.default.policy(endingAt: end) == .default)
        #expect(AgentConfiguration.Dismissal.immediate.policy(endingAt: end) == .immediate)
        #expect(
            AgentConfiguration.Dismissal.after(seconds: 90).policy(endingAt: end)
                == .after(end.addingTimeInterval(90)))
    }
}
