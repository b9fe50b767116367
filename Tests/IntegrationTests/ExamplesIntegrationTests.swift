import DeliveryModel
import Foundation
import LiveActivity
import MyelineWire
import Testing
import TestSupport

/// The examples (Examples/), built with the package, each run against a private broker as a user
/// would run it: what it publishes is the wire of docs/topics.md, valid against the schemas, and
/// each one's activity is on the board: the location app's with its own columns, the step
/// tracker's and the delivery tracker's (attributes types of their own) generically.
@Suite(.tags(.integration), .timeLimit(.minutes(2)))
struct ExamplesIntegrationTests {
    typealias Message = AgentHarness.Message

    /// A recorded drive (Tests/LocationTests/Data/gpx, Apache-2.0) and a recorded hike.
    static let drive = repositoryDirectory.appendingPathComponent(
        "Tests/LocationTests/Data/gpx/around-visnjan-with-car.gpx")
    static let walk = repositoryDirectory.appendingPathComponent("Tests/LocationTests/Data/gpx/cerknicko-jezero.gpx")

    /// Runs an example to its end; its exit status.
    static func run(_ name: String, _ arguments: [String]) async throws -> (Int32, TestProcess) {
        let process = try TestProcess(name: name, executable: try builtProductPath(name), arguments: arguments)
        defer { process.signal(SIGKILL) }
        let status = try await withDeadline(.seconds(90), what: "\(name) to exit", process: process) {
            try await process.waitForExit()
        }
        return (status, process)
    }

    /// The envelopes (not the clears) among `messages`, by their header.
    static func headers(_ messages: [Message]) throws -> [EnvelopeHeader] {
        try messages.filter { $0.isEnvelope && !$0.payload.isEmpty }.map {
            try WireCodec.decode(EnvelopeHeader.self, from: $0.data)
        }
    }

    /// What `myeline-aggregator --once --json` shows of `device`: its activity lines, parsed; and
    /// the summary line's `rejected`.
    static func board(_ broker: TestBroker, device: String) async throws -> (
        activities: [[String: Any]], rejected: Int?
    ) {
        let board = try AggregatorIntegrationTests.aggregator(broker, ["--once", "--json"])
        defer { board.signal(SIGKILL) }
        let status = try await withDeadline(.seconds(60), what: "--once --json", process: board) {
            try await board.waitForExit()
        }
        #expect(status == 0, "\(board.output)")
        let lines = board.output.split(separator: "\n").filter { $0.hasPrefix("{") }.compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        let activities = lines.filter { $0["kind"] as? String == "activity" && $0["device"] as? String == device }
        let summary = lines.last { $0["kind"] as? String == "summary" }
        return (activities, summary?["rejected"] as? Int)
    }

