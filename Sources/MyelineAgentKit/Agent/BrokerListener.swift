import AgentCore
import FoundationEssentials
import LiveActivity
import MyelineWire
import Logging
import MQTT
import ServiceLifecycle

/// Turns what the broker sends into the core's events: the client's connection events, commands
/// on the device's command topic, the retained messages on its activity topics (which the broker
/// sends after each subscription: the activities as the broker knows them) and the statuses on
/// its status topic.
///
/// Graceful shutdown: stops listening at once and returns.
struct BrokerListener: Service, CustomStringConvertible {
    /// What service-lifecycle logs for this service.
    var description: String { "BrokerListener" }

    let client: MQTTClient
    let topics: TopicTree
    let device: DeviceID
    let inbox: AgentInbox
    let logger: Logger

    func run() async throws {
        let commands = try await client.subscribe(to: [topics.command(device: device)])
        // Only the retained envelopes matter here: with No Local, the broker no longer sends back
        // every envelope this agent publishes (MQTT 5; the retained ones still come at the subscription).
        let activities = try await client.subscribe(to: [topics.activities(device: device)], noLocal: true)
        let statuses = try await client.subscribe(to: [topics.status(device: device)])
        let (inbox, topics, device, logger) = (inbox, topics, device, logger)
        await withDiscardingTaskGroup { group in
            group.addTask {
                for await event in client.connectionEvents.cancelOnGracefulShutdown() {
                    switch event {
                    case .connected(let sessionPresent):
                        inbox.post(.connected(sessionPresent: sessionPresent))
                    case .disconnected(let error?):
                        inbox.post(.disconnected(sessionTakenOver: error.code == .sessionTakenOver))
                    case .disconnected(nil), .connectionFailed:
                        continue
                    }
                }
            }
            group.addTask {
                for await message in commands.cancelOnGracefulShutdown() {
                    let payload = Data(message.payload)
                    do throws(ActivityError) {
                        inbox.post(.command(try WireCodec.decode(Command.self, from: payload)))
                    } catch {
                        inbox.post(.malformedCommand(id: Command.requestID(in: payload), reason: error.message))
                    }
                }
            }
            group.addTask {
                for await message in activities.cancelOnGracefulShutdown() where message.retain {
                    guard case .activity(device, let activityID) = topics.route(message.topic) else {
                        logger.debug(
                            "Ignoring a message on an unexpected topic",
                            metadata: ["event": "agent.message.ignored", "mqtt.topic": "\(message.topic)"])
                        continue
                    }
                    inbox.post(.retained(activityID: activityID, payload: message.payload))
                }
            }
            group.addTask {
                for await message in statuses.cancelOnGracefulShutdown() {
                    if message.payload.isEmpty {
                        inbox.post(.statusCleared)
                        continue
                    }
                    // A foreign payload says nothing about another agent.
                    guard let status = try? WireCodec.decode(StatusMessage.self, from: Data(message.payload)) else {
                        continue
                    }
                    inbox.post(.status(status, retained: message.retain))
                }
            }
        }
    }
}
