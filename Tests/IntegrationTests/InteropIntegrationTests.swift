import AsyncSupport
import Foundation
import Interop
import LiveActivity
import MyelineWire
import Location
import Logging
import MQTT
import TestSupport
import Testing

@testable import MyelineAgentKit

/// The integrations with real processes (docs/integrations.md): `myeline-agent` with the OwnTracks
/// and Home Assistant options against a private mosquitto, watched by an independent
/// `mosquitto_sub`; and `myeline-aggregator --owntracks` showing a phone.
@Suite(.tags(.integration), .serialized, .timeLimit(.minutes(3)))
struct InteropIntegrationTests {
    /// `mosquitto_sub` on the OwnTracks and Home Assistant topics and the agent's status,
    /// subscribed when this returns.
    static func observer(_ broker: TestBroker) async throws -> TestProcess {
        try await AgentHarness.observer(broker, topics: ["owntracks/#", "homeassistant/#", status])
    }

    static let status = "myeline/van-7/status"

    static let location = "owntracks/fleet/van-7"
    static let discoveryTopics = [
        "homeassistant/device_tracker/van-7/tracker/config", "homeassistant/sensor/van-7/speed/config",
        "homeassistant/sensor/van-7/satellites/config", "homeassistant/device_tracker/van-7/tracker/attributes",
    ]

    /// The OwnTracks messages `observer` printed on `topic`, decoded (each must decode).
    static func ownTracks(_ observer: TestProcess, on topic: String = location) throws -> [OwnTracksMessage] {
        try AgentHarness.messages(observer).filter { $0.topic == topic }.map {
            try OwnTracksCodec.decode(Array($0.payload.utf8)).message
        }
    }

