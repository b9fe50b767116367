import Foundation
import LiveActivity
import MyelineWire
import LiveActivityMQTT
import Logging
import MQTT
import Testing
import TestSupport

/// A live activity's whole lifecycle over a real broker, published by the library's
/// `ActivityPublisher` and seen by an independent MQTT client (`mosquitto_sub`): the wire
/// contract of docs/topics.md, end to end.
@Suite(.tags(.integration), .timeLimit(.minutes(2)))
struct ContractIntegrationTests {
    static let device = try! DeviceID("van-7")
    static let tree = TopicTree()
    /// A live (not retained) message on an activity topic that ends a `--retained-only` subscriber.
    static let marker = "myeline/probe/activities/marker"

    @Test func lifecycleAsAnIndependentSubscriberSeesIt() async throws {
        try await TestBroker.with { broker in
            guard case .unix(let socket) = broker.address.transport else {
                Issue.record("the default test broker listens on a unix socket")
                return
            }
            // -d prints the SUBACK, so the test knows the subscription is in place before publishing.
            let live = try Self.mosquittoSub([
                "--unix", socket, "-V", "mqttv5", "-t", Self.tree.allActivities, "-t", Self.tree.allStatus, "-d", "-F",
                "MSG|%t|%l|%r|%E|%p",
            ])
            // Stopped however the test ends, also when an expectation throws.
            defer { live.signal(SIGKILL) }
            try await live.waitForLine(containing: "SUBACK")

            let clock = ManualWallClock()
            let center = ActivityCenter(clock: clock)
            let configuration = MQTTConfiguration(broker: broker.address, clientID: "contract-agent")
            // The library's publisher, as the agent uses it: no event of the center is missed, each
            // is one retained publish in order, the dismissal an empty one; online, then offline.
            try await ActivityPublisher.withPublisher(
                configuration: configuration, device: Self.device, center: center, logger: Logger(label: "test")
            ) { publisher in
                let activity = try center.request(
                    attributes: LocationActivityAttributes(deviceID: Self.device, name: "Van 7"),
                    content: ActivityContent(state: LocationActivityAttributes.ContentState(), staleDate: nil))
                clock.advance(by: 1)
                try activity.update(
                    ActivityContent(
                        state: LocationActivityAttributes.ContentState(
                            latitude: 45.260_3, longitude: 13.829_1, speed: 12.5, fix: .fix3D, satellites: 9,
                            fixTime: clock.now),
                        staleDate: clock.now.addingTimeInterval(90), relevanceScore: 50))
                clock.advance(by: 1)
                try activity.end(
                    ActivityContent(state: LocationActivityAttributes.ContentState(), staleDate: nil),
                    dismissalPolicy: .after(clock.now.addingTimeInterval(60)))
                try await live.waitForLine(containing: "\"event\":\"end\"")

                // A board started now gets the ended activity at once: it is the retained message.
                let ended = try await Self.retainedActivities(socket: socket, broker: broker)
                #expect(ended.count == 1)
                let header = try WireCodec.decode(EnvelopeHeader.self, from: Data(try #require(ended.first).utf8))
                #expect(header.seq == 3)

                // At the dismissal date the activity clears its retained envelope by itself: the
                // center's timer dismisses it, the publisher sends the empty retained message.
                clock.advance(by: 60)
                try await live.waitForLine(containing: "|0|0||")
                #expect(activity.activityState == .dismissed)
                #expect(try await Self.retainedActivities(socket: socket, broker: broker).isEmpty)
                #expect(publisher.failedCount == 0)
            }
            try await live.waitForLine(containing: "\"state\":\"offline\"")
            let messages = live.output.split(separator: "\n").filter { $0.hasPrefix("MSG|") }.map {
                $0.split(separator: "|", maxSplits: 5, omittingEmptySubsequences: false).map(String.init)
            }.filter { $0[1] != Self.marker }
            let activities = messages.filter { $0[1].contains("/activities/") }
            try #require(activities.count == 4, "start, update, end, clear:\n\(live.output)")
            var lastSeq = 0
            for message in activities.prefix(3) {
                let envelope = try WireCodec.decode(
                    ActivityEnvelope<LocationActivityAttributes>.self, from: Data(message[5].utf8))
                #expect(envelope.header.seq == lastSeq + 1)
                lastSeq = envelope.header.seq
                #expect(message[2] == String(message[5].utf8.count))
            }
            #expect(
                activities.map { $0[5].contains("\"event\":\"") ? "envelope" : $0[5] } == [
                    "envelope", "envelope", "envelope", "",
                ])
            #expect(activities[3][2] == "0")
            // The end's message expiry runs out a second after its dismissal date, 60 s after it (MQTT 5;
            // the broker's second, ActivityWire.expiry).
            let expiry = try #require(Int(activities[2][4]))
            #expect((60...61).contains(expiry))
            #expect(activities.prefix(2).allSatisfy { $0[4].isEmpty })
            let statuses = try messages.filter { $0[1].hasSuffix("/status") }.map {
                try WireCodec.decode(StatusMessage.self, from: Data($0[5].utf8)).state
            }
            #expect(statuses == [.online, .offline])
            await live.stop()
        }
    }

    /// A program whose body throws still leaves its device `offline` (`shutdown`) on the broker:
    /// the client's clean disconnect discards the will, so without the farewell the retained
    /// status stayed `online`.
    @Test func aProgramThatThrowsStillSaysOffline() async throws {
        struct Failure: Error {}
        try await TestBroker.with { broker in
            guard case .unix(let socket) = broker.address.transport else {
                Issue.record("the default test broker listens on a unix socket")
                return
            }
            let configuration = MQTTConfiguration(broker: broker.address, clientID: "contract-failing")
            await #expect(throws: Failure.self) {
                try await ActivityPublisher.withPublisher(
                    configuration: configuration, device: Self.device, logger: Logger(label: "test")
                ) { publisher in
                    let online = try Self.mosquittoSub(["--unix", socket, "-t", Self.tree.allStatus, "-C", "1"])
                    defer { online.signal(SIGKILL) }
                    try await online.waitForLine(containing: "\"state\":\"online\"")
                    throw Failure()
                }
            }
            // The retained status, read at once by a new subscriber.
            let retained = try Self.mosquittoSub(["--unix", socket, "-t", Self.tree.allStatus, "-C", "1"])
            defer { retained.signal(SIGKILL) }
            #expect(try await retained.waitForExit() == 0, "\(retained.tail)")
            let status = try WireCodec.decode(
                StatusMessage.self, from: Data(retained.output.trimmingCharacters(in: .newlines).utf8))
            #expect(status.state == .offline)
            #expect(status.reason == .shutdown)
        }
    }

