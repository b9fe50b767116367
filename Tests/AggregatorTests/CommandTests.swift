import ArgumentParser
import Board
import Foundation
import MQTT
import MyelineConfiguration
import TestSupport
import Testing

@testable import Aggregator

/// The command line and the configuration: help, precedence, and mistakes that name their key.
struct CommandTests {
    @Test func help() {
        #expect(
            AggregatorCommand.helpMessage(columns: 80) == """
                OVERVIEW: Show a live board of every Myeline tracker's activities.

                Subscribes to the status and activity topics of every device under a topic
                prefix and shows them as a live board in the terminal. See docs/topics.md for
                the topics and payloads and docs/aggregator.md for the board, its keys and its
                configuration.

                USAGE: myeline-aggregator <options>

                OPTIONS:
                  --config <file>         The YAML configuration file (default:
                                          /etc/myeline/aggregator.yaml, if it exists).
                  --broker <url>          The broker URL (mqtt.broker), such as
                                          mqtts://broker:8883.
                  --prefix <prefix>       The topic prefix (topic-prefix).
                  --layout <layout>       compact, expanded or minimal (board.layout).
                  --log-level <level>     The lowest level logged to stderr (log-level): trace
                                          ... critical.
                  --owntracks             Also show OwnTracks phones and trackers from
                                          owntracks/+/+ (owntracks.subscribe).
                  --show <rows>           all, offline or unhealthy (board.show).
                  --no-bell               Do not ring the terminal's bell on a new alert
                                          (board.bell).
                  --max-activities-per-device <n>
                                          The most rows one device may have; more are rejected
                                          (board.max-activities-per-device, 8).
                  --timeout <seconds>     How long --once waits to reach the broker, seconds
                                          (board.once-timeout, 10).
                  --once                  Wait for the retained state, print the board (or JSON
                                          with --json) and exit: 0 complete, 69            
                                          broker unreachable, 75 bootstrap cut by the broker,
                                          77 refused by the broker.
                  --json                  Print JSON lines (activities, devices, a summary)
                                          instead of a table (with --once or --follow).
                  --follow                Print every change as a line (JSON with --json) until
                                          stopped.
                  --http <address>        Serve the fleet map on HOST:PORT or PORT (web.listen;
                                          loopback unless a host is given; without a terminal,
                                          the map alone: add --follow for lines; docs/web.md).
                  --http-token-file <file>
                                          A file whose token every map request must carry
                                          (web.token-file).
                  --tiles <url>           The map's tile URL template, or none (web.tiles;
                                          OpenStreetMap's).
                  --trail-length <n>      The most points of each activity's trail on the map
                                          (web.trail-length, 100).
                  --version               Show the version.
                  -h, --help              Show help information.

                """)
    }

    @Test(arguments: [
        ([], true, Presentation.board),
        ([], false, .followPlain),
        (["--follow"], true, .followPlain),
        (["--once"], true, .once),
        (["--once"], false, .once),
        (["--once", "--json"], true, .onceJSON),
        (["--json"], false, .onceJSON),
        (["--follow", "--json"], true, .followJSON),
    ])
    func presentations(arguments: [String], interactive: Bool, expected: Presentation) throws {
        #expect(try AggregatorCommand.parse(arguments).presentation(interactive: interactive) == expected)
    }

    /// `--once` ends with a status a cron job can tell apart (docs/aggregator.md#exit-status).
    @Test(arguments: [
        (OnceOutcome.complete, 0 as Int32), (.unknown, 0), (.truncated, 75), (.unreachable("refused"), 69),
        (.refused("not authorised"), 77),
    ])
    func onceExitStatuses(outcome: OnceOutcome, status: Int32) {
        #expect(outcome.exitStatus == status)
    }

    @Test(arguments: [["--follow", "--once"], ["--follow", "--json", "--once"]])
    func contradictoryModesAreUsageErrors(arguments: [String]) {
        let error = #expect(throws: (any Error).self) { try AggregatorCommand.parseAsRoot(arguments) }
        #expect(AggregatorCommand.exitCode(for: error!) == .validationFailure)
    }

    /// Flags beat variables, variables beat the file, the file beats defaults.
    @Test func precedence() async throws {
        try await withTemporaryDirectory { directory in
            let file = "\(directory)/aggregator.yaml"
            try "mqtt:\n  broker: mqtt://file\ntopic-prefix: file\nboard:\n  layout: expanded\nlog-level: debug\n"
                .write(toFile: file, atomically: true, encoding: .utf8)
            let environment = ["MYELINE_TOPIC_PREFIX": "env", "MYELINE_BOARD_LAYOUT": "minimal"]
            let command = try AggregatorCommand.parse(["--config", file, "--layout", "compact"])
            let (configuration, password) = try await command.load(environment: environment)
            #expect(configuration.mqtt.broker == (try BrokerAddress(parsing: "mqtt://file")))
            #expect(configuration.topicPrefix.rawValue == "env")
            #expect(configuration.layout == .compact)
            #expect(configuration.logLevel == .debug)
            #expect(password == nil)
            let defaults = try await AggregatorCommand.parse([]).load(
                environment: [:], defaultFile: "\(directory)/none")
            #expect(defaults.0.layout == .compact && defaults.0.topicPrefix.rawValue == "myeline")
            #expect(defaults.0.mqtt.clientID.hasPrefix("myeline-aggregator-"))
        }
    }

    /// Mistakes name the key (exit status 64), with a hint for typos.
    @Test(arguments: [
        (
            ["--layout", "wide"], [:], "",
            "board.layout (from --layout): invalid value \"wide\": use one of compact, expanded, minimal"
        ),
        (["--broker", "http://x"], [:], "", "mqtt.broker (from --broker)"),
        (
            [], ["MYELINE_BORAD_LAYOUT": "compact"], "",
            "MYELINE_BORAD_LAYOUT: is not a configuration variable: did you mean MYELINE_BOARD_LAYOUT?"
        ),
        (
            [], [:], "board:\n  layuot: compact\n",
            "board.layuot (from FILE (line 2)): is not a configuration key: did you mean board.layout?"
        ),
        ([], [:], "mqtt:\n  password: x\n", "mqtt.password (from FILE (line 2)): the password never goes in this file"),
        ([], ["MYELINE_MQTT_PASSWORD": "x"], "", "mqtt.username: a password is set"),
        (["--prefix", "a//b"], [:], "", "topic-prefix (from --prefix)"),
    ])
    func mistakesNameTheirKey(arguments: [String], environment: [String: String], yaml: String, message: String)
        async throws
    {
        try await withTemporaryDirectory { directory in
            let file = "\(directory)/aggregator.yaml"
            try (yaml.isEmpty ? "{}\n" : yaml).write(toFile: file, atomically: true, encoding: .utf8)
            let command = try AggregatorCommand.parse(arguments + ["--config", file])
            let error = await #expect(throws: ValidationError.self) { try await command.load(environment: environment) }
            #expect(AggregatorCommand.exitCode(for: error!) == .validationFailure)
            let text = error?.message.replacingOccurrences(of: file, with: "FILE") ?? ""
            #expect(text.hasPrefix(message), "\(text)")
        }
    }

    /// The example file names every key.
    @Test func theExampleFileMentionsEveryKey() throws {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../config/aggregator.example.yaml")
        let text = try String(contentsOf: url, encoding: .utf8)
        for key in AggregatorConfiguration.schema.keys {
            #expect(text.contains("\(key.name.split(separator: ".").last!):"), "\(key.name)")
        }
    }
}
