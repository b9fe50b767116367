import ArgumentParser
import FoundationEssentials
import LiveActivity
import LiveActivityMQTT
import Location
import Logging
import MQTT
import MyelineConfiguration
import MyelineWire

/// `myeline-agent simulate`: a load generator that publishes what a fleet of agents would.
struct SimulateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "simulate",
        abstract: "Publish the envelopes and track points of a simulated fleet driving real tracks (a load generator).",
        discussion: """
            Each of --devices trackers (DEVICE-1 ... DEVICE-N, DEVICE being device.id) publishes its retained \
            online status and the start envelope of a location activity, then moves one point along a GPX \
            track per update: a retained update envelope and a track point, schema-valid, with the positions, \
            speeds and courses of the track. Updates go to the devices in turn at --rate per second in all, \
            for --duration seconds or --count updates. One MQTT connection carries the whole fleet, or \
            --connections of them (device n on connection n mod N); with one connection per device, each \
            registers its device's offline will, as agents do. The broker, credentials, TLS and prefix come \
            from the configuration, as for run. Prints what it published and the rate reached. See \
            docs/benchmarks.md and docs/agent.md.
            """)

    @OptionGroup var connection: ConnectionOptions

    @Option(name: .customLong("prefix"), help: ArgumentHelp("The topic prefix (topic-prefix).", valueName: "prefix"))
    var prefix: String?

    @Option(help: ArgumentHelp("How many trackers, 1...100000.", valueName: "n"))
    var devices = 100

    @Option(
        help: ArgumentHelp(
            "How many MQTT connections carry the fleet, 1...\(Self.maximumConnections) and at most --devices; "
                + "each has its own client id and network thread.",
            valueName: "n"))
    var connections = 1

    /// The most connections one simulation opens: each has a thread of its own.
    static let maximumConnections = 2_000

    @Option(help: ArgumentHelp("Updates per second across the fleet, or max.", valueName: "r|max"))
    var rate = "100"

    @Option(help: ArgumentHelp("How long to publish updates, seconds (0: only the starts).", valueName: "s"))
    var duration: Double = 60

    @Option(
        help: ArgumentHelp(
            "Publish exactly this many updates, encoded before the clock starts, so that the rate measures the "
                + "broker and its subscribers rather than the encoding; --duration then only bounds the run.",
            valueName: "n"))
    var count: Int?

    @Option(help: ArgumentHelp("The QoS of every message: 0, 1 or 2.", valueName: "qos"))
    var qos = 1

    @Option(
        name: .customLong("track"), help: ArgumentHelp("A GPX file to drive along; repeat for more.", valueName: "file")
    )
    var tracks: [String] = []

    @Flag(name: .customLong("no-track-points"), help: "Publish the envelopes only.")
    var withoutTrackPoints = false

    /// Updates per second, nil for as fast as possible.
    var updatesPerSecond: Double? { rate == "max" ? nil : Double(rate) }

    func validate() throws {
        guard (1...100_000).contains(devices) else {
            throw ValidationError("--devices: \(devices) is not in 1...100000")
        }
        guard (1...min(devices, Self.maximumConnections)).contains(connections) else {
            throw ValidationError(
                "--connections: \(connections) is not in 1...\(min(devices, Self.maximumConnections)) "
                    + "(at most one per device, at most \(Self.maximumConnections))")
        }
        if rate != "max", !(Double(rate).map { $0 > 0 && $0 <= 10_000_000 } ?? false) {
            throw ValidationError("--rate: \(rate) is not a number of updates per second (such as 1000) or max")
        }
        guard duration >= 0, duration <= 86_400 else {
            throw ValidationError("--duration: \(duration) is not a number of seconds in 0...86400")
        }
        if let count, !(0...10_000_000).contains(count) {
            throw ValidationError("--count: \(count) is not in 0...10000000")
        }
        guard MQTTQoS(rawValue: Int32(qos)) != nil else { throw ValidationError("--qos: \(qos) is not 0, 1 or 2") }
        guard !tracks.isEmpty else { throw ValidationError("--track: give at least one GPX file to drive along") }
    }

    func run() async throws {
        let environment = ProcessInfo.processInfo.environment
        let (loaded, password) = try await ConfigurationOptions.connecting(connection, prefix: prefix)
            .loadWithPassword(environment: environment)
        let configuration = loaded.configuration
        // Thousands of simulated devices: their lines only when asked for in detail.
        LogOutput.start(level: configuration.logLevel <= .debug ? configuration.logLevel : .warning)
        // Each device's content stays fresh for three of its updates (at least a minute).
        let interval = updatesPerSecond.map { Double(devices) / $0 } ?? 0
        var simulation = try FleetSimulation(
            device: configuration.device.id, count: devices, tracks: try tracks.map(Self.load),
            topics: TopicTree(prefix: configuration.topicPrefix), staleAfter: max(60, 3 * interval),
            clock: SystemWallClock())
        let mqtt = clientConfigurations(
            configuration.mqtt.clientConfiguration(password: password), simulation: simulation,
            topics: TopicTree(prefix: configuration.topicPrefix))
        let qos = MQTTQoS(rawValue: Int32(qos)) ?? .atLeastOnce
        let started = try await Self.withClients(mqtt[...], logger: Logger(label: "myeline.simulate")) { clients in
            for client in clients { try await client.waitUntilConnected() }
            var publisher = SimulationPublisher(clients: clients, qos: qos, trackPoints: !withoutTrackPoints)
            try await publisher.publish(simulation.starts())
            let prepared = try count.map { count in try (0..<count).map { _ in try simulation.step() } }
            let clock = ContinuousClock()
            let start = clock.now
            let end = start + .milliseconds(Int64(duration * 1000))
            var updates = 0
            while clock.now < end, updates < (count ?? .max) {
                var due = SimulationPublisher.batch
                if let updatesPerSecond {
                    let next = start + .nanoseconds(Int64(Double(updates + 1) / updatesPerSecond * 1e9))
                    if next > clock.now { try await Task.sleep(until: min(next, end)) }
                    due = Int(start.duration(to: clock.now) / .seconds(1) * updatesPerSecond) - updates
                }
                due = min(due, SimulationPublisher.batch, (count ?? .max) - updates)
                guard due > 0 else { continue }
                let batch =
                    try prepared.map { Array($0[updates..<(updates + due)]) }
                    ?? (0..<due).map { _ in try simulation.step() }
                try await publisher.publish(updates: batch)
                updates += due
            }
            return (updates: updates, seconds: start.duration(to: clock.now), messages: publisher.published)
        }
        let seconds = started.seconds / .seconds(1)
        let perSecond = seconds > 0 ? Double(started.updates) / seconds : 0
        print(
            "simulate: \(devices) devices, \(started.updates) updates (\(started.messages) messages with the starts) "
                + "in \((seconds * 100).rounded() / 100) s: \(Int(perSecond.rounded())) updates/s")
    }

    /// One configuration per connection, each with its own client id; with a connection per device,
    /// each with its device's will, as an agent registers it.
    private func clientConfigurations(
        _ base: MQTTConfiguration, simulation: FleetSimulation, topics: TopicTree
    ) -> [MQTTConfiguration] {
        let run = "\(base.clientID)-simulate-\(UUID().uuidString.prefix(8).lowercased())"
        return (0..<connections).map { index in
            var mqtt = base
            mqtt.clientID = connections == 1 ? run : "\(run)-\(index + 1)"
            if connections == simulation.deviceCount {
                let device = simulation.deviceID(at: index)
                mqtt.will = MQTTMessage(will: ActivityWire(device: device, topics: topics).will(instance: nil))
            }
            return mqtt
        }
    }

    /// Runs `body` with a started client for each configuration, and shuts them all down after it.
    private static func withClients<R: Sendable>(
        _ configurations: ArraySlice<MQTTConfiguration>, logger: Logger, started: [MQTTClient] = [],
        _ body: ([MQTTClient]) async throws -> R
    ) async throws -> R {
        guard let first = configurations.first else { return try await body(started) }
        return try await MQTTClient.withClient(configuration: first, logger: logger) { client in
            try await withClients(configurations.dropFirst(), logger: logger, started: started + [client], body)
        }
    }

    /// The points of a GPX file that have a position.
    static func load(_ path: String) throws -> [GPXPoint] {
        let bytes: [UInt8]
        do {
            bytes = try readWholeFile(path)
        } catch {
            throw ValidationError("--track: \(error.message)")
        }
        var decoder = GPXDecoder()
        let points = decoder.decode(bytes)
        guard points.count >= 2 else {
            throw ValidationError("--track: \(path) has \(points.count) track points; a track needs at least two")
        }
        return points
    }
}

