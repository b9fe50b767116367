import Board
import Foundation
import LiveActivity
import MyelineWire

/// Payloads as agents publish them, built as JSON so tests control every key.
enum Wire {
    static let topics = TopicTree()
    static let decoder = BoardDecoder(topics: topics)
    /// The board's "now" in most tests: 100 s after the devices' first timestamps.
    static let now = Date(timeIntervalSince1970: 1_700_000_100)

    static func envelope(
        device: String = "van-7", activity: String = "a1", seq: Int = 1, event: String = "start",
        timestamp: Double = 1_700_000_000, stale: Double? = nil, dismissal: Double? = nil, relevance: Double = 0,
        name: String? = nil, vehicle: String? = nil, driver: String? = nil, destination: [String: Any]? = nil,
        content: [String: Any] = [:], alert: [String: Any]? = nil
    ) -> [UInt8] {
        var attributes: [String: Any] = ["deviceID": device, "name": name ?? device]
        attributes["vehicle"] = vehicle
        attributes["driver"] = driver
        attributes["destination"] = destination
        var state: [String: Any] = ["fix": "none", "distance": 0, "elapsed": 0, "paused": false]
        state.merge(content) { $1 }
        var object: [String: Any] = [
            "schema": "myeline.activity.v1", "device": device, "activity": activity, "attributes-type": "location",
            "attributes": attributes, "event": event, "seq": seq, "timestamp": timestamp, "content-state": state,
            "relevance-score": relevance,
        ]
        object["stale-date"] = stale
        object["dismissal-date"] = dismissal ?? (event == "end" ? timestamp + 60 : nil)
        object["alert"] = alert
        return json(object)
    }

    /// An envelope of another attributes type than `location`, `com.example.pin` by default: the
    /// example of docs/topics.md (attributes types), its keys overridden by `extra`.
    static func otherEnvelope(
        device: String = "van-7", activity: String = "pin-1", type: String = "com.example.pin", seq: Int = 2,
        event: String = "update", timestamp: Double = 1_700_000_030, stale: Double? = nil, dismissal: Double? = nil,
        attributes: [String: Any] = ["label": "Loading bay 3"],
        content: Any = ["count": 2, "note": "two pallets waiting"] as [String: Any], extra: [String: Any] = [:]
    ) -> [UInt8] {
        var object: [String: Any] = [
            "schema": "myeline.activity.v1", "device": device, "activity": activity, "attributes-type": type,
            "attributes": attributes, "event": event, "seq": seq, "timestamp": timestamp, "content-state": content,
            "relevance-score": 0,
        ]
        object["stale-date"] = stale
        object["dismissal-date"] = dismissal ?? (event == "end" ? timestamp + 60 : nil)
        object.merge(extra) { $1 }
        return json(object)
    }

    static func status(
        device: String = "van-7", state: String, since: Double? = 1_700_000_000, extra: [String: Any] = [:]
    ) -> [UInt8] {
        var object: [String: Any] = [
            "schema": "myeline.status.v1", "device": device, "state": state, "version": "0.1.0",
        ]
        object.merge(extra) { $1 }
        object["since"] = since
        if state == "offline" { object["reason"] = since == nil ? "connection-lost" : "shutdown" }
        return json(object)
    }

