// The delivery seed's server: waits for the device's delivery activity to start (its retained
// envelope), then pushes its progress, the finish, and the end with immediate dismissal.
import ArgumentParser
import DeliveryModel
import Foundation
import LiveActivity
import MyelineWire
import Logging
import MQTT

@main
struct DeliveryServer: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "example-delivery-server", abstract: "Push a delivery's progress to its tracker.")

    @Option(help: "The broker, such as mqtt://localhost.") var broker: String
    @Option(help: "The tracker's device id, such as van-7.") var device: String
    @Option(help: "Seconds between two pushes.") var interval = 1.0

    func run() async throws {
        let device = try DeviceID(device)
        let mqtt = MQTTConfiguration(broker: try BrokerAddress(parsing: broker), clientID: "example-delivery-server")
        try await MQTTClient.withClient(configuration: mqtt, logger: Logger(label: "example-delivery-server")) {
            client in
            let envelopes = try await client.subscribe(to: [TopicTree().activities(device: device)])
            for await message in envelopes {
                guard let header = try? WireCodec.decode(EnvelopeHeader.self, from: Data(message.payload)),
                    header.attributesType == DeliveryAttributes.typeName, header.event != .end
                else { continue }
                print("delivery \(header.activity) started: pushing")
                break
            }
            for (progress, minutes) in [(20, 24), (40, 18), (60, 12), (80, 6), (100, 0)] {
                try await push(client, device, "update", .init(progress: progress, minutesToDelivery: minutes))
                try await Task.sleep(for: .seconds(interval))
            }
            try await push(client, device, "end", .init(progress: 100, minutesToDelivery: 0), dismissal: Date())
        }
    }

    private func push(
        _ client: MQTTClient, _ device: DeviceID, _ event: String, _ state: DeliveryAttributes.ContentState,
        dismissal: Date? = nil
    ) async throws {
        let push = DeliveryPush(event: event, contentState: state, timestamp: Date(), dismissalDate: dismissal)
        try await client.publish(DeliveryPush.topic(device: device), payload: Array(try JSONEncoder().encode(push)))
        print("pushed \(event): \(state.progress) %")
    }
}