/// Publishes the simulation's messages in order, a bounded batch in flight at a time; device n's
/// messages go through connection n mod the number of connections.
private struct SimulationPublisher {
    /// The most updates handed to the clients at once.
    static let batch = 256

    let clients: [MQTTClient]
    let qos: MQTTQoS
    let trackPoints: Bool
    /// Messages published so far.
    private(set) var published = 0

    init(clients: [MQTTClient], qos: MQTTQoS, trackPoints: Bool) {
        self.clients = clients
        self.qos = qos
        self.trackPoints = trackPoints
    }

    /// Publishes the messages, retained or not as each says, in order of retention then of the list.
    mutating func publish(_ messages: [FleetSimulation.Message]) async throws {
        for start in stride(from: 0, to: messages.count, by: Self.batch) {
            let slice = messages[start..<min(start + Self.batch, messages.count)]
            try await send(slice.filter(\.retained), retained: true)
            try await send(slice.filter { !$0.retained }, retained: false)
        }
    }

    /// Publishes the envelopes of the updates (retained), then their track points.
    mutating func publish(updates: [(envelope: FleetSimulation.Message, trackPoint: FleetSimulation.Message)])
        async throws
    {
        try await send(updates.map(\.envelope), retained: true)
        if trackPoints { try await send(updates.map(\.trackPoint), retained: false) }
    }

    /// Sends each connection its devices' messages, in order, the connections side by side.
    private mutating func send(_ messages: [FleetSimulation.Message], retained: Bool) async throws {
        var perClient = [[MQTTMessage]](repeating: [], count: clients.count)
        for message in messages {
            perClient[message.device % clients.count].append(
                MQTTMessage(topic: message.topic, payload: message.payload, qos: qos, retain: retained))
        }
        let outcomes = await withTaskGroup(of: (acknowledged: Int, failure: (any Error)?).self) { group in
            for (client, own) in zip(clients, perClient) where !own.isEmpty {
                group.addTask { await client.publishInOrder(own) }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        published += outcomes.map(\.acknowledged).reduce(0, +)
        if let failure = outcomes.lazy.compactMap(\.failure).first { throw failure }
    }
}
