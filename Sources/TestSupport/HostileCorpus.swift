import Foundation

/// Messages other clients might publish under a fleet's prefix that break the contract
/// (docs/topics.md): not JSON, wrong types, unknown schema versions, megabyte payloads, NaN and
/// out-of-range values, ids that do not match the topic. A receiver must count and drop every one.
public enum HostileCorpus {
    /// One hostile message.
    public struct Case: Sendable, CustomStringConvertible {
        /// What is wrong with it.
        public var name: String
        /// The topic, under the prefix given to ``cases(prefix:)``.
        public var topic: String
        /// The payload; never empty (an empty payload is a valid clearing).
        public var payload: [UInt8]
        /// A short name for test output.
        public var description: String { name }
    }

    /// A valid location envelope as a JSON object, for mutating.
    public static func validEnvelope(device: String, activity: String) -> [String: Any] {
        [
            "schema": "myeline.activity.v1", "device": device, "activity": activity, "attributes-type": "location",
            "attributes": ["deviceID": device, "name": "Hostile"], "event": "update", "seq": 2,
            "timestamp": 1_700_000_000,
            "content-state": [
                "fix": "3d", "latitude": 52.5, "longitude": 13.4, "distance": 0, "elapsed": 0, "paused": false,
            ],
            "relevance-score": 0,
        ]
    }

