import AgentCore
@_spi(Benchmarks) import AgentStore
import Foundation
import LiveActivity
import MyelineWire
import Testing
import Tracking

/// Push-to-start and push updates over the command topic: a `start` with attributes, status and
/// relevance; an `update` of destination, status, relevance and alert; what is refused and why.
@Suite("AgentCore: push-to-start and push updates")
struct AgentCorePushTests {
    typealias Script = CoreScript

    static let depot = LocationActivityAttributes.Destination(name: "Depot", latitude: 52.52, longitude: 13.40)
    static let market = LocationActivityAttributes.Destination(name: "Market", latitude: 52.53, longitude: 13.41)

    static func command(
        _ intent: Command.Intent, activity: String? = nil, new: Bool = false,
        attributes: Command.Attributes? = nil, destination: LocationActivityAttributes.Destination? = nil,
        status: String? = nil, relevanceScore: Double? = nil, alert: AlertConfiguration? = nil, id: String = "c1"
    ) -> AgentCore.Event {
        .command(
            try! Command(
                id: id, intent: intent, activity: activity, new: new, attributes: attributes,
                destination: destination, status: status, relevanceScore: relevanceScore, alert: alert,
                timestamp: Script.epoch))
    }

    @Test("a start carries attributes over the configured ones, and the first content's status and relevance")
    func pushToStart() throws {
        var script = Script(Script.settings(autostart: false))
        script.start()
        let actions = script.at(
            1,
            Self.command(
                .start,
                attributes: Command.Attributes(vehicle: "B-MY 1234", driver: "Ana", destination: Self.depot),
                status: "Loading", relevanceScore: 50))
        #expect(actions.replies.map(\.ok) == [true])
        let start = try #require(actions.envelopeValues.first)
        #expect(start.header.event == .start)
        #expect(
            start.attributes
                == LocationActivityAttributes(
                    deviceID: Script.device, name: "Van 7", vehicle: "B-MY 1234", driver: "Ana",
                    destination: Self.depot))
        #expect(start.content.state.status == "Loading")
        #expect(start.content.relevanceScore == 50)
        #expect(start.content.state.destination == nil, "the attributes' destination is not repeated")
    }

    @Test("an update changes the destination, status and relevance, with its alert; a restart keeps them")
    func pushUpdate() throws {
        var script = Script()
        script.start()
        script.at(1, Script.location(1))
        let actions = script.at(
            2,
            Self.command(
                .update, destination: Self.market, status: "Out for delivery", relevanceScore: 80,
                alert: AlertConfiguration(title: "New stop", body: "Market first")))
        #expect(actions.replies.map(\.ok) == [true])
        #expect(actions.replies.first?.intent == nil, "results name only the first five intents")
        #expect(actions.replies.first?.activity == "a1")
        let update = try #require(actions.envelopeValues.last)
        #expect(update.header.event == .update)
        #expect(update.content.state.destination == Self.market)
        #expect(update.content.state.status == "Out for delivery")
        #expect(update.content.state.progress == 0, "progress counts from the fix where the destination changed")
        #expect(update.content.relevanceScore == 80)
        #expect(update.alert == AlertConfiguration(title: "New stop", body: "Market first"))

        // Saved with the trip's totals: a restart resumes with them.
        let record = try #require(script.actions.savedRecords.last)
        var resumed = Script()
        let first = resumed.start(saved: [record])
        let content = try #require(first.envelopeValues.first).content
        #expect(content.state.destination == Self.market)
        #expect(content.state.status == "Out for delivery")
        #expect(content.relevanceScore == 80)
    }

    @Test("the record saved at a fix holds the tracker's totals, and both are the bytes JSONEncoder wrote")
    func savedRecordIsWhatJSONEncoderWrote() throws {
        var script = Script()
        script.start()
        script.at(1, Script.location(1))
        script.at(2, Self.command(.update, destination: Self.market, status: "Out / \"back\" at 5", relevanceScore: 80))
        script.at(3, Script.location(3, north: 120))
        let record = try #require(script.actions.savedRecords.last)
        let sorted = JSONEncoder()
        sorted.outputFormatting = [.sortedKeys]
        // The totals, as the previous agent wrote them (with sorted keys) and as a restart reads them.
        let totals = try JSONDecoder().decode(TripAccumulator.Snapshot.self, from: record.tripTotals)
        #expect(record.tripTotals == (try sorted.encode(totals)))
        #expect(totals.status == "Out / \"back\" at 5")
        #expect(totals.destination == Self.market)
        #expect(totals.relevanceScore == 80)
        #expect(totals.distance > 100 && totals.lastCounted != nil)
        // The record's file, as the spool writes it: JSONEncoder's bytes, which read back equal.
        var encoder = ActivityRecordEncoder<LocationActivityAttributes>()
        let body = Data(try encoder.encode(record).dropFirst(16))
        #expect(body == (try sorted.encode(record)))
        #expect(try JSONDecoder().decode(AgentCore.Record.self, from: body) == record)
    }

    @Test("a status over ActivityKit's 4 KiB is refused and changes nothing")
    func contentTooLarge() {
        var script = Script()
        script.start()
        let actions = script.at(2, Self.command(.update, status: String(repeating: "x", count: 5000)))
        #expect(actions.replies.map(\.ok) == [false])
        #expect(
            actions.replies.first?.error?.hasPrefix("the content state is ") == true,
            "\(actions.replies.first?.error ?? "-")")
        #expect(
            actions.replies.first?.error?.hasSuffix(
                "over the 4096 bytes (4 KiB) ActivityKit also allows: shorten its texts") == true)
        #expect(actions.envelopes == [])
        #expect(script.at(3, Script.command(.report)).envelopeValues.first?.content.state.status == nil)
    }

    @Test("an update of an ended activity is refused, naming it")
    func updateOfEnded() {
        var script = Script(Script.settings(dismissal: .after(seconds: 60)))
        script.start()
        script.at(1, Script.command(.stop, id: "c0"))
        let actions = script.at(2, Self.command(.update, activity: "a1", status: "late"))
        #expect(actions.replies.first?.error == "activity \"a1\" has ended: an update cannot change it")
        #expect(actions.envelopes == [])
    }

    /// What the plan says of a command's changes, checked as the configuration checks its keys.
    @Test(
        arguments: [
            (command(.update, status: "x"), IntentPlan.update("b")),
            (command(.update, activity: "a", destination: depot), .update("a")),
            (command(.update), .refuse("an update needs a change: give destination, status, relevance-score or alert")),
            (command(.update, activity: "x", status: "x"), .refuse("no running activity \"x\" on this device")),
            (
                command(.update, activity: "e", status: "x"),
                .refuse("activity \"e\" has ended: an update cannot change it")
            ),
            (command(.update, new: true, status: "x"), .refuse("\"new\" applies to start only, not to update")),
            (command(.start, new: true, attributes: Command.Attributes(name: "Van 8")), .start(id: nil)),
            (
                command(.start, status: "Loading"),
                .refuse("activity \"b\" is running: a start does not change it; send update, or start with new")
            ),
            (command(.start, destination: depot), .refuse("\"destination\" applies to update only, not to start")),
            (
                command(.pause, attributes: Command.Attributes()),
                .refuse("\"attributes\" applies to start only, not to pause")
            ),
            (command(.stop, status: "x"), .refuse("\"status\" applies to start and update only, not to stop")),
            (command(.update, status: " "), .refuse("\"status\" is empty: give a value or leave the key out")),
            (
                command(.start, attributes: Command.Attributes(driver: "")),
                .refuse("\"attributes.driver\" is empty: give a value or leave the key out")
            ),
            (
                command(.update, alert: AlertConfiguration(title: "t", body: "")),
                .refuse("\"alert.body\" is empty: give a value or leave the key out")
            ),
            (
                command(.update, relevanceScore: 2e6),
                .refuse("\"relevance-score\" 2000000.0 is outside -1000000...1000000")
            ),
        ] as [(AgentCore.Event, IntentPlan)])
    func plan(_ event: AgentCore.Event, _ expected: IntentPlan) throws {
        guard case .command(let command) = event else { throw CancellationError() }
        #expect(IntentPlan(command, running: ["a", "b"], ended: ["e"]) == expected)
    }
}