    /// One agent with both options: locations, discovery and an answered `reportLocation`; at a
    /// crash the agent's one will, its Myeline status `offline`, and no OwnTracks `lwt` (the last
    /// location stays retained); then a restart with Home Assistant off removes exactly the
    /// discovery topics (empty retained), and a clean stop publishes the `lwt` itself.
    @Test func agentPublishesOwnTracksAndHomeAssistantAndCleansUp() async throws {
        try await TestBroker.with { broker in
            let observer = try await Self.observer(broker)
            defer { observer.signal(SIGKILL) }
            try await withTemporaryDirectory { state in
                let options = [
                    "MYELINE_OWNTRACKS_ENABLED": "true", "MYELINE_OWNTRACKS_USER": "fleet",
                    "MYELINE_OWNTRACKS_TID": "V7",
                    "MYELINE_HOMEASSISTANT_ENABLED": "true",
                ]
                let agent = try AgentHarness.agent(broker, state: state, environment: options)
                defer { agent.signal(SIGKILL) }
                // mosquitto_sub speaks MQTT 3.1.1: live messages come with the retain flag cleared.
                for topic in Self.discoveryTopics {
                    try await observer.waitForLine(containing: "|\(topic)|")
                }
                try await observer.waitForLine(containing: "|\(Self.location)|")
                // The config the broker keeps is the golden one (Interop's unit tests pin the text).
                let tracker = try #require(
                    AgentHarness.messages(observer).first { $0.topic == Self.discoveryTopics[0] })
                #expect(
                    tracker.payload.contains(
                        #""json_attributes_topic":"homeassistant/device_tracker/van-7/tracker/attributes""#))
                #expect(tracker.payload.contains(#""availability_topic":"myeline/van-7/status""#))
                let attributes = try #require(
                    AgentHarness.messages(observer).last { $0.topic == Self.discoveryTopics[3] })
                let object = try #require(try JSONSerialization.jsonObject(with: attributes.data) as? [String: Any])
                #expect(object["latitude"] is Double && object["longitude"] is Double)
                #expect((object["gps_accuracy"] as? Double ?? 0) > 0, "an accuracy always: \(attributes.payload)")
                #expect(!attributes.payload.contains("null"), "unknown readings are left out: \(attributes.payload)")

                let automatic = try Self.ownTracks(observer)
                #expect(!automatic.isEmpty)
                for message in automatic {
                    guard case .location(let location) = message else {
                        Issue.record("not a location: \(message)")
                        continue
                    }
                    #expect(location.trigger == "t")
                    #expect(location.trackerID == "V7")
                    #expect((location.accuracy ?? 0) > 0, "an acc always: \(location)")
                }
                let seconds = automatic.compactMap { message -> Int? in
                    guard case .location(let location) = message else { return nil }
                    return location.timestamp
                }
                #expect(seconds == seconds.sorted() && Set(seconds).count == seconds.count, "tst repeats: \(seconds)")

                // reportLocation, as OwnTracks Recorder's or Home Assistant's users send it.
                try await AggregatorIntegrationTests.publish(
                    [("\(Self.location)/cmd", OwnTracksCodec.encode(.command(action: "reportLocation")))], to: broker,
                    retain: false)
                try await observer.waitForLine(containing: #""t":"r""#)
                try await agent.waitForLine(containing: "event=owntracks.report-location.answered")

                // A crash: the broker publishes the connection's will, the Myeline status `offline`
                // (Home Assistant's availability reads it). The OwnTracks lwt is no will: it never
                // comes. A marker published on the location's topic after the will arrived comes
                // after anything the broker sent at the connection's loss.
                try await AgentHarness.kill(agent)
                try await observer.waitForLine(description: "the will") { line in
                    guard let message = AgentHarness.Message(Substring(line)), message.topic == Self.status,
                        let status = try? WireCodec.decode(StatusMessage.self, from: message.data)
                    else { return false }
                    return status.state == .offline && status.reason == .connectionLost
                }
                let marker = #"{"_type":"marker"}"#
                try await AggregatorIntegrationTests.publish(
                    [(Self.location, Array(marker.utf8))], to: broker, retain: false)
                try await observer.waitForLine(containing: "|\(marker)")
                #expect(!observer.output.contains(#"{"_type":"lwt""#), "\(observer.output)")
                let will = try #require(try await AgentHarness.retained(broker, filter: Self.status)[Self.status])
                #expect(try WireCodec.decode(StatusMessage.self, from: Data(will)).reason == .connectionLost)
                let retained = try await Self.retained(broker, Self.location)
                guard case .location? = try retained.map({ try OwnTracksCodec.decode($0).message }) else {
                    Issue.record(
                        "the retained OwnTracks message is not the last location: \(String(describing: retained))")
                    return
                }
                #expect(FileManager.default.fileExists(atPath: "\(state)/homeassistant-topics"))

                // Home Assistant off: its four retained topics are cleared, OwnTracks goes on. A new
                // observer sees only this run's live messages with the retain flag 0.
                let second = try await Self.observer(broker)
                defer { second.signal(SIGKILL) }
                let restarted = try AgentHarness.agent(
                    broker, state: state,
                    environment: options.merging(["MYELINE_HOMEASSISTANT_ENABLED": "false"]) { $1 })
                defer { restarted.signal(SIGKILL) }
                for topic in Self.discoveryTopics {
                    try await second.waitForLine(containing: "MSG|0|\(topic)|0|")
                }
                try await second.waitForLine(description: "a live location") { line in
                    line.hasPrefix("MSG|0|\(Self.location)|") && line.contains(#""_type":"location""#)
                }
                #expect(!FileManager.default.fileExists(atPath: "\(state)/homeassistant-topics"))
                for topic in Self.discoveryTopics {
                    #expect(try await Self.retained(broker, topic) == nil, "\(topic) is cleared")
                }

                // A clean stop sends no will: the agent publishes the lwt itself, and exits 0.
                restarted.signal(SIGTERM)
                #expect(try await restarted.waitForExit() == 0, "\(restarted.tail)")
                try await second.waitForLine(description: "the lwt") { line in
                    line.hasPrefix("MSG|0|\(Self.location)|") && line.contains(#"|{"_type":"lwt","tst":"#)
                }

                // The uninstall's step: the retained OwnTracks location goes (the discovery went above).
                let remove = try TestProcess(
                    name: "myeline-agent remove-integrations", executable: try builtProductPath("myeline-agent"),
                    arguments: [
                        "remove-integrations", "--device", "van-7", "--broker", "\(broker.address)", "--state-dir",
                        state,
                    ],
                    environment: ProcessInfo.processInfo.environment.merging(options) { $1 })
                #expect(try await remove.waitForExit() == 0, "\(remove.output)")
                #expect(
                    remove.output.contains("removed \(Self.discoveryTopics.joined(separator: " ")) \(Self.location)"))
                #expect(try await Self.retained(broker, Self.location) == nil)
            }
        }
    }

    /// A real 5 Hz receiver (150 fixes in 30 s) replayed at 5 times its pace, 25 fixes in each
    /// second of the replay's (wall-clock) time: OwnTracks gets one location a second at most, every
    /// `tst` greater than the one before, each a fix of the capture with that fix's `acc` (HDOP 0.9:
    /// 4.5 m, rounded up; 10 m for a first fix the receiver sent before its HDOP, which is the first
    /// second's newest when the link takes it at once) and the default `tid`; the last before the
    /// `lwt` is the capture's last fix, which OwnTracks Recorder and the board then show as the last
    /// position.
    @Test func ownTracksGetsTheNewestFixOfEachSecondAndTheLastFixLast() async throws {
        let capture = URL(fileURLWithPath: AgentHarness.capture).deletingLastPathComponent()
            .appendingPathComponent("quectel-l76k-nmea.log").path
        var lastFix: LocationFix?
        // The `acc` each of the capture's positions may be published with.
        var accuracies: [String: Set<Int>] = [:]
        for try await update in try FileSource(path: capture, options: .init(pacing: .asFastAsPossible)).updates {
            guard let fix = update.fix else { continue }
            lastFix = fix
            let metres = HorizontalAccuracy(receiver: fix.horizontalAccuracy, hdop: fix.quality.hdop).metres
            accuracies["\(fix.latitude),\(fix.longitude)", default: []].insert(Int(metres.rounded(.up)))
        }
        let last = try #require(lastFix)
        try await TestBroker.with { broker in
            let observer = try await Self.observer(broker)
            defer { observer.signal(SIGKILL) }
            try await withTemporaryDirectory { state in
                let agent = try AgentHarness.agent(
                    broker, state: state, ["--speed", "5"], environment: ["MYELINE_OWNTRACKS_ENABLED": "true"],
                    source: capture)
                defer { agent.signal(SIGKILL) }
                // The replay ends the agent (6 s); a clean stop publishes the lwt after the locations.
                let status = try await withDeadline(.seconds(60), what: "the replay to end", process: agent) {
                    try await agent.waitForExit()
                }
                #expect(status == 0, "\(agent.tail)")
                let topic = "owntracks/myeline/van-7"
                try await observer.waitForLine(description: "the lwt") { line in
                    line.hasPrefix("MSG|0|\(topic)|") && line.contains(#"{"_type":"lwt""#)
                }
                let messages = try Self.ownTracks(observer, on: topic)
                guard case .lastWill? = messages.last else {
                    Issue.record("the lwt is not the last message: \(messages)")
                    return
                }
                let locations = messages.dropLast().compactMap { message -> OwnTracksLocation? in
                    guard case .location(let location) = message else { return nil }
                    return location
                }
                #expect(locations.count == messages.count - 1, "only locations before the lwt: \(messages)")
                #expect((2...12).contains(locations.count), "one a second over about 6 s: \(locations.count)")
                let seconds = locations.map(\.timestamp)
                #expect(zip(seconds, seconds.dropFirst()).allSatisfy { $0 < $1 }, "tst values: \(seconds)")
                #expect(
                    locations.allSatisfy { location in
                        location.trackerID == "n7"
                            && accuracies["\(location.latitude),\(location.longitude)"]?.contains(
                                location.accuracy ?? -1)
                                == true
                    }, "\(locations)")
                #expect(locations.last?.accuracy == 5, "the last fix's HDOP 0.9: \(locations)")
                #expect(locations.last?.latitude == last.latitude && locations.last?.longitude == last.longitude)
            }
        }
    }

    /// SIGTERM while the broker cannot be reached: a message of the integrations waiting for it
    /// (here the link's first, the removal of a discovery config an earlier run published under
    /// another prefix) does not hold up the stop, as graceful shutdown runs the link down before the
    /// Myeline wind-down: the agent exits 0, offline, and the record keeps the config to remove.
    @Test func aStopWhileTheBrokerIsUnreachableIsNotHeldUpByTheIntegrations() async throws {
        try await TestBroker.with { broker in
            await broker.stop()
            try await withTemporaryDirectory { state in
                let stale = "oldprefix/device_tracker/van-7/tracker/config"
                let record = DiscoveryRecord(stateDirectory: state, files: BlockingExecutor(name: "test-record"))
                try await record.save([stale])
                let agent = try AgentHarness.agent(
                    broker, state: state, ["--speed", "2"],
                    environment: ["MYELINE_OWNTRACKS_ENABLED": "true", "MYELINE_HOMEASSISTANT_ENABLED": "true"],
                    source: InteropLockdownIntegrationTests.capture)
                defer { agent.signal(SIGKILL) }
                try await agent.waitForLine(containing: "event=mqtt.connect.failed")
                agent.signal(SIGTERM)
                let status = try await withDeadline(.seconds(30), what: "the agent to exit", process: agent) {
                    try await agent.waitForExit()
                }
                #expect(status == 0, "\(agent.tail)")
                #expect(agent.output.contains("event=agent.shutdown.offline"), "\(agent.output)")
                #expect(await record.topics(logger: Logger(label: "test")).contains(stale))
            }
        }
    }

    /// The retained payload on `topic` now, or nil when there is none.
    static func retained(_ broker: TestBroker, _ topic: String) async throws -> [UInt8]? {
        try await AgentHarness.retained(broker, filter: topic)[topic]
    }

    /// `--owntracks`: a phone's retained location is a row beside a Myeline activity, a broken one
    /// is counted as rejected; with `--follow --json` the row appears and goes offline at its lwt.
    @Test func aggregatorShowsOwnTracksPhones() async throws {
        try await TestBroker.with(extraConfiguration: AggregatorIntegrationTests.tunedBroker) { broker in
            let now = Int(Date().timeIntervalSince1970)
            let phone = #"{"_type":"location","lat":52.5,"lon":13.4,"tst":\#(now),"acc":"12","tid":"JP","batt":80}"#
            try await AggregatorIntegrationTests.publish(
                [
                    ("owntracks/jane/phone", Array(phone.utf8)),
                    ("owntracks/bob/phone", Array(#"{"_type":"location","lon":13.4,"tst":\#(now)}"#.utf8)),
                    ("myeline/van-7/activities/a1", AggregatorIntegrationTests.envelope("van-7", name: "Van 7")),
                ], to: broker)
            let once = try AggregatorIntegrationTests.aggregator(broker, ["--once", "--owntracks"])
            let status = try await withDeadline(.seconds(60), what: "--once --owntracks", process: once) {
                try await once.waitForExit()
            }
            #expect(status == 0, "\(once.tail)")
            #expect(once.output.contains("2 activities: 2 active"), "\(once.output)")
            #expect(once.output.contains("· 1 rejected"), "\(once.output)")
            #expect(once.output.contains("jane/phone"), "\(once.output)")

            let board = try AggregatorIntegrationTests.aggregator(broker, ["--follow", "--json", "--owntracks"])
            defer { board.signal(SIGKILL) }
            try await board.waitForLine(
                description: "the phone's row, active, with the valid fields only"
            ) { line in
                line.contains(#""device":"owntracks.jane.phone""#) && line.contains(#""state":"active""#)
            }
            try await AggregatorIntegrationTests.publish(
                [("owntracks/jane/phone", OwnTracksCodec.encode(.lastWill(timestamp: now)))], to: broker, retain: false)
            try await board.waitForLine(description: "the phone offline") { line in
                line.contains(#""device":"owntracks.jane.phone""#) && line.contains("offline")
            }
            board.signal(SIGTERM)
            #expect(try await board.waitForExit() == 0, "\(board.tail)")
        }
    }
}
