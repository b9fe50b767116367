import Foundation
import Testing
import TestSupport

/// A hand-made payload that breaks the contract (mostly a golden payload with one change), the
/// problem the decoder must name, and whether the JSON Schema must reject it too.
struct InvalidPayload: Sendable, CustomTestStringConvertible {
    let name: String
    let kind: PayloadKind
    /// The payload; nil when the change's target is not in the golden (a broken row).
    let json: String?
    /// The payload's bytes, where they are not UTF-8 text; otherwise those of `json`.
    let bytes: [UInt8]?
    let problem: String
    /// False where only JSON parsing can reject the payload (not JSON, or a number Swift cannot hold).
    let schemaRejects: Bool

    var testDescription: String { name }

    init(
        _ name: String, _ kind: PayloadKind, golden: String, replacing target: String, with replacement: String,
        problem: String, schemaRejects: Bool = true
    ) {
        let base = WireCodecTests.goldens[golden] ?? ""
        self.name = name
        self.kind = kind
        self.json = base.range(of: target).map { base.replacingCharacters(in: $0, with: replacement) }
        self.bytes = nil
        self.problem = problem
        self.schemaRejects = schemaRejects
    }

    init(_ name: String, _ kind: PayloadKind, json: String, problem: String, schemaRejects: Bool = true) {
        self.name = name
        self.kind = kind
        self.json = json
        self.bytes = nil
        self.problem = problem
        self.schemaRejects = schemaRejects
    }

    /// A payload that is not UTF-8 text, which no JSON Schema validator can read.
    init(_ name: String, _ kind: PayloadKind, bytes: [UInt8], problem: String) {
        self.name = name
        self.kind = kind
        self.json = String(decoding: bytes, as: UTF8.self)
        self.bytes = bytes
        self.problem = problem
        self.schemaRejects = false
    }

    /// The payload as sent; nil for a broken row.
    var data: Data? { bytes.map { Data($0) } ?? json.map { Data($0.utf8) } }

    /// Every row: the hand-made ones and the hostile ones (HostilePayloads.swift).
    static let all: [InvalidPayload] = handMade + hostile