    /// The retained activity envelopes a subscriber starting now receives, read by a second
    /// `mosquitto_sub`: `--retained-only` makes it exit at the first live message, which the test
    /// publishes (from a client of its own) once that subscriber is subscribed, so no waiting for
    /// silence is needed.
    static func retainedActivities(socket: String, broker: TestBroker) async throws -> [String] {
        let late = try mosquittoSub([
            "--unix", socket, "-t", Self.tree.allActivities, "--retained-only", "-d", "-F", "RETAINED|%p",
        ])
        defer { late.signal(SIGKILL) }
        try await late.waitForLine(containing: "SUBACK")
        let configuration = MQTTConfiguration(broker: broker.address, clientID: "contract-marker")
        try await MQTTClient.withClient(configuration: configuration, logger: Logger(label: "test")) { client in
            try await client.publish(Self.marker, payload: Array("live".utf8), qos: .atLeastOnce, retain: false)
        }
        #expect(try await late.waitForExit() == 0, "\(late.tail)")
        return late.output.split(separator: "\n").filter { $0.hasPrefix("RETAINED|") }.map {
            String($0.dropFirst("RETAINED|".count))
        }
    }

    /// Starts `mosquitto_sub` with line-buffered output (through `stdbuf`), so that each line reaches
    /// the test as soon as it is printed, not when the pipe's buffer fills.
    static func mosquittoSub(_ arguments: [String]) throws -> TestProcess {
        let subscriber = try executablePath("mosquitto_sub", package: "mosquitto-clients")
        let stdbuf = try executablePath("stdbuf", package: "coreutils")
        return try TestProcess(name: "mosquitto_sub", executable: stdbuf, arguments: ["-oL", subscriber] + arguments)
    }
}
