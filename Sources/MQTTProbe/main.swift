// mqtt-probe: connects with a will, says "connected", then stays connected until it is killed.
// Integration tests start it and SIGKILL it to prove that the broker publishes the will.
import Foundation
import Logging
import MQTT

let arguments = CommandLine.arguments
guard arguments.count == 5 else {
    print("usage: MQTTProbe BROKER-URL CLIENT-ID WILL-TOPIC WILL-PAYLOAD")
    exit(64)
}

let configuration = MQTTConfiguration(
    broker: try BrokerAddress(parsing: arguments[1]),
    clientID: arguments[2],
    will: MQTTMessage(topic: arguments[3], payload: Array(arguments[4].utf8), qos: .atLeastOnce, retain: true)
)
try await MQTTClient.withClient(configuration: configuration, logger: Logger(label: "mqtt-probe")) { client in
    for await event in client.connectionEvents {
        FileHandle.standardOutput.write(Data("\(event)\n".utf8))
    }
}
