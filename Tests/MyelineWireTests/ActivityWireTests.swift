import Foundation
import LiveActivity
import MyelineWire
import Testing
import TestSupport

/// `ActivityWire`: what each event and message of the contract becomes on the wire (docs/topics.md),
/// as a table: topic, retain, content type, message expiry, replaceability.
@Suite("ActivityWire")
struct ActivityWireTests {
    typealias State = LocationActivityAttributes.ContentState

    static let wire = ActivityWire(device: try! Fixtures.device())
    static let topic = "myeline/van-7/activities/trip-1"

    /// The events of one activity: start at t0, an update, an end at t0 + 10 s dismissed at
    /// t0 + 10 s + `dismissalDelay`, and the dismissal.
    static func events(dismissalDelay: TimeInterval) -> [ActivityEvent<LocationActivityAttributes>] {
        let content = ActivityContent(state: State(), staleDate: nil)
        var model = ActivityModel(
            id: "trip-1", attributes: try! Fixtures.attributes(), content: content, now: Fixtures.t0)
        var events = [model.lastEvent]
        func record(_ changes: [ActivityModel<LocationActivityAttributes>.Change]) {
            for case .event(let event) in changes { events.append(event) }
        }
        record(try! model.update(ActivityContent(state: State(distance: 5), staleDate: nil), now: Fixtures.t0 + 1))
        let end = Fixtures.t0 + 10
        record(try! model.end(nil, dismissalPolicy: .after(end + dismissalDelay), now: end))
        record(model.tick(now: end + dismissalDelay))
        return events
    }

    struct Row: Sendable, CustomTestStringConvertible {
        var name: String
        var message: WireMessage
        var topic: String
        var retain: Bool
        var contentType: String?
        var messageExpiry: UInt32?
        var replaceable: Bool
        var empty: Bool
        var testDescription: String { name }
    }

    static let rows: [Row] = {
        let events = Self.events(dismissalDelay: 599.5)
        let message = { (event: ActivityEvent<LocationActivityAttributes>) in try! wire.message(for: event) }
        let without = ActivityWire(device: try! Fixtures.device(), messageExpiry: false)
        let immediate = Self.events(dismissalDelay: 0)
        return [
            Row(
                name: "start: retained JSON envelope, kept", message: message(events[0]), topic: topic, retain: true,
                contentType: "application/json", replaceable: false, empty: false),
            Row(
                name: "update: retained JSON envelope, replaceable while waiting", message: message(events[1]),
                topic: topic, retain: true, contentType: "application/json", replaceable: true, empty: false),
            Row(
                name: "end: expiry at the dismissal date, rounded up, plus the broker's second",
                message: message(events[2]), topic: topic, retain: true, contentType: "application/json",
                messageExpiry: 601, replaceable: false, empty: false),
            Row(
                name: "end dismissed at once: the broker's second only", message: message(immediate[2]), topic: topic,
                retain: true, contentType: "application/json", messageExpiry: 1, replaceable: false, empty: false),
            Row(
                name: "end on MQTT 3.1.1: no expiry", message: try! without.message(for: events[2]), topic: topic,
                retain: true, contentType: "application/json", replaceable: false, empty: false),
            Row(
                name: "dismissal: the empty retained message, no content type", message: message(events[3]),
                topic: topic, retain: true, replaceable: false, empty: true),
            Row(
                name: "status: retained, replaceable",
                message: try! wire.message(for: .online(device: wire.device, since: Fixtures.t0)),
                topic: "myeline/van-7/status", retain: true, contentType: "application/json", replaceable: true,
                empty: false),
            Row(
                name: "will: the retained connection-lost offline",
                message: wire.will(instance: "a1b2c3"), topic: "myeline/van-7/status", retain: true,
                contentType: "application/json", replaceable: true, empty: false),
            Row(
                name: "command result: not retained, never replaced",
                message: try! wire.message(for: .malformed(id: "c1", error: "x", timestamp: Fixtures.t0)),
                topic: "myeline/van-7/cmd/result", retain: false, contentType: "application/json",
                replaceable: false, empty: false),
        ]
    }()

    @Test(arguments: rows)
    func message(_ row: Row) {
        #expect(row.message.topic == row.topic)
        #expect(row.message.retain == row.retain)
        #expect(row.message.contentType == row.contentType)
        #expect(row.message.messageExpiry == row.messageExpiry)
        #expect(row.message.isReplaceable == row.replaceable)
        #expect(row.message.payload.isEmpty == row.empty)
    }

    @Test("an envelope's message carries its id, event and seq, and decodes back to the event's envelope")
    func envelopeRoundTrip() throws {
        let events = Self.events(dismissalDelay: 60)
        for event in events.dropLast() {
            let message = try Self.wire.message(for: event)
            let envelope = try #require(ActivityEnvelope(event: event, device: Self.wire.device))
            #expect(message.kind == .envelope(activityID: "trip-1", event: envelope.header.event, seq: event.seq))
            #expect(
                try WireCodec.decode(ActivityEnvelope<LocationActivityAttributes>.self, from: message.payload)
                    == envelope)
        }
    }

    @Test("the will says offline, connection-lost, without since")
    func will() throws {
        let status = try WireCodec.decode(StatusMessage.self, from: Self.wire.will(instance: "a1b2c3").payload)
        #expect(status == .will(device: Self.wire.device, instance: "a1b2c3"))
        #expect(status.since == nil)
    }
}
