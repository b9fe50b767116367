// The delivery tracker seed on Linux: an order's activity (progress, minutes to delivery) whose
// updates a server pushes (start, update, finish, end with immediate dismissal), as ActivityKit's
// push updates do; the pushes arrive on an MQTT topic of the example's own.
import ArgumentParser
import DeliveryModel
import Foundation
import LiveActivity
import LiveActivityMQTT
import Logging
import MQTT

@main
struct DeliveryTracker: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "example-delivery", abstract: "A delivery's Live Activity, updated by its server's pushes.")

    @Option(help: "The broker, such as mqtt://localhost.") var broker: String
    @Option(help: "This device's id, such as van-7.") var device: String
    @Option(help: "The order number.") var order: String

    func run() async throws {
        let device = try DeviceID(device)
        let center = ActivityCenter(clock: SystemWallClock())
        let address = try BrokerAddress(parsing: broker)
        let logger = Logger(label: "example-delivery")
        let pushes = MQTTConfiguration(broker: address, clientID: "example-delivery-push-\(device)")
        try await MQTTClient.withClient(configuration: pushes, logger: logger) { client in
            // Subscribed before the activity starts, so no push made for it is missed.
            let subscription = try await client.subscribe(to: [DeliveryPush.topic(device: device)])
            let mqtt = MQTTConfiguration(broker: address, clientID: "example-delivery-\(device)")
            try await ActivityPublisher.withPublisher(
                configuration: mqtt, device: device, center: center, logger: logger
            ) { _ in
                let activity = try center.request(
                    attributes: DeliveryAttributes(orderNumber: order),
                    content: ActivityContent(state: .init(progress: 0, minutesToDelivery: 30), staleDate: nil))
                print("order \(order): started")
                for await message in subscription {
                    guard let push = try? JSONDecoder().decode(DeliveryPush.self, from: Data(message.payload)) else {
                        print("ignoring a push that is not one: \(String(decoding: message.payload, as: UTF8.self))")
                        continue
                    }
                    let content = ActivityContent(state: push.contentState, staleDate: nil)
                    if push.event == "end" {
                        let dismissal = push.dismissalDate.map { Date(timeIntervalSince1970: $0) } ?? Date()
                        try activity.end(content, dismissalPolicy: .after(dismissal))
                        print("order \(order): delivered")
                        break
                    }
                    try activity.update(content)
                    print("order \(order): \(push.contentState.progress) %, \(push.contentState.minutesToDelivery) min")
                }
                // The center dismisses it at the dismissal date; the stream finishes then.
                for await _ in activity.activityStateUpdates {}
            }
        }
    }
}
