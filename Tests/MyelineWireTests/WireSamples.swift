import Foundation
import LiveActivity
import MyelineWire
import Testing
import TestSupport

/// One payload as the real encoder writes it, with a check that decoding loses nothing.
struct WireSample: Sendable {
    let name: String
    let kind: PayloadKind?
    let data: Data
    /// Decodes `data` and encodes the result again: the same bytes if decoding loses nothing.
    let reencoded: @Sendable () throws -> Data

    init<Payload: Codable & WirePayload>(_ name: String, _ value: Payload) throws {
        let data = try WireCodec.encode(value)
        self.name = name
        self.kind = PayloadKind(schema: Payload.schema)
        self.data = data
        self.reencoded = { try WireCodec.encode(WireCodec.decode(Payload.self, from: data)) }
    }

    var json: String { String(decoding: data, as: UTF8.self) }

    /// Every kind of payload, from the sample trip: what the goldens pin and the schemas must accept.
    static func all() async throws -> [WireSample] {
        let device = try Fixtures.device()
        let (center, clock) = Fixtures.center()
        let minimal = try Fixtures.startActivity(in: center, id: "trip-0")
        let activity = try center.request(
            attributes: try Fixtures.attributes(),
            content: ActivityContent(
                state: Fixtures.fullState, staleDate: Fixtures.t0.addingTimeInterval(120), relevanceScore: 50),
            id: Fixtures.activityID)
        let events = activity.events
        clock.advance(by: 60.1234)
        try activity.update(
            ActivityContent(state: Fixtures.fullState, staleDate: nil),
            alertConfiguration: AlertConfiguration(
                title: "Arriving", body: "Van 7 is 5 minutes from Depot North", sound: "chime"))
        try activity.end(nil)
        let envelopes = (await minimal.events.first(1) + events.first(3)).compactMap {
            ActivityEnvelope(event: $0, device: device)
        }
        let command = try Command(id: "req-1", intent: .start, timestamp: Fixtures.t0)
        guard envelopes.count == 4,
            let fullPoint = TrackPoint(
                device: device, activity: Fixtures.activityID, seq: 1, state: Fixtures.fullState)
        else { throw WireSampleError() }
        return [
            try WireSample("envelope-start-minimal", envelopes[0]),
            try WireSample("envelope-start-full", envelopes[1]),
            try WireSample("envelope-update-alert", envelopes[2]),
            try WireSample("envelope-end", envelopes[3]),
            try WireSample("status-online", StatusMessage.online(device: device, since: Fixtures.t0)),
            try WireSample(
                "status-online-dropped", StatusMessage.online(device: device, since: Fixtures.t0, dropped: 1200)),
            try WireSample("status-offline", StatusMessage.offline(device: device, since: Fixtures.t0)),
            try WireSample("status-will", StatusMessage.will(device: device)),
            try WireSample(
                "status-online-instance", StatusMessage.online(device: device, since: Fixtures.t0, instance: "4f1c9a2e")
            ),
            try WireSample("track-full", fullPoint),
            try WireSample(
                "track-minimal",
                TrackPoint(
                    device: device, activity: "trip-1", seq: 2, time: Fixtures.t0, latitude: -33.8688,
                    longitude: 151.2093)),
            try WireSample("command", command),
            try WireSample(
                "command-with-activity",
                try Command(id: "req-2", intent: .pause, activity: Fixtures.activityID, timestamp: Fixtures.t0)),
            try WireSample(
                "command-start-new", try Command(id: "req-3", intent: .start, new: true, timestamp: Fixtures.t0)),
            try WireSample(
                "command-result-ok",
                CommandResult.success(for: command, activity: Fixtures.activityID, timestamp: Fixtures.t0)),
            try WireSample(
                "command-result-error",
                CommandResult.failure(for: command, error: "an activity is already running", timestamp: Fixtures.t0)),
        ]
    }
}

/// The sample trip did not produce the events it should have.
struct WireSampleError: Error, CustomStringConvertible {
    var description: String { "the sample activity did not produce start, start, update and end envelopes" }
}
