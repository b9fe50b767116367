// The iOS location app on Linux: its LiveActivityManager and its Start and Stop intents, with
// locations replayed from a file (NMEA, GPX, gpspipe) in place of CLLocationUpdate.liveUpdates().
import ArgumentParser
import Foundation
import LiveActivity
import LiveActivityMQTT
import Location
import Logging
import MQTT

/// The app's one manager: starts the activity, publishes each location, stops it.
struct LiveActivityManager {
    let center: ActivityCenter
    let attributes: LocationActivityAttributes

    /// The lock screen's view of a content: the location, or "No Location Available".
    static func lockScreen(_ state: LocationActivityAttributes.ContentState) -> String {
        guard let latitude = state.latitude, let longitude = state.longitude else { return "No Location Available" }
        return "Latitude: \(latitude) Longitude: \(longitude)"
    }

    /// Requests the activity with no location yet, then follows `locations` until they end.
    func startActivity(following locations: LocationUpdates) async throws -> Activity<LocationActivityAttributes> {
        let activity = try center.request(
            attributes: attributes, content: ActivityContent(state: .init(), staleDate: nil, relevanceScore: 0))
        print(Self.lockScreen(activity.content.state))
        for try await update in locations {
            let state = LocationActivityAttributes.ContentState(
                latitude: update.fix?.latitude, longitude: update.fix?.longitude)
            do {
                try activity.update(ActivityContent(state: state, staleDate: nil))
                print(Self.lockScreen(state))
            } catch {
                print("Cannot update the activity: \(error)")
            }
        }
        return activity
    }

    /// Ends the activity without a location, dismissed at once.
    func stopActivity(_ activity: Activity<LocationActivityAttributes>) throws {
        try activity.end(ActivityContent(state: .init(), staleDate: nil), dismissalPolicy: .immediate)
        print(Self.lockScreen(activity.content.state))
    }
}

/// StartLocationUpdateIntent, then StopLocationUpdateIntent when the file ends, as the app's two
/// buttons perform them.
@main
struct LocationApp: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "example-location", abstract: "The iOS location app's Live Activity, published over MQTT.")

    @Option(help: "The broker, such as mqtt://localhost or unix:/run/mosquitto/mosquitto.sock.") var broker: String
    @Option(help: "This device's id, such as van-7.") var device: String
    @Option(help: "The recorded locations: an NMEA log, a GPX track or a gpspipe capture.") var file: String
    @Option(help: "How many times faster than recorded to replay it.") var speed = 1.0

    func run() async throws {
        let device = try DeviceID(device)
        let center = ActivityCenter(clock: SystemWallClock())
        let manager = LiveActivityManager(center: center, attributes: .init(deviceID: device, name: device.rawValue))
        let locations = try FileSource(path: file, options: .init(pacing: .scaled(speed))).updates
        let mqtt = MQTTConfiguration(broker: try BrokerAddress(parsing: broker), clientID: "example-location-\(device)")
        try await ActivityPublisher.withPublisher(
            configuration: mqtt, device: device, center: center, logger: Logger(label: "example-location")
        ) { _ in
            let activity = try await manager.startActivity(following: locations)
            try manager.stopActivity(activity)
        }
    }
}
