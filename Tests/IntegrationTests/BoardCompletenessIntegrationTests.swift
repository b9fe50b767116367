import Foundation
import LiveActivity
import Locking
import Logging
import MQTT
import TestSupport
import Testing

/// Whether `myeline-aggregator --once` can be trusted by a cron job (issue 17's findings 1 and 4):
/// its exit status says when it never reached the broker or when the broker cut the retained
/// bootstrap, its JSON ends with a summary saying how complete it is, and the cut is judged on real
/// mosquittos with their default, small and lifted queue limits, with other applications' retained
/// messages beside the fleet.
@Suite(.tags(.integration), .serialized, .timeLimit(.minutes(3)))
struct BoardCompletenessIntegrationTests {
    typealias Fleet = AggregatorIntegrationTests

    /// Runs `myeline-aggregator ARGUMENTS` until it exits; returns its status and output.
    static func once(_ broker: String, _ arguments: [String]) async throws -> (status: Int32, output: String) {
        let board = try TestProcess(
            name: "myeline-aggregator", executable: builtProductPath("myeline-aggregator"),
            arguments: ["--broker", broker] + arguments, environment: ["PATH": "/usr/bin:/bin"])
        let status = try await withDeadline(.seconds(60), what: "myeline-aggregator \(arguments)", process: board) {
            try await board.waitForExit()
        }
        return (status, board.output)
    }

