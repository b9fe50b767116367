import AsyncSupport
import Foundation
import Locking
import Logging
import MQTT
import Testing
import TestSupport

/// The MQTT client with its connection's traffic on an event loop (the agent's way, issue 24),
/// against a real, private mosquitto: publishes from the loop's own thread and from others, the
/// callbacks on the loop, the keep-alive, a broker's loss and return, TLS, and a clean stop.
@Suite(.tags(.integration), .timeLimit(.minutes(2)))
struct MQTTClientEventLoopIntegrationTests {
    static let logger = Logger(label: "test")

    static func configuration(_ broker: TestBroker, _ name: String) -> MQTTConfiguration {
        MQTTClientIntegrationTests.configuration(broker, name)
    }

    /// Runs `body` with a client whose connection runs on a fresh event loop, then ends the loop.
    static func withLoopClient<Result: Sendable>(
        _ configuration: MQTTConfiguration, _ body: (MQTTClient, EventLoop) async throws -> Result
    ) async throws -> Result {
        let loop = EventLoop(name: "test-mqtt-loop")
        defer { loop.shutdown() }
        return try await MQTTClient.withClient(configuration: configuration, logger: logger, eventLoop: loop) {
            try await body($0, loop)
        }
    }

    @Test func everyQoSGoesBothWaysFromTheLoopsThreadAndFromOthersWithTheCallbacksOnTheLoop() async throws {
        let prefix = MQTTClientIntegrationTests.uniquePrefix()
        try await TestBroker.with { broker in
            try await Self.withLoopClient(Self.configuration(broker, "loop")) { client, loop in
                try await client.waitUntilConnected()
                let subscription = try await client.subscribe(to: ["\(prefix)/#"]) { message in
                    (message, loop.isCurrent)
                }
                // Published by a task that prefers the loop (as the agent's drainer does), then by
                // one on the cooperative pool, at every QoS, in order.
                let onLoop = try await withTaskExecutorPreference(loop) { () -> Bool in
                    for qos in MQTTQoS.allCases {
                        try await client.publish(
                            "\(prefix)/loop/\(qos.rawValue)", payload: [UInt8(qos.rawValue)], qos: qos)
                    }
                    return loop.isCurrent
                }
                #expect(onLoop)
                for qos in MQTTQoS.allCases {
                    try await client.publish("\(prefix)/pool/\(qos.rawValue)", payload: [UInt8(qos.rawValue)], qos: qos)
                }
                var iterator = subscription.makeAsyncIterator()
                var received: [String] = []
                var everyCallbackOnTheLoop = true
                while received.count < 6, let (message, onLoop) = await iterator.next() {
                    received.append(message.topic)
                    everyCallbackOnTheLoop = everyCallbackOnTheLoop && onLoop
                }
                #expect(received == ["loop", "pool"].flatMap { from in (0...2).map { "\(prefix)/\(from)/\($0)" } })
                #expect(everyCallbackOnTheLoop)
            }
        }
    }

    @Test(.tags(.slow)) func anIdleConnectionIsKeptAliveByTheLoop() async throws {
        let topic = "\(MQTTClientIntegrationTests.uniquePrefix())/alive"
        try await TestBroker.with { broker in
            var configuration = Self.configuration(broker, "idle")
            configuration.keepAlive = .seconds(5)
            try await Self.withLoopClient(configuration) { client, _ in
                var events = client.connectionEvents.makeAsyncIterator()
                #expect(await events.next() == .connected(sessionPresent: false))
                let changes = Locked<[MQTTConnectionEvent]>([])
                let watcher = Task {
                    while let event = await events.next() { changes.withLock { $0.append(event) } }
                }
                defer { watcher.cancel() }
                // Nothing sent for over three keep-alives: mosquitto closes a connection silent for
                // 1.5 keep-alives (it did after 11 s, checked with a raw client that sent nothing),
                // unless the loop's keep-alive check sends its PINGREQs.
                try await Task.sleep(for: .seconds(18))
                #expect(changes.withLock { $0 } == [])
                #expect(client.isConnected)
                try await client.publish(topic, payload: Array("still here".utf8), qos: .exactlyOnce)
            }
        }
    }