    static func json(_ object: [String: Any]) -> [UInt8] {
        Array(try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]))
    }

    static func activityTopic(_ device: String = "van-7", _ activity: String = "a1") -> String {
        "myeline/\(device)/activities/\(activity)"
    }

    static func statusTopic(_ device: String = "van-7") -> String {
        "myeline/\(device)/status"
    }

    /// Decodes and applies an envelope message.
    static func apply(_ fleet: inout Fleet, _ payload: [UInt8], topic: String? = nil, now: Date = now) -> Fleet.Change {
        let device = (try? JSONSerialization.jsonObject(with: Data(payload)) as? [String: Any])?["device"] as? String
        let activity =
            (try? JSONSerialization.jsonObject(with: Data(payload)) as? [String: Any])?["activity"] as? String
        let route = topic ?? activityTopic(device ?? "van-7", activity ?? "a1")
        return fleet.apply(decoder.decode(topic: route, payload: payload), now: now)
    }

    /// ``sampleFleet()`` with two activities of other attributes types: a pin, and a walk's steps whose
    /// attributes have a name.
    static func mixedFleet() -> Fleet {
        var fleet = sampleFleet()
        _ = apply(&fleet, otherEnvelope(device: "van-7"))
        _ = apply(
            &fleet,
            otherEnvelope(
                device: "walker-1", activity: "walk", type: "com.example.steps", seq: 40, timestamp: 1_700_000_095,
                stale: 1_700_000_200, attributes: ["name": "Walk", "goal": 5000],
                content: [
                    "steps": 3120, "distance": 2340.5, "floors": 3, "elapsedSeconds": 1820, "isPaused": false,
                    "splits": [1, 2],
                ]))
        return fleet
    }

    /// A fleet with one activity in each state and every column filled somewhere, at ``now``.
    static func sampleFleet() -> Fleet {
        var fleet = Fleet()
        let destination: [String: Any] = ["name": "Depot", "latitude": 52.5, "longitude": 13.4]
        let moving: [String: Any] = [
            "latitude": 52.520008, "longitude": 13.404954, "speed": 12.25, "course": 87.5, "fix": "3d",
            "satellites": 9, "horizontalAccuracy": 4.8, "fixTime": 1_700_000_097.5, "distance": 12_345,
            "elapsed": 1510, "progress": 0.45, "eta": 1_700_000_820,
        ]
        _ = apply(
            &fleet,
            envelope(
                device: "van-7", activity: "trip-1", seq: 3, event: "update", timestamp: 1_700_000_098,
                stale: 1_700_000_300, relevance: 50, name: "Van 7", vehicle: "B-MY 123", driver: "Anna",
                destination: destination, content: moving,
                alert: ["title": "Entered depot", "body": "Van 7 entered depot at 10:00."]))
        _ = apply(
            &fleet,
            envelope(
                device: "truck-2", activity: "haul", seq: 8, event: "update", timestamp: 1_700_000_000,
                stale: 1_700_000_060, relevance: 10, name: "Truck 2",
                content: [
                    "latitude": -33.86882, "longitude": 151.20929, "speed": 0, "fix": "2d", "fixTime": 1_700_000_000,
                    "distance": 850, "elapsed": 62,
                ]))
        _ = apply(
            &fleet,
            envelope(
                device: "bike-4", activity: "ride", seq: 2, event: "update", timestamp: 1_700_000_090,
                stale: 1_700_000_400, relevance: 10, name: "Bike 4",
                content: ["paused": true, "distance": 4100, "elapsed": 900]))
        _ = apply(
            &fleet,
            envelope(
                device: "van-9", activity: "done", seq: 5, event: "end", timestamp: 1_700_000_050,
                dismissal: 1_700_000_500,
                relevance: 0, name: "Van 9",
                content: [
                    "latitude": 48.85661, "longitude": 2.35222, "fix": "3d", "distance": 152_000, "elapsed": 7260,
                ]))
        _ = apply(
            &fleet,
            envelope(
                device: "car-1", activity: "commute", seq: 1, timestamp: 1_700_000_020, stale: 1_700_000_900,
                relevance: 20, name: "Car 1", content: ["latitude": 40.7128, "longitude": -74.006, "fix": "3d"]))
        fleet.apply(
            decoder.decode(topic: statusTopic("car-1"), payload: status(device: "car-1", state: "offline")), now: now)
        fleet.apply(decoder.decode(topic: "myeline/car-1/activities/x", payload: Array("not json".utf8)), now: now)
        // A device without an activity, whose agent cannot save; and a tracker whose clock is behind.
        fleet.apply(
            decoder.decode(
                topic: statusTopic("spare-3"),
                payload: status(
                    device: "spare-3", state: "online", since: 1_699_990_000,
                    extra: ["storage-error": "writing /var/lib/myeline/outbox failed: No space left on device"])),
            now: now)
        fleet.apply(
            decoder.decode(
                topic: statusTopic("truck-2"),
                payload: status(
                    device: "truck-2", state: "online", since: 1_699_999_000, extra: ["clock-offset": -7015])),
            now: now)
        return fleet
    }
}