    /// Every case (more than 100), on topics of the devices `hostile-0` ... under `prefix`.
    public static func cases(prefix: String = "myeline") -> [Case] {
        var cases: [Case] = []
        var index = 0
        func add(_ name: String, payload: [UInt8], status: Bool = false, topic: String? = nil) {
            let device = "hostile-\(index)"
            index += 1
            let route = topic ?? (status ? "\(prefix)/\(device)/status" : "\(prefix)/\(device)/activities/a1")
            cases.append(Case(name: name, topic: route, payload: payload))
        }
        // JSON numbers that overflow a Double: written as this string, then unquoted.
        let huge = "__HUGE__"
        func json(_ object: Any) -> [UInt8] {
            let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data("{".utf8)
            return Array(
                String(decoding: data, as: UTF8.self).replacingOccurrences(of: "\"\(huge)\"", with: "1e999").utf8)
        }

        // Not JSON, or not an object.
        let raw: [(String, String)] = [
            ("garbage", "garbage"), ("open brace", "{"), ("array", "[]"), ("null", "null"), ("number", "1"),
            ("string", "\"envelope\""), ("true", "true"), ("trailing comma", "{\"seq\":1,}"),
            ("single quotes", "{'seq':1}"), ("NaN literal", "{\"seq\":NaN}"),
            ("Infinity literal", "{\"seq\":Infinity}"),
            ("comment", "// hi\n{}"), ("two objects", "{}{}"), ("xml", "<envelope/>"), ("yaml", "seq: 1"),
            ("unterminated string", "{\"device\":\"van"), ("empty object", "{}"),
        ]
        for (name, text) in raw { add("activity: \(name)", payload: Array(text.utf8)) }
        for (name, text) in raw.prefix(6) { add("status: \(name)", payload: Array(text.utf8), status: true) }
        add("binary bytes", payload: (0...255).map { UInt8($0) })
        add("invalid UTF-8", payload: [0x7B, 0x22, 0xFF, 0xFE, 0x22, 0x3A, 0x31, 0x7D])
        add("NUL bytes", payload: [UInt8](repeating: 0, count: 64))
        add("deep nesting", payload: Array(String(repeating: "[", count: 60_000).utf8))
        add("a megabyte of spaces", payload: [UInt8](repeating: 0x20, count: 1 << 20))
        add(
            "a megabyte of JSON",
            payload: json(["schema": "myeline.activity.v1", "pad": String(repeating: "x", count: 1 << 20)]))

        // Envelopes with one key wrong.
        let mutations: [(String, String, Any?)] = [
            ("no schema", "schema", nil), ("schema v2", "schema", "myeline.activity.v2"),
            ("status schema", "schema", "myeline.status.v1"), ("schema as number", "schema", 1),
            ("no device", "device", nil), ("device as number", "device", 7), ("device upper case", "device", "VAN"),
            ("no activity", "activity", nil), ("activity with slash", "activity", "a/b"),
            ("attributes type not an id", "attributes-type", "Weather"), ("no attributes", "attributes", nil),
            ("attributes as string", "attributes", "x"), ("event begin", "event", "begin"),
            ("event as number", "event", 1),
            ("no seq", "seq", nil), ("seq 0", "seq", 0), ("seq -1", "seq", -1), ("seq 1.5", "seq", 1.5),
            ("seq as string", "seq", "2"), ("seq huge", "seq", 1e300), ("no timestamp", "timestamp", nil),
            ("timestamp as string", "timestamp", "yesterday"), ("no content", "content-state", nil),
            ("content as array", "content-state", [1, 2]), ("no relevance", "relevance-score", nil),
            ("relevance as string", "relevance-score", "high"), ("relevance overflow", "relevance-score", huge),
            ("stale date as string", "stale-date", "soon"),
            ("dismissal date on update", "dismissal-date", 1_700_000_060),
            ("alert as string", "alert", "fire"), ("alert without body", "alert", ["title": "x"]),
        ]
        for (name, key, value) in mutations {
            var object = validEnvelope(device: "hostile-\(index)", activity: "a1")
            object[key] = value
            add("envelope: \(name)", payload: json(object))
        }
        let contentMutations: [(String, String, Any?)] = [
            ("latitude 91", "latitude", 91), ("latitude -91", "latitude", -91), ("longitude 181", "longitude", 181),
            ("longitude -180.5", "longitude", -180.5), ("latitude without longitude", "longitude", nil),
            ("latitude as string", "latitude", "52.5"), ("latitude overflow", "latitude", huge),
            ("speed -1", "speed", -1), ("course 361", "course", 361), ("course -1", "course", -1),
            ("accuracy -5", "horizontalAccuracy", -5), ("fix 4d", "fix", "4d"), ("no fix", "fix", nil),
            ("satellites -1", "satellites", -1), ("satellites 1.5", "satellites", 1.5), ("distance -1", "distance", -1),
            ("no distance", "distance", nil), ("elapsed -1", "elapsed", -1), ("paused as string", "paused", "yes"),
            ("no paused", "paused", nil), ("progress 1.5", "progress", 1.5), ("progress -0.1", "progress", -0.1),
            ("eta as string", "eta", "later"), ("fix time as object", "fixTime", ["t": 1]),
        ]
        for (name, key, value) in contentMutations {
            var object = validEnvelope(device: "hostile-\(index)", activity: "a1")
            var content = object["content-state"] as! [String: Any]
            content[key] = value
            object["content-state"] = content
            add("content: \(name)", payload: json(object))
        }
        let attributeMutations: [(String, String, Any?)] = [
            ("no name", "name", nil), ("name as number", "name", 7), ("no device id", "deviceID", nil),
            ("destination without name", "destination", ["latitude": 1, "longitude": 2]),
            ("destination latitude 95", "destination", ["name": "x", "latitude": 95, "longitude": 2]),
        ]
        for (name, key, value) in attributeMutations {
            var object = validEnvelope(device: "hostile-\(index)", activity: "a1")
            var attributes = object["attributes"] as! [String: Any]
            attributes[key] = value
            object["attributes"] = attributes
            add("attributes: \(name)", payload: json(object))
        }
        var ended = validEnvelope(device: "hostile-\(index)", activity: "a1")
        ended["event"] = "end"
        add("envelope: end without dismissal date", payload: json(ended))

        // Envelopes of an attributes type the receiver does not know (valid as such, docs/topics.md)
        // with one key wrong: what the envelope rules and the 4 KiB limit of a content state refuse.
        let otherTypeMutations: [(String, String, Any?)] = [
            ("content as array", "content-state", [1, 2]), ("content as string", "content-state", "two pallets"),
            ("content null", "content-state", NSNull()), ("no content", "content-state", nil),
            ("attributes as array", "attributes", ["label"]), ("attributes as number", "attributes", 3),
            ("content over 4 KiB", "content-state", ["note": String(repeating: "x", count: 4096)]),
            ("content number overflow", "content-state", ["count": huge]),
            ("content nested 40 deep", "content-state", (0..<40).reduce(1 as Any) { value, _ in ["a": value] }),
            ("dismissal date on update", "dismissal-date", 1_700_000_060), ("seq 0", "seq", 0),
            ("type with a slash", "attributes-type", "com.example/pin"),
        ]
        for (name, key, value) in otherTypeMutations {
            var object = validEnvelope(device: "hostile-\(index)", activity: "a1")
            object["attributes-type"] = "com.example.pin"
            object["attributes"] = ["label": "Loading bay 3"]
            object["content-state"] = ["count": 2, "note": "two pallets waiting"]
            object[key] = value
            add("other type: \(name)", payload: json(object))
        }
        var pinOfAnother = validEnvelope(device: "someone-else", activity: "a1")
        pinOfAnother["attributes-type"] = "com.example.pin"
        add("other type: envelope of another device", payload: json(pinOfAnother))

        // Valid payloads on the wrong topic.
        add(
            "envelope of another device", payload: json(validEnvelope(device: "someone-else", activity: "a1")))
        add(
            "envelope of another activity",
            payload: json(validEnvelope(device: "hostile-\(index)", activity: "other")))
        add(
            "envelope on a status topic", payload: json(validEnvelope(device: "hostile-\(index)", activity: "a1")),
            status: true)
        add(
            "envelope on an invalid device id", payload: json(validEnvelope(device: "x", activity: "a1")),
            topic: "\(prefix)/-bad/activities/a1")
        add(
            "envelope on an upper-case activity", payload: json(validEnvelope(device: "x", activity: "A1")),
            topic: "\(prefix)/hostile-\(index)/activities/A1")

        // Statuses with one key wrong.
        let statusMutations: [(String, String, Any?)] = [
            ("schema v2", "schema", "myeline.status.v2"), ("state sleeping", "state", "sleeping"),
            ("state as bool", "state", true), ("no version", "version", nil),
            ("version too long", "version", String(repeating: "v", count: 65)),
            ("since as string", "since", "now"), ("online without since", "since", nil), ("no device", "device", nil),
            ("device of another", "device", "someone-else"),
        ]
        for (name, key, value) in statusMutations {
            var object: [String: Any] = [
                "schema": "myeline.status.v1", "device": "hostile-\(index)", "state": "online", "since": 1_700_000_000,
                "version": "0.1.0",
            ]
            object[key] = value
            add("status: \(name)", payload: json(object), status: true)
        }
        return cases
    }
}