    @Test func theLocationAppIsOnTheBoardFromStartToDismissal() async throws {
        try await AgentHarness.scenario { broker, observer, _ in
            // The board, known to be subscribed once it shows a marker activity published before it.
            try await AggregatorIntegrationTests.publish(
                [("myeline/marker/activities/m1", AggregatorIntegrationTests.envelope("marker", "m1"))], to: broker)
            let board = try AggregatorIntegrationTests.aggregator(broker, ["--follow", "--json"])
            defer { board.signal(SIGKILL) }
            try await board.waitForLine(containing: #""device":"marker""#)

            let (status, app) = try await Self.run(
                "example-location",
                ["--broker", "\(broker.address)", "--device", "phone-1", "--file", Self.drive.path, "--speed", "500"])
            #expect(status == 0, "\(app.output)")
            // The lock screen's lines, among the client's logs.
            let lines = app.output.split(separator: "\n").filter {
                $0.hasPrefix("Latitude") || $0 == "No Location Available"
            }
            #expect(lines.first == "No Location Available", "no location before the first update")
            #expect(lines.last == "No Location Available", "none after the stop")
            #expect(lines.contains { $0.hasPrefix("Latitude: 45.") && $0.contains(" Longitude: 13.") })

            try await board.waitForLine(containing: #""change":"removed","device":"phone-1""#)
            let rows = board.output.split(separator: "\n").filter { $0.contains(#""device":"phone-1""#) }
            // The board writes a burst as one line per row, its latest content: the start or an
            // update first, the removal last (the end and the clear may come in one burst).
            #expect(rows.contains { $0.contains(#""kind":"activity""#) && $0.contains(#""name":"phone-1""#) })
            board.signal(SIGTERM)
            #expect(try await board.waitForExit() == 0, "\(board.tail)")

            try await observer.waitForLine(containing: #""state":"offline""#)
            let messages = AgentHarness.messages(observer).filter { $0.topic.hasPrefix("myeline/phone-1/") }
            let headers = try Self.headers(messages)
            #expect(headers.first?.event == .start)
            #expect(headers.last?.event == .end)
            // In order; an update a newer one replaced while waiting for the broker may be missing
            // (PublishQueue: a replay 500 times faster than recorded outruns QoS 1).
            #expect(headers.first?.seq == 1)
            #expect(zip(headers, headers.dropFirst()).allSatisfy { $0.seq < $1.seq })
            #expect(messages.last { $0.isEnvelope }?.payload == "", "cleared at the immediate dismissal")
            try await AgentHarness.validateAgainstSchemas(messages)
        }
    }

    @Test func theStepTrackerEndsAtItsGoal() async throws {
        try await AgentHarness.scenario { broker, observer, _ in
            let (status, app) = try await Self.run(
                "example-steps",
                [
                    "--broker", "\(broker.address)", "--device", "walker-1", "--file", Self.walk.path, "--goal", "5000",
                    "--speed", "2000",
                ])
            #expect(status == 0, "\(app.output)")
            #expect(app.output.contains("goal of 5000 steps reached"))
            try await observer.waitForLine(containing: #""state":"offline""#)
            let messages = AgentHarness.messages(observer).filter { $0.isEnvelope && !$0.payload.isEmpty }
            let headers = try Self.headers(messages)
            #expect(headers.allSatisfy { $0.attributesType == "com.example.steps" })
            #expect(headers.first?.event == .start)
            #expect(headers.last?.event == .end)
            #expect(headers.count > 10, "about one update a second of the walk")
            let end = try #require(messages.last?.data)
            let object = try #require(try JSONSerialization.jsonObject(with: end) as? [String: Any])
            let content = try #require(object["content-state"] as? [String: Any])
            #expect((content["steps"] as? Int).map { $0 >= 5000 } == true)
            #expect((content["floors"] as? Int).map { $0 > 0 } == true, "the hike climbs")
            try await AgentHarness.validateAgainstSchemas(AgentHarness.messages(observer))

            // On the board, generically, until its dismissal (ActivityKit's default: hours away):
            // ended, its name, type and content's values; nothing rejected (it was, as an unknown type).
            let (rows, rejected) = try await Self.board(broker, device: "walker-1")
            #expect(rejected == 0)
            let row = try #require(rows.first, "the walk's activity on the board")
            #expect(rows.count == 1)
            #expect(row["type"] as? String == "com.example.steps")
            #expect(row["name"] as? String == "Walk")
            #expect(row["state"] as? String == "ended" && row["event"] as? String == "end")
            #expect(row["dismissal-date"] is Double)
            let shown = try #require(row["content"] as? [String: Any])
            #expect((shown["steps"] as? Int).map { $0 >= 5000 } == true, "\(shown)")
            #expect(shown["steps"] as? Int == content["steps"] as? Int, "the end's content, as it came")
            #expect(shown["isPaused"] as? Bool == false)
            #expect(row["latitude"] == nil && row["fix"] == nil, "no location keys for another type")
        }
    }

    @Test func theDeliveryTrackerFollowsItsServersPushesToTheEnd() async throws {
        try await AgentHarness.scenario { broker, observer, _ in
            let arguments = ["--broker", "\(broker.address)", "--device", "van-9"]
            let tracker = try TestProcess(
                name: "example-delivery", executable: try builtProductPath("example-delivery"),
                arguments: arguments + ["--order", "A-1042"])
            defer { tracker.signal(SIGKILL) }
            // Started, before its server pushes anything: on the board, generically, with its first content.
            try await observer.waitForLine(containing: #""attributes-type":"com.example.delivery""#)
            let (started, rejected) = try await Self.board(broker, device: "van-9")
            #expect(rejected == 0)
            let row = try #require(started.first, "the delivery's activity on the board")
            #expect(row["type"] as? String == "com.example.delivery")
            #expect(row["state"] as? String == "active" && row["event"] as? String == "start")
            #expect(row["name"] as? String == row["activity"] as? String, "no name in its attributes: its id")
            let content = try #require(row["content"] as? [String: Any])
            #expect(content["progress"] as? Int == 0 && content["minutesToDelivery"] as? Int == 30)

            let (serverStatus, server) = try await Self.run(
                "example-delivery-server", arguments + ["--interval", "0.05"])
            #expect(serverStatus == 0, "\(server.output)")
            let status = try await withDeadline(.seconds(90), what: "example-delivery to exit", process: tracker) {
                try await tracker.waitForExit()
            }
            #expect(status == 0, "\(tracker.output)")
            #expect(tracker.output.contains("order A-1042: delivered"))

            try await observer.waitForLine(containing: #""state":"offline""#)
            let messages = AgentHarness.messages(observer).filter { $0.isEnvelope }
            let envelopes = try messages.filter { !$0.payload.isEmpty }.map {
                try WireCodec.decode(ActivityEnvelope<DeliveryAttributes>.self, from: $0.data)
            }
            #expect(envelopes.map(\.header.event) == [.start, .update, .update, .update, .update, .update, .end])
            #expect(envelopes.map(\.content.state.progress) == [0, 20, 40, 60, 80, 100, 100])
            #expect(envelopes.last?.content.state.minutesToDelivery == 0)
            #expect(envelopes.allSatisfy { $0.attributes.orderNumber == "A-1042" })
            #expect(messages.last?.payload == "", "dismissed at once: cleared")
            try await AgentHarness.validateAgainstSchemas(AgentHarness.messages(observer))
            // Dismissed at once: gone from the board.
            #expect(try await Self.board(broker, device: "van-9").activities.isEmpty)
        }
    }
}
