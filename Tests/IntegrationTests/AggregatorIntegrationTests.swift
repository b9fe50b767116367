import Foundation
import LiveActivity
import Logging
import MQTT
import TestSupport
import Testing

/// `myeline-aggregator` against a real private mosquitto: the board in tmux, `--once --json` with
/// 10,000 retained activities, the truncated bootstrap, and the hostile corpus.
@Suite(.tags(.integration), .serialized, .timeLimit(.minutes(3)))
struct AggregatorIntegrationTests {
    static let tunedBroker = ["max_queued_messages 1000000", "max_inflight_messages 1000", "sys_interval 1"]

    static func envelope(
        _ device: String, _ activity: String = "a1", seq: Int = 1, event: String = "start", stale: Double? = nil,
        name: String? = nil
    ) -> [UInt8] {
        var object = HostileCorpus.validEnvelope(device: device, activity: activity)
        object["seq"] = seq
        object["event"] = event
        object["attributes"] = ["deviceID": device, "name": name ?? device]
        object["stale-date"] = stale
        if event == "end" { object["dismissal-date"] = Date().timeIntervalSince1970 + 3600 }
        return Array(try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]))
    }

    /// Publishes retained messages, then waits until the broker has them all (a QoS 1 message after them is acknowledged).
    static func publish(_ messages: [(String, [UInt8])], to broker: TestBroker, retain: Bool = true) async throws {
        let configuration = MQTTConfiguration(broker: broker.address, clientID: "publisher-\(UUID())")
        try await MQTTClient.withClient(configuration: configuration, logger: Logger(label: "test")) { client in
            try await client.waitUntilConnected()
            for (topic, payload) in messages {
                try await client.publish(topic, payload: payload, qos: .atMostOnce, retain: retain)
            }
            try await client.publish("test/done", payload: [1], qos: .atLeastOnce)
        }
    }

    /// `myeline-aggregator ARGUMENTS` on `broker`; `environment` adds to a bare `PATH`.
    static func aggregator(
        _ broker: TestBroker, _ arguments: [String], environment: [String: String] = [:]
    ) throws -> TestProcess {
        try TestProcess(
            name: "myeline-aggregator", executable: builtProductPath("myeline-aggregator"),
            arguments: ["--broker", broker.address.description] + arguments,
            environment: ["PATH": "/usr/bin:/bin"].merging(environment) { $1 })
    }

    @Test func onceJSONShowsTenThousandRetainedActivities() async throws {
        try await TestBroker.with(extraConfiguration: Self.tunedBroker) { broker in
            let messages = (0..<10_000).map { ("myeline/dev-\($0)/activities/a1", Self.envelope("dev-\($0)")) }
            try await Self.publish(messages, to: broker)
            // Info: the bootstrap's verdict and its reason are logged, and said if the exit status is not 0.
            let board = try Self.aggregator(broker, ["--once", "--json", "--log-level", "info"])
            let status = try await withDeadline(.seconds(60), what: "--once --json", process: board) {
                try await board.waitForExit()
            }
            let boardLog = board.output.split(separator: "\n").filter { $0.contains("event=board") }
            #expect(status == 0, "\(boardLog.joined(separator: "\n"))")
            let lines = board.output.split(separator: "\n").filter { $0.hasPrefix(#"{"activity""#) }
            #expect(lines.count == 10_000)
            let devices = lines.compactMap { line -> Substring? in
                guard let range = line.range(of: "\"device\":\"dev-[0-9]+\"", options: .regularExpression) else {
                    return nil
                }
                return line[range]
            }
            #expect(Set(devices).count == 10_000)
            #expect(!board.output.contains("max_queued_messages"))
        }
    }

    /// `--follow --json` writes each change as a line when it happens: the row, a newer seq, the
    /// row turning stale with time, its device going offline, and its removal.
    @Test func followJSONStreamsEveryChange() async throws {
        try await TestBroker.with(extraConfiguration: Self.tunedBroker) { broker in
            let board = try Self.aggregator(broker, ["--follow", "--json"])
            defer { board.signal(SIGKILL) }
            let topic = "myeline/van-7/activities/a1"
            try await Self.publish(
                [(topic, Self.envelope("van-7", stale: Date().timeIntervalSince1970 + 2))], to: broker)
            try await board.waitForLine(containing: #""change":"updated","device":"van-7""#)
            try await board.waitForLine(containing: #""kind":"activity""#)
            try await Self.publish(
                [(topic, Self.envelope("van-7", seq: 2, event: "update", stale: Date().timeIntervalSince1970 + 2))],
                to: broker)
            try await board.waitForLine(containing: #""seq":2"#)
            try await board.waitForLine(containing: #""state":"stale""#)
            let offline = #"{"schema":"myeline.status.v1","device":"van-7","state":"offline","version":"1"}"#
            try await Self.publish([("myeline/van-7/status", Array(offline.utf8))], to: broker)
            try await board.waitForLine(containing: #""state":"offline""#)
            try await Self.publish([(topic, [])], to: broker)
            try await board.waitForLine(
                containing: #"{"activity":"a1","change":"removed","device":"van-7","kind":"removed"}"#)
            let lines = board.output.split(separator: "\n").filter { $0.hasPrefix("{") }
            #expect(lines.allSatisfy { (try? JSONSerialization.jsonObject(with: Data($0.utf8))) != nil })
            #expect(lines.filter { $0.contains(#""seq":1,"#) && $0.contains(#""change":"updated""#) }.count == 1)
            // SIGTERM (systemd's stop) ends it cleanly, whatever it was doing.
            board.signal(SIGTERM)
            #expect(try await board.waitForExit() == 0, "\(board.tail)")
            #expect(!board.output.contains("Error:"))
        }
    }

    /// Used to hang: the sync topic's SUBACK, queued behind the cut bootstrap, never came.
    @Test func aTruncatedBootstrapIsDetectedAndNamed() async throws {
        // mosquitto's defaults (max_queued_messages 1000).
        try await TestBroker.with { broker in
            let messages = (0..<3_000).map { ("myeline/dev-\($0)/activities/a1", Self.envelope("dev-\($0)")) }
            try await Self.publish(messages, to: broker)
            let board = try Self.aggregator(broker, ["--once", "--log-level", "warning"])
            let status = try await withDeadline(.seconds(60), what: "--once", process: board) {
                try await board.waitForExit()
            }
            #expect(status == 75)
            #expect(board.output.contains("WARNING: only "))
            #expect(board.output.contains("raise max_queued_messages in mosquitto.conf"))
            #expect(board.output.contains("event=board.bootstrap.truncated"))
            #expect(board.output.contains("board.warning=only 1,"))
        }
    }

    @Test func hostileInputIsCountedAndTheBoardCarriesOn() async throws {
        try await TestBroker.with(extraConfiguration: Self.tunedBroker) { broker in
            let corpus = HostileCorpus.cases()
            try await Self.publish(corpus.map { ($0.topic, $0.payload) }, to: broker)
            try await Self.publish([("myeline/van-7/activities/a1", Self.envelope("van-7", name: "Van 7"))], to: broker)
            let board = try Self.aggregator(broker, ["--once"])
            let status = try await withDeadline(.seconds(60), what: "--once", process: board) {
                try await board.waitForExit()
            }
            #expect(status == 0, "\(board.tail)")
            #expect(board.output.contains("1 activities: 1 active"))
            // --once shows no keys: nobody can press them.
            #expect(!board.output.contains("q quit"))
            // Every hostile message is counted (the 1 MiB ones too); none is shown.
            #expect(board.output.contains("· \(corpus.count) rejected"))
            #expect(
                board.output.split(separator: "\n").contains {
                    $0.hasPrefix("van-7") && $0.contains("Van 7       ACTIVE")
                })
        }
    }

    /// The full-screen board in tmux with real agents: rows appear with the receiver's position, turn
    /// stale, go offline when an agent is killed, end and go at their dismissal date, the filter key
    /// works, and `q` restores the terminal.
    @Test(.timeLimit(.minutes(2))) func theBoardInTmuxWithRealAgents() async throws {
        try await TestBroker.with(extraConfiguration: Self.tunedBroker) { broker in
            try await withTemporaryDirectory { directory in
                let command =
                    "\(try builtProductPath("myeline-aggregator")) --broker \(broker.address.description) "
                    + "2>\(directory)/board.log"
                try await TmuxPane.with(command, in: directory, columns: 120, rows: 40) { pane in
                    // Four trackers replaying a real receiver's capture. truck-2's content is stale one
                    // second after each fix, and it publishes at most every 5 s; taxi-5's ended row goes
                    // 2 s after its end.
                    var agents: [String: TestProcess] = [:]
                    defer { for agent in agents.values { agent.signal(SIGKILL) } }
                    let settings: [(String, [String: String])] = [
                        ("van-7", [:]),
                        ("truck-2", ["MYELINE_UPDATES_STALE_AFTER": "1"]),
                        ("bike-4", [:]),
                        ("taxi-5", ["MYELINE_ACTIVITY_DISMISSAL": "after:2"]),
                    ]
                    for (device, environment) in settings {
                        try FileManager.default.createDirectory(
                            atPath: "\(directory)/\(device)", withIntermediateDirectories: true)
                        agents[device] = try AgentHarness.agent(
                            broker, state: "\(directory)/\(device)", environment: environment, device: device)
                    }
                    /// The board's log and the end of what each agent said, for a failure's message.
                    func diagnostics() -> String {
                        let log = (try? String(contentsOfFile: "\(directory)/board.log", encoding: .utf8)) ?? ""
                        let said = agents.sorted { $0.key < $1.key }.map { device, agent in
                            "\(device) said:\n" + agent.output.split(separator: "\n").suffix(20).joined(separator: "\n")
                        }
                        return "the board's log:\n\(log.suffix(4000))\n" + said.joined(separator: "\n")
                    }
                    func waitForPane(_ what: String, _ predicate: @escaping @Sendable (String) -> Bool) async throws
                        -> String
                    {
                        try await pane.waitFor(what, diagnostics: diagnostics, predicate)
                    }
                    /// The row of `device` in `pane`, if shown.
                    @Sendable func row(_ device: String, in pane: String) -> Substring? {
                        pane.split(separator: "\n").first { $0.hasPrefix(device + " ") }
                    }
                    // Rows appear with the receiver's position (41.57 N, 93.75 W).
                    let first = try await waitForPane("four rows with positions") { pane in
                        pane.contains("4 activities")
                            && ["van-7", "bike-4", "taxi-5"].allSatisfy { row($0, in: pane)?.contains("41.57") == true }
                    }
                    #expect(row("van-7", in: first)?.contains("ACTIVE") == true)
                    #expect(try await pane.alternateScreen())
                    _ = try await waitForPane("truck-2 to turn stale") {
                        row("truck-2", in: $0)?.contains("STALE") == true
                    }

                    // A killed tracker goes offline: the broker publishes its will.
                    try await AgentHarness.kill(try #require(agents["bike-4"]))
                    _ = try await waitForPane("bike-4 offline") { row("bike-4", in: $0)?.contains("OFFLINE") == true }

                    // A stopped activity shows as ended, then goes at its dismissal date.
                    let stop = try await IntentCommandIntegrationTests.agent([
                        "stop", "--device", "taxi-5", "--broker", "\(broker.address)", "--config",
                        try IntentCommandIntegrationTests.emptyConfiguration(in: directory),
                    ])
                    #expect(stop.status == 0, "stop: \(stop.standardError)")
                    _ = try await waitForPane("taxi-5 ended") { row("taxi-5", in: $0)?.contains("ENDED") == true }
                    let dismissed = try await waitForPane("taxi-5 to go") { $0.contains("3 activities") }
                    // The tracker stays on the board as a device without an activity (it was invisible).
                    #expect(row("taxi-5", in: dismissed)?.contains("IDLE") == true)
                    #expect(row("taxi-5", in: dismissed)?.contains("no activity") == true)
                    #expect(row("van-7", in: dismissed)?.contains("ACTIVE") == true, "the others stay")

                    try await pane.send("/", "t", "r", "Enter")
                    let filtered = try await waitForPane("the filter") { $0.contains("filter: tr ·") }
                    #expect(row("truck-2", in: filtered) != nil && row("van-7", in: filtered) == nil)
                    try await pane.send("q")
                    #expect(try await pane.exitStatus() == "0", "the board's exit status")
                    #expect(try await !pane.alternateScreen(), "the alternate screen is left")
                }
            }
        }
    }

    /// A retained message of `device`'s status, with `extra` keys.
    static func status(_ device: String, _ state: String, extra: [String: Any] = [:]) -> (String, [UInt8]) {
        var object: [String: Any] = [
            "schema": "myeline.status.v1", "device": device, "state": state, "version": "0.1.0",
        ]
        if state == "online" { object["since"] = Date().timeIntervalSince1970 - 600 }
        object.merge(extra) { $1 }
        return (
            "myeline/\(device)/status",
            Array(try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]))
        )
    }

    /// A fleet with something in every column: a trip with a destination and a fresh alert, a
    /// tracker whose clock is off, an offline one, and one without an activity.
    static func showcase() -> [(String, [UInt8])] {
        let now = Date().timeIntervalSince1970
        var trip = HostileCorpus.validEnvelope(device: "van-7", activity: "a1")
        trip["seq"] = 3
        trip["event"] = "update"
        trip["timestamp"] = now - 5
        trip["stale-date"] = now + 3600
        trip["attributes"] = [
            "deviceID": "van-7", "name": "Van 7", "vehicle": "B-MY 123", "driver": "Anna",
            "destination": ["name": "Depot", "latitude": 52.5, "longitude": 13.4],
        ]
        trip["content-state"] = [
            "latitude": 52.520008, "longitude": 13.404954, "speed": 12.25, "course": 87.5, "fix": "3d",
            "satellites": 9, "fixTime": now - 5, "distance": 12_345, "elapsed": 1510, "paused": false,
            "progress": 0.45, "eta": now + 720,
        ]
        trip["alert"] = ["title": "Overspeed", "body": "Van 7 at 142 km/h"]
        return [
            ("myeline/van-7/activities/a1", Array(try! JSONSerialization.data(withJSONObject: trip))),
            status("van-7", "online"),
            ("myeline/truck-2/activities/a1", envelope("truck-2", name: "Truck 2")),
            status("truck-2", "online", extra: ["clock-offset": -7015]),
            ("myeline/car-1/activities/a1", envelope("car-1", name: "Car 1")),
            status("car-1", "offline", extra: ["reason": "connection-lost"]),
            status("spare-3", "online", extra: ["storage-error": "writing outbox failed: No space left on device"]),
        ]
    }

    /// Finding 8: with its output in a file or a pipe the board wrote full-screen escape codes; it
    /// now writes plain lines, one per change, devices included.
    @Test func notATerminalGivesPlainLines() async throws {
        try await TestBroker.with(extraConfiguration: Self.tunedBroker) { broker in
            try await Self.publish(Self.showcase(), to: broker)
            let board = try Self.aggregator(broker, [])
            defer { board.signal(SIGKILL) }
            try await board.waitForLine(containing: "van-7/a1 ACTIVE Van 7 · 52.52001, 13.40495 · 44 km/h")
            try await board.waitForLine(containing: "car-1 OFFLINE for ")
            try await board.waitForLine(containing: "spare-3 ONLINE for 10m · last seen ")
            try await board.waitForLine(containing: "health: clock -1h56m")
            // The retained start of car-1's activity first: an update published before the board
            // has it replaces it in the board's mailbox (the latest per topic), one line for both
            // (CI, under load, once).
            try await board.waitForLine(containing: "car-1/a1 OFFLINE Car 1")
            let shown = board.output.components(separatedBy: "car-1/a1 OFFLINE Car 1").count - 1
            try await Self.publish(
                [("myeline/car-1/activities/a1", Self.envelope("car-1", seq: 2, event: "update", name: "Car 1"))],
                to: broker)
            try await board.waitForLine(containing: "car-1/a1 OFFLINE Car 1", occurrence: shown + 1)
            board.signal(SIGTERM)
            #expect(try await board.waitForExit() == 0, "\(board.tail)")
            #expect(!board.output.contains("\u{1B}"), "no escape codes")
        }
    }

    /// Findings 6 and 7 on a real terminal: at 80 columns the board keeps AGE, PROG, ETA and the
    /// alert (they were cut off); at 160 it shows the health and more; the devices without an
    /// activity, the offline one and the recent alerts are on screen; `l` switches the layout live.
    @Test(.timeLimit(.minutes(2)), arguments: [80, 160])
    func theBoardFitsTheTerminalInTmux(columns: Int) async throws {
        try await TestBroker.with(extraConfiguration: Self.tunedBroker) { broker in
            try await Self.publish(Self.showcase(), to: broker)
            try await withTemporaryDirectory { directory in
                let command =
                    "\(try builtProductPath("myeline-aggregator")) --broker \(broker.address.description) --no-bell "
                    + "2>\(directory)/board.log"
                try await TmuxPane.with(command, in: directory, columns: columns, rows: 24) { tmux in
                    let log = { (try? String(contentsOfFile: "\(directory)/board.log", encoding: .utf8)) ?? "" }
                    let pane = try await tmux.waitFor("the fleet", diagnostics: log) {
                        $0.contains("spare-3") && $0.contains("van-7")
                    }
                    print("The board in tmux at \(columns) columns:\n\(pane)")
                    let lines = pane.split(separator: "\n")
                    let titles = try #require(lines.first { $0.hasPrefix("DEVICE") })
                    for title in ["STATE", "AGE", "SINCE", "LOCATION", "KM/H", "PROG", "ETA", "ALERT"] {
                        #expect(titles.contains(title), "\(title) at \(columns) columns")
                    }
                    #expect(titles.contains("HEALTH") == (columns >= 160))
                    let van = try #require(lines.first { $0.hasPrefix("van-7 ") })
                    #expect(van.contains("45%") && van.contains("Oversp"), "\(van)")
                    #expect(lines.contains { $0.hasPrefix("car-1 ") && $0.contains("OFFLINE") })
                    #expect(
                        lines.contains { $0.hasPrefix("spare-3 ") && $0.contains("IDLE") && $0.contains("no activity") }
                    )
                    #expect(pane.contains("alerts: ") && pane.contains("van-7: Overspeed"))
                    if columns >= 160 {
                        #expect(lines.contains { $0.hasPrefix("truck-2 ") && $0.contains("clock -1h56m") })
                    }
                    try await tmux.send("l")
                    let expanded = try await tmux.waitFor("the expanded layout", diagnostics: log) {
                        $0.contains("  device: ")
                    }
                    #expect(expanded.contains("van-7 · Van 7 (B-MY 123, Anna)"))
                    try await tmux.send("q")
                    #expect(try await tmux.exitStatus() == "0", "the board's exit status")
                }
            }
        }
    }

    /// Finding 5: after one retained envelope with an absurd seq, a running board ignored the
    /// device's genuine updates for good, and its header read "9,007,199,254,740,939 missed". Now the
    /// row takes them once they have kept coming for 10 s, says so (`resynced-at`), and the missed
    /// count stays honest.
    @Test func aHugeSeqDoesNotFreezeARow() async throws {
        try await TestBroker.with(extraConfiguration: Self.tunedBroker) { broker in
            let topic = "myeline/van-7/activities/a1"
            @Sendable func envelope(seq: Int, age: Double) -> [UInt8] {
                var object = HostileCorpus.validEnvelope(device: "van-7", activity: "a1")
                object["seq"] = seq
                object["event"] = seq == 1 ? "start" : "update"
                object["timestamp"] = Date().timeIntervalSince1970 - age
                object["attributes"] = ["deviceID": "van-7", "name": "Van 7"]
                return Array(try! JSONSerialization.data(withJSONObject: object))
            }
            try await Self.publish([(topic, envelope(seq: 9_007_199_254_740_991, age: 60))], to: broker)
            let board = try Self.aggregator(broker, ["--follow", "--json"])
            defer { board.signal(SIGKILL) }
            try await board.waitForLine(containing: #""seq":9007199254740991"#)
            // The device's genuine updates, a second apart, for longer than the window, from one client.
            let configuration = MQTTConfiguration(broker: broker.address, clientID: "genuine-\(UUID())")
            try await MQTTClient.withClient(configuration: configuration, logger: Logger(label: "test")) { client in
                try await client.waitUntilConnected()
                try await withDeadline(.seconds(90), what: "the row to resynchronise", process: board) {
                    var seq = 60
                    while !board.output.contains(#""resynced-at":"#) {
                        try await client.publish(topic, payload: envelope(seq: seq, age: 0), qos: .atLeastOnce)
                        seq += 1
                        try await Task.sleep(for: .seconds(1))
                    }
                }
            }
            let line = try await board.waitForLine(containing: #""resynced-at":"#)
            #expect(line.contains(#""seq":"#) && !line.contains("9007199254740991"), "\(line)")
            #expect(!board.output.contains(#""missed":9"#), "no absurd missed count")
        }
    }

    /// Finding 9: the JSON lines of a real board (`--once --json` of a fleet with something in every
    /// column, and an activity of another attributes type: docs/topics.md's pin) pass
    /// docs/schema/board-line.json, with the scripts' `kind` on every line.
    @Test func realJSONLinesPassTheSchema() async throws {
        try await TestBroker.with(extraConfiguration: Self.tunedBroker) { broker in
            var pin = HostileCorpus.validEnvelope(device: "van-7", activity: "pin-1")
            pin["attributes-type"] = "com.example.pin"
            pin["attributes"] = ["label": "Loading bay 3"]
            pin["content-state"] = ["count": 2, "note": "two pallets waiting"]
            pin["timestamp"] = Date().timeIntervalSince1970
            let pinMessage = ("myeline/van-7/activities/pin-1", Array(try JSONSerialization.data(withJSONObject: pin)))
            try await Self.publish(Self.showcase() + [pinMessage], to: broker)
            let board = try Self.aggregator(broker, ["--once", "--json"])
            let status = try await withDeadline(.seconds(60), what: "--once --json", process: board) {
                try await board.waitForExit()
            }
            #expect(status == 0, "\(board.tail)")
            let lines = board.output.split(separator: "\n").filter { $0.hasPrefix("{") }
            #expect(lines.count == 4 + 4 + 1, "four activities, four devices, a summary")
            #expect(
                lines.contains {
                    $0.contains(#""content":{"count":2,"note":"two pallets waiting"}"#)
                        && $0.contains(#""type":"com.example.pin""#)
                })
            let cases = lines.enumerated().map {
                JSONSchemaCase(
                    name: "line \($0.offset + 1)", schema: "board-line.json", data: Data($0.element.utf8), valid: true)
            }
            let results = try await validateJSON(cases)
            for result in results where !result.hasPrefix("PASS\t") { Issue.record("\(result)") }
            #expect(results.count == cases.count)
        }
    }

    /// A real agent started with a destination and a status text, then pushed a new destination
    /// and status (`myeline-agent update`, docs/intents.md): `--once --json`, the expanded board
    /// and the web map's details show the pushed ones, not the ones it started with (the board
    /// showed the attributes' destination and no status text).
    @Test func theBoardShowsWhatACommandPushed() async throws {
        try await AgentIntentCommandIntegrationTests.withAgent { broker, agent, observer, command in
            let started = try await command(["start", "--destination", "Depot:52.52,13.40", "--status", "Loading"])
            #expect(started.status == 0, "\(started.standardError)")
            let updated = try await command([
                "update", "--destination", "Market Hall:52.53,13.41", "--status", "Out for delivery",
            ])
            #expect(updated.status == 0, "\(updated.standardError)")
            try await observer.waitForLine(description: "the pushed update") {
                $0.contains("/activities/") && $0.contains("\"status\":\"Out for delivery\"")
            }

            let json = try Self.aggregator(broker, ["--once", "--json"])
            let jsonStatus = try await withDeadline(.seconds(60), what: "--once --json", process: json) {
                try await json.waitForExit()
            }
            #expect(jsonStatus == 0)
            let line = try #require(json.output.split(separator: "\n").first { $0.hasPrefix(#"{"activity""#) })
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            let destination = object["destination"] as? [String: Any]
            #expect(destination?["name"] as? String == "Market Hall", "\(line)")
            #expect(destination?["latitude"] as? Double == 52.53 && destination?["longitude"] as? Double == 13.41)
            #expect(object["status-text"] as? String == "Out for delivery", "\(line)")
            #expect(object["status"] as? String == "online", "the device's link state stays `status`")
            let results = try await validateJSON([
                JSONSchemaCase(name: "the pushed line", schema: "board-line.json", data: Data(line.utf8), valid: true)
            ])
            #expect(results.count == 1 && results.allSatisfy { $0.hasPrefix("PASS\t") }, "\(results)")

            let board = try Self.aggregator(broker, ["--once", "--layout", "expanded"])
            let boardStatus = try await withDeadline(.seconds(60), what: "--once", process: board) {
                try await board.waitForExit()
            }
            #expect(boardStatus == 0)
            #expect(board.output.contains(" · status: Out for delivery "), "\(board.output)")
            #expect(board.output.contains("   → Market Hall "), "\(board.output)")
            #expect(!board.output.contains("Depot") && !board.output.contains("Loading"), "\(board.output)")

            let (map, url) = try await WebMapIntegrationTests.aggregator(broker)
            defer { map.signal(SIGKILL) }
            try await HeadlessBrowser.with { browser in
                let page = try await browser.open(url)
                let row = WebMapIntegrationTests.row("van-7")
                try await page.waitUntil("\(row)?.dataset.state === 'active'")
                _ = try await page.evaluate("\(row).click()")
                try await page.waitUntil("!document.getElementById('details').hidden")
                // The details list as `term=value|…`, in its order.
                let details = try await page.evaluate(
                    "[...document.querySelectorAll('#details dt')]"
                        + ".map((dt) => dt.textContent + '=' + dt.nextElementSibling.textContent).join('|')")
                #expect(details.contains("Destination=Market Hall|Status=Out for delivery|"), "\(details)")
            }
            map.signal(SIGTERM)
            let mapStatus = try await withDeadline(.seconds(20), what: "the map to stop", process: map) {
                try await map.waitForExit()
            }
            #expect(mapStatus == 0)
            agent.signal(SIGTERM)
            #expect(try await agent.waitForExit() == 0, "\(agent.tail)")
        }
    }
}