    @Test func theLoopsConnectionIsBackAfterTheBrokerIsKilledAndItsQueuedMessageGoesOut() async throws {
        let prefix = MQTTClientIntegrationTests.uniquePrefix()
        try await TestBroker.with { broker in
            try await Self.withLoopClient(Self.configuration(broker, "loop-survivor")) { client, loop in
                var events = client.connectionEvents.makeAsyncIterator()
                #expect(await events.next() == .connected(sessionPresent: false))
                let subscription = try await client.subscribe(to: ["\(prefix)/#"])

                await broker.kill()
                guard case .disconnected(let error) = await events.next() else {
                    Issue.record("expected a disconnection after the broker was killed")
                    return
                }
                #expect(error?.code == .connectionLost)
                let offlinePublish = Task(executorPreference: loop) {
                    try await client.publish(
                        "\(prefix)/queued", payload: Array("kept".utf8), qos: .exactlyOnce, retain: true)
                }
                try await broker.start()
                while let event = await events.next() {
                    if case .connected = event { break }
                }
                try await offlinePublish.value
                try await withTaskExecutorPreference(loop) {
                    try await client.publish("\(prefix)/after", payload: Array("again".utf8), qos: .exactlyOnce)
                }
                var iterator = subscription.makeAsyncIterator()
                var received: [String: String] = [:]
                while received.count < 2, let message = await iterator.next() {
                    received[message.topic] = String(decoding: message.payload, as: UTF8.self)
                }
                #expect(received == ["\(prefix)/queued": "kept", "\(prefix)/after": "again"])
            }
        }
    }

    @Test func tlsTrafficRunsOnTheLoopAfterTheHandshake() async throws {
        try await withTemporaryDirectory { directory in
            let certificates = try await TestCertificates.make(in: directory)
            try await TestBroker.with(listener: .tls(certificates, requireClientCertificate: true)) { broker in
                var configuration = Self.configuration(broker, "loop-tls")
                configuration.tls = MQTTTLSConfiguration(
                    caFile: certificates.caFile, certificateFile: certificates.clientCertificateFile,
                    keyFile: certificates.clientKeyFile)
                let topic = "\(MQTTClientIntegrationTests.uniquePrefix())/tls"
                try await Self.withLoopClient(configuration) { client, loop in
                    try await client.waitUntilConnected()
                    let subscription = try await client.subscribe(to: [topic]) { ($0.payload, loop.isCurrent) }
                    // More than one TLS record's worth, so that reads span records.
                    let payloads = (0..<20).map { index in Array(repeating: UInt8(index), count: 20_000) }
                    try await withTaskExecutorPreference(loop) {
                        for payload in payloads { try await client.publish(topic, payload: payload, qos: .exactlyOnce) }
                    }
                    var iterator = subscription.makeAsyncIterator()
                    for payload in payloads {
                        let (received, onLoop) = try #require(await iterator.next())
                        #expect(received == payload)
                        #expect(onLoop)
                    }
                }
            }
        }
    }

    @Test func aClientOnALoopStopsCleanlyAndTheBrokerSendsNoWill() async throws {
        let topic = "\(MQTTClientIntegrationTests.uniquePrefix())/status"
        try await TestBroker.with { broker in
            try await MQTTClient.withClient(configuration: Self.configuration(broker, "watcher"), logger: Self.logger) {
                watcher in
                let subscription = try await watcher.subscribe(to: [topic])
                var configuration = Self.configuration(broker, "leaving")
                configuration.will = MQTTMessage(topic: topic, payload: Array("offline".utf8), qos: .atLeastOnce)
                try await Self.withLoopClient(configuration) { client, loop in
                    try await client.waitUntilConnected()
                    try await withTaskExecutorPreference(loop) {
                        try await client.publish(topic, payload: Array("online".utf8), qos: .atLeastOnce)
                    }
                }
                // A marker after the stop: a will would have come before it.
                try await watcher.publish(topic, payload: Array("marker".utf8), qos: .atLeastOnce)
                var iterator = subscription.makeAsyncIterator()
                var payloads: [String] = []
                while payloads.last != "marker", let message = await iterator.next() {
                    payloads.append(String(decoding: message.payload, as: UTF8.self))
                }
                #expect(payloads == ["online", "marker"])
            }
        }
    }
}