    static let handMade: [InvalidPayload] = [
        // Activity envelopes.
        .init(
            "missing seq", .envelope, golden: "envelope-start-minimal", replacing: #","seq":1"#, with: "",
            problem: "missing key 'seq'"),
        .init(
            "seq 0", .envelope, golden: "envelope-start-minimal", replacing: #""seq":1"#, with: #""seq":0"#,
            problem: "'seq': 0 is outside 1...9007199254740991"),
        .init(
            "seq as a string", .envelope, golden: "envelope-start-minimal", replacing: #""seq":1"#,
            with: #""seq":"1""#, problem: "'seq' has the wrong type; expected an integer"),
        .init(
            "seq null", .envelope, golden: "envelope-start-minimal", replacing: #""seq":1"#, with: #""seq":null"#,
            problem: "'seq' is null; expected an integer"),
        .init(
            "unknown event", .envelope, golden: "envelope-start-minimal", replacing: #""event":"start""#,
            with: #""event":"begin""#, problem: #"'event': "begin" is not one of "start", "update", "end""#),
        .init(
            "other schema", .envelope, golden: "envelope-start-minimal", replacing: "myeline.activity.v1",
            with: "myeline.activity.v2", problem: #"'schema': "myeline.activity.v2" is not "myeline.activity.v1""#),
        .init(
            "device id with a slash", .envelope, golden: "envelope-start-minimal", replacing: #""device":"van-7""#,
            with: #""device":"van/7""#, problem: #"'device': invalid device id "van/7": "# + Fixtures.idRule),
        .init(
            "activity id with a space", .envelope, golden: "envelope-start-minimal",
            replacing: #""activity":"trip-0""#, with: #""activity":"Trip 0""#,
            problem: #"'activity': invalid activity id "Trip 0": "# + Fixtures.idRule),
        .init(
            "other attributes type", .envelope, golden: "envelope-start-minimal",
            replacing: #""attributes-type":"location""#, with: #""attributes-type":"timer""#,
            problem: #"'attributes-type': "timer" is not "location""#,
            // Valid on the wire: a type the location decoder does not take, which the schema
            // accepts as any type it does not register (docs/topics.md, attributes types).
            schemaRejects: false),
        .init(
            "attributes type with a slash", .envelope, golden: "envelope-start-minimal",
            replacing: #""attributes-type":"location""#, with: #""attributes-type":"com.example/pin""#,
            problem: #"'attributes-type': invalid attributes type "com.example/pin": "# + Fixtures.idRule),
        .init(
            "attributes without name", .envelope, golden: "envelope-start-minimal", replacing: #","name":"Van 7""#,
            with: "", problem: "missing key 'attributes.name'"),
        .init(
            "destination latitude 123.4", .envelope, golden: "envelope-start-minimal",
            replacing: #""latitude":52.5651"#, with: #""latitude":123.4"#,
            problem: "'attributes.destination.latitude': 123.4 is outside -90...90"),
        .init(
            "latitude 91", .envelope, golden: "envelope-start-full", replacing: #""latitude":52.520008"#,
            with: #""latitude":91"#, problem: "'content-state.latitude': 91 is outside -90...90"),
        .init(
            "latitude without longitude", .envelope, golden: "envelope-start-full",
            replacing: #""longitude":13.404954,"#, with: "", problem: "missing key 'content-state.longitude'"),
        .init(
            "missing fix", .envelope, golden: "envelope-start-minimal", replacing: #""fix":"none","#, with: "",
            problem: "missing key 'content-state.fix'"),
        .init(
            "unknown fix", .envelope, golden: "envelope-start-minimal", replacing: #""fix":"none""#,
            with: #""fix":"4d""#, problem: #"'content-state.fix': "4d" is not one of "none", "2d", "3d""#),
        .init(
            "paused as a string", .envelope, golden: "envelope-start-minimal", replacing: #""paused":false"#,
            with: #""paused":"no""#, problem: "'content-state.paused' has the wrong type; expected a boolean"),
        .init(
            "negative speed", .envelope, golden: "envelope-start-full", replacing: #""speed":12.25"#,
            with: #""speed":-1"#, problem: "'content-state.speed': -1 is less than 0"),
        .init(
            "progress above 1", .envelope, golden: "envelope-start-full", replacing: #""progress":0.25"#,
            with: #""progress":1.5"#, problem: "'content-state.progress': 1.5 is outside 0...1"),
        .init(
            "end without dismissal date", .envelope, golden: "envelope-end",
            replacing: #""dismissal-date":1700014460.123,"#, with: "", problem: "missing key 'dismissal-date'"),
        .init(
            "start with a dismissal date", .envelope, golden: "envelope-start-minimal", replacing: #""event""#,
            with: #""dismissal-date":1700000000,"event""#,
            problem: #"'dismissal-date': only allowed when 'event' is "end""#),
        .init(
            "an array", .envelope, json: #"[{"event":"start","seq":1}]"#,
            problem: "the payload has the wrong type; expected an object"),
        .init(
            "not JSON", .envelope, golden: "envelope-start-minimal", replacing: #""seq":1"#, with: #""seq":"#,
            problem: "not valid JSON: Invalid value around character 373.", schemaRejects: false),
        .init(
            "relevance score beyond a Double", .envelope, golden: "envelope-start-minimal",
            replacing: #""relevance-score":0"#, with: #""relevance-score":1e999"#,
            problem: "not valid JSON: Number 1e999 is not representable in Swift.", schemaRejects: false),
        // Status messages.
        .init(
            "online without since", .status, golden: "status-online", replacing: #","since":1700000000"#, with: "",
            problem: "missing key 'since'"),
        .init(
            "unknown state", .status, golden: "status-online", replacing: #""state":"online""#,
            with: #""state":"away""#, problem: #"'state': "away" is not one of "online", "offline""#),
        .init(
            "empty version", .status, golden: "status-offline", replacing: #""version":"0.1.0""#,
            with: #""version":"""#, problem: "'version': must have 1-64 characters, not 0"),
        .init(
            "since as an ISO date", .status, golden: "status-online", replacing: #""since":1700000000"#,
            with: #""since":"2023-11-14T22:13:20Z""#, problem: "'since' has the wrong type; expected a number"),
        // Track points.
        .init(
            "track without longitude", .track, golden: "track-minimal", replacing: #","longitude":151.2093"#,
            with: "", problem: "missing key 'longitude'"),
        .init(
            "longitude 181", .track, golden: "track-minimal", replacing: #""longitude":151.2093"#,
            with: #""longitude":181"#, problem: "'longitude': 181 is outside -180...180"),
        .init(
            "track seq 0", .track, golden: "track-minimal", replacing: #""seq":2"#, with: #""seq":0"#,
            problem: "'seq': 0 is outside 1...9007199254740991"),
        .init(
            // The schema's maximum, the largest integer a JavaScript receiver keeps exactly.
            "track seq 2^53", .track, golden: "track-minimal", replacing: #""seq":2"#,
            with: #""seq":9007199254740992"#, problem: "'seq': 9007199254740992 is outside 1...9007199254740991"),
        .init(
            "course 361", .track, golden: "track-full", replacing: #""course":87.5"#, with: #""course":361"#,
            problem: "'course': 361 is outside 0...360"),
        .init(
            "negative satellites", .track, golden: "track-full", replacing: #""satellites":9"#,
            with: #""satellites":-1"#, problem: "'satellites': -1 is less than 0"),
        // Commands and their results.
        .init(
            "empty command id", .command, golden: "command", replacing: #""id":"req-1""#, with: #""id":"""#,
            problem: "'id': must have 1-128 characters, not 0"),
        .init(
            "unknown intent", .command, golden: "command", replacing: #""intent":"start""#,
            with: #""intent":"launch""#,
            problem: #"'intent': "launch" is not one of "start", "stop", "pause", "resume", "report", "update""#),
        .init(
            "command without timestamp", .command, golden: "command", replacing: #","timestamp":1700000000"#,
            with: "", problem: "missing key 'timestamp'"),
        .init(
            "failure without error", .commandResult, golden: "command-result-error",
            replacing: #""error":"an activity is already running","#, with: "", problem: "missing key 'error'"),
        .init(
            "success with an error", .commandResult, golden: "command-result-ok", replacing: #""id""#,
            with: #""error":"late","id""#, problem: "'error': only allowed when 'ok' is false"),
        .init(
            "ok as a string", .commandResult, golden: "command-result-ok", replacing: #""ok":true"#,
            with: #""ok":"yes""#, problem: "'ok' has the wrong type; expected a boolean"),
    ]
}