    /// The envelopes of `count` devices, and `foreign` retained messages of another application.
    static func retained(devices count: Int, foreign: Int = 0) -> [(String, [UInt8])] {
        (0..<count).map { ("myeline/dev-\($0)/activities/a1", Fleet.envelope("dev-\($0)")) }
            + (0..<foreign).map {
                ("homeassistant/sensor/s\($0)/config", Array(#"{"name":"sensor \#($0)","state_topic":"x"}"#.utf8))
            }
    }

    /// Was exit 0 with an empty board: a closed port, a socket nobody listens on, a host that does not resolve.
    @Test(arguments: ["closed-port", "no-socket", "unresolvable"])
    func onceExits69WhenItNeverReachedTheBroker(kind: String) async throws {
        try await withTemporaryDirectory { directory in
            let broker =
                switch kind {
                case "closed-port": "mqtt://127.0.0.1:\(try freeLoopbackPort())"
                case "no-socket": "unix:\(directory)/nobody.sock"
                default: "mqtt://no-such-broker.invalid"
                }
            let table = try await Self.once(broker, ["--once", "--timeout", "1"])
            #expect(table.status == 69, "\(table.output)")
            #expect(table.output.contains("myeline-aggregator: cannot reach the broker at "), "\(table.output)")
            let json = try await Self.once(broker, ["--once", "--json", "--timeout", "1"])
            #expect(json.status == 69)
            let last = try #require(json.output.split(separator: "\n").last { $0.hasPrefix("{") })
            let summary = try #require(try JSONSerialization.jsonObject(with: Data(last.utf8)) as? [String: Any])
            #expect(summary["kind"] as? String == "summary")
            #expect(summary["connected"] as? Bool == false && summary["complete"] as? Bool == false)
            #expect((summary["error"] as? String)?.contains("cannot reach the broker") == true)
        }
    }

    /// A broker that refuses the board's credentials is not an outage: `--once` says so and exits 77.
    @Test func onceExits77WhenTheBrokerRefusesTheBoard() async throws {
        try await TestBroker.with(users: ["board": "right"]) { broker in
            let board = try TestProcess(
                name: "myeline-aggregator", executable: builtProductPath("myeline-aggregator"),
                arguments: ["--broker", broker.address.description, "--once", "--json", "--timeout", "5"],
                environment: [
                    "PATH": "/usr/bin:/bin", "MYELINE_MQTT_USERNAME": "board", "MYELINE_MQTT_PASSWORD": "wrong",
                ])
            let status = try await withDeadline(.seconds(60), what: "--once", process: board) {
                try await board.waitForExit()
            }
            #expect(status == 77, "\(board.output)")
            #expect(board.output.contains("myeline-aggregator: the broker refused the board: "), "\(board.output)")
            #expect(board.output.contains(#""connected":false"#))
        }
    }

    /// mosquitto's queue limits cut the bootstrap: the board says so, names the limit, exits 75, and
    /// its JSON summary says `"complete":false`. The small limit was missed (220 rows, no warning).
    @Test(arguments: [
        ("default", [String](), 3_000),
        ("small", ["max_queued_messages 200"], 1_500),
    ])
    func aCutBootstrapIsReportedAndExits75(name: String, limits: [String], devices: Int) async throws {
        try await TestBroker.with(extraConfiguration: limits) { broker in
            try await Fleet.publish(Self.retained(devices: devices), to: broker)
            let table = try await Self.once(broker.address.description, ["--once"])
            #expect(table.status == 75, "\(name): \(table.output.suffix(2000))")
            #expect(table.output.contains("WARNING: only "), "\(name)")
            #expect(table.output.contains("raise max_queued_messages in mosquitto.conf"), "\(name)")
            let json = try await Self.once(broker.address.description, ["--once", "--json"])
            #expect(json.status == 75)
            let lines = json.output.split(separator: "\n").filter { $0.hasPrefix("{") }
            let rows = lines.filter { $0.contains(#""kind":"activity""#) }.count
            #expect(rows < devices, "\(name): the broker dropped some")
            let summary = try #require(lines.last)
            #expect(summary.contains(#""kind":"summary""#) && summary.contains(#""complete":false"#), "\(summary)")
            #expect(summary.contains(#""connected":true"#) && summary.contains(#""retained":\#(rows)"#), "\(summary)")
        }
    }

    /// Other applications' retained messages (Home Assistant's) no longer make a complete bootstrap
    /// look cut ("only 1,100 of 1,352 arrived"), with lifted limits or under mosquitto's defaults.
    @Test(arguments: [
        ("lifted", AggregatorIntegrationTests.tunedBroker, 1_100, 200),
        ("default", ["sys_interval 1"], 900, 300),
    ])
    func foreignRetainedMessagesDoNotCryWolf(name: String, limits: [String], devices: Int, foreign: Int)
        async throws
    {
        try await TestBroker.with(extraConfiguration: limits) { broker in
            try await Fleet.publish(Self.retained(devices: devices, foreign: foreign), to: broker)
            let json = try await Self.once(broker.address.description, ["--once", "--json"])
            #expect(json.status == 0, "\(name): \(json.output.suffix(2000))")
            let lines = json.output.split(separator: "\n").filter { $0.hasPrefix("{") }
            #expect(lines.filter { $0.contains(#""kind":"activity""#) }.count == devices)
            #expect(lines.filter { $0.contains(#""kind":"device""#) }.count == devices)
            let summary = try #require(lines.last)
            #expect(summary.contains(#""complete":true"#) && !summary.contains("warning"), "\(summary)")
            #expect(!json.output.contains("max_queued"))
        }
    }

    /// With the limits lifted, 10,000 retained activities arrive whole and the board says so.
    @Test func liftedLimitsGiveTheWholeFleet() async throws {
        try await TestBroker.with(extraConfiguration: AggregatorIntegrationTests.tunedBroker) { broker in
            try await Fleet.publish(Self.retained(devices: 10_000), to: broker)
            let json = try await Self.once(broker.address.description, ["--once", "--json"])
            #expect(json.status == 0)
            let lines = json.output.split(separator: "\n").filter { $0.hasPrefix("{") }
            #expect(lines.filter { $0.contains(#""kind":"activity""#) }.count == 10_000)
            #expect(lines.last?.contains(#""complete":true"#) == true)
        }
    }

    /// What the verdict rests on, `MQTTClient.subscribeInOnePacket` against mosquitto: the last
    /// filter's retained message comes after every retained message of the filters before it, or,
    /// when mosquitto's queue for the client was full, not at all; a live message sent afterwards
    /// releases it if it was queued.
    @Test(arguments: [
        ("lifted", AggregatorIntegrationTests.tunedBroker, true), ("small", ["max_queued_messages 200"], false),
    ])
    func aLastFiltersRetainedMessageComesLastOrNotAtAll(name: String, limits: [String], whole: Bool) async throws {
        try await TestBroker.with(extraConfiguration: limits) { broker in
            let sentinel = "test/sentinel/\(UUID().uuidString.lowercased())"
            try await Fleet.publish(Self.retained(devices: 1_500) + [(sentinel, Array("sentinel".utf8))], to: broker)
            let configuration = MQTTConfiguration(broker: broker.address, clientID: "one-packet-\(UUID())")
            let arrivals = try await MQTTClient.withClient(configuration: configuration, logger: Logger(label: "test"))
            {
                client in
                try await client.waitUntilConnected()
                let messages = try await client.subscribeInOnePacket(
                    to: ["myeline/+/activities/+", sentinel], transform: { "\($0.topic)|\($0.retain)" })
                let arrivals = Locked<[String]>([])
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask {
                        for await next in messages {
                            arrivals.withLock { $0.append(next) }
                            if next == "\(sentinel)|false" { return }
                        }
                    }
                    // The retained messages, until none came for a second; then the live check.
                    var seen = -1
                    while arrivals.withLock({ $0.count }) != seen {
                        seen = arrivals.withLock { $0.count }
                        try await Task.sleep(for: .seconds(1))
                    }
                    try await client.publish(sentinel, payload: Array("check".utf8), qos: .atLeastOnce)
                    try await withDeadline(.seconds(20), what: "the check") {
                        while !arrivals.withLock({ $0.contains("\(sentinel)|false") }) {
                            try await Task.sleep(for: .milliseconds(50))
                        }
                    }
                    group.cancelAll()
                }
                return arrivals.withLock { $0 }
            }
            let fleet = arrivals.filter { $0.hasPrefix("myeline/") }.count
            let position = arrivals.firstIndex(of: "\(sentinel)|true")
            if whole {
                #expect(fleet == 1_500, "\(name)")
                #expect(position == 1_500, "\(name): the sentinel after the fleet's 1,500, before the check")
            } else {
                #expect(fleet < 1_500, "\(name): mosquitto cut the bootstrap")
                #expect(position == nil, "\(name): the sentinel was dropped with the rest")
            }
            #expect(arrivals.last == "\(sentinel)|false")
        }
    }
}
