import ArgumentParser
import Foundation
import LiveActivity
import Location
import Logging
import MQTT

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
            for --duration seconds or --count updates. One MQTT connection carries the whole fleet. The \
            broker, credentials, TLS and prefix come from the configuration, as for run. Prints what it \
            published and the rate reached. See docs/benchmarks.md.
            """)

    @OptionGroup var connection: ConnectionOptions

    @Option(name: .customLong("prefix"), help: ArgumentHelp("The topic prefix (topic-prefix).", valueName: "prefix"))
    var prefix: String?

    @Option(help: ArgumentHelp("How many trackers, 1...100000.", valueName: "n"))
    var devices = 100

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
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = configuration.logLevel <= .debug ? configuration.logLevel : .warning
            return handler
        }
        // Each device's content stays fresh for three of its updates (at least a minute).
        let interval = updatesPerSecond.map { Double(devices) / $0 } ?? 0
        var simulation = try FleetSimulation(
            device: configuration.device.id, count: devices, tracks: try tracks.map(Self.load),
            topics: TopicTree(prefix: configuration.topicPrefix), staleAfter: max(60, 3 * interval),
            clock: SystemWallClock())
        var mqtt = configuration.mqtt.clientConfiguration(password: password)
        mqtt.clientID += "-simulate-\(UUID().uuidString.prefix(8).lowercased())"
        let qos = MQTTQoS(rawValue: Int32(qos)) ?? .atLeastOnce
        let started = try await MQTTClient.withClient(configuration: mqtt, logger: Logger(label: "myeline.simulate")) {
            client in
            try await client.waitUntilConnected()
            var publisher = SimulationPublisher(client: client, qos: qos, trackPoints: !withoutTrackPoints)
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
                + "in \(String(format: "%.2f", seconds)) s: \(String(format: "%.0f", perSecond)) updates/s")
    }

    /// The points of a GPX file that have a position.
    static func load(_ path: String) throws -> [GPXPoint] {
        let bytes: [UInt8]
        do {
            bytes = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        } catch {
            throw ValidationError("--track: cannot read \(path): \(error.localizedDescription)")
        }
        var decoder = GPXDecoder()
        let points = decoder.decode(bytes)
        guard points.count >= 2 else {
            throw ValidationError("--track: \(path) has \(points.count) track points; a track needs at least two")
        }
        return points
    }
}

/// Publishes the simulation's messages in order, a bounded batch in flight at a time.
private struct SimulationPublisher {
    /// The most updates handed to the client at once.
    static let batch = 256

    let client: MQTTClient
    let qos: MQTTQoS
    let trackPoints: Bool
    /// Messages published so far.
    private(set) var published = 0

    init(client: MQTTClient, qos: MQTTQoS, trackPoints: Bool) {
        self.client = client
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

    private mutating func send(_ messages: [FleetSimulation.Message], retained: Bool) async throws {
        guard !messages.isEmpty else { return }
        let (acknowledged, failure) = await client.publishInOrder(
            messages.map { ($0.topic, $0.payload) }, qos: qos, retain: retained)
        published += acknowledged
        if let failure { throw failure }
    }
}
