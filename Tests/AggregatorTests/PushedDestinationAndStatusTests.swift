import Board
import Foundation
import LiveActivity
import Testing

/// What a `start` or `update` command pushed into a location activity's content state
/// (`content-state.destination` and `content-state.status`, docs/intents.md) is what every view
/// shows: the destination now (the pushed one, else the attributes') with the progress and ETA
/// that count toward it, and the status text, made safe for a terminal. The board showed the
/// attributes' destination only, and no status text at all.
struct PushedDestinationAndStatusTests {
    /// The places of the cases, degrees: where the trip started to go, and where a push update sent it.
    static let places = [
        "Depot": (latitude: 52.52, longitude: 13.40), "Market Hall": (latitude: 52.53, longitude: 13.41),
    ]
    static let columns = 120

    /// One row's inputs and what each view must show.
    struct Case: CustomTestStringConvertible, Sendable {
        var name: String
        /// The destination the activity started with (`attributes.destination`).
        var started: String?
        /// The destination a push update set (`content-state.destination`).
        var pushed: String?
        /// The status text (`content-state.status`).
        var status: String?
        /// The plain line's and the card's destination: `→ NAME 45% ETA +12m`; nil: none shown.
        var destination: String?
        /// The plain line's and the card's status part (`status: …`); nil: none shown.
        var shownStatus: String?
        /// The JSON line's `status-text`, as a JSON string; nil: the key is absent.
        var jsonStatus: String?

        var testDescription: String { name }
    }

    /// Text no device should get onto a terminal: escapes that clear the screen and set its title,
    /// a bell, a line break, and a right-to-left override that would turn the rest of the line round.
    static let hostile = "Out\u{1B}[2J\u{1B}]0;pwned\u{7} for\ndelivery \u{202E}yrevileD\u{200F}"
    /// The longest status text the agent sends fits in its 4 KiB content state.
    static let long = String(repeating: "Out for delivery, ", count: 150)

    static let cases: [Case] = [
        Case(name: "no destination"),
        Case(name: "the attributes' destination", started: "Depot", destination: "→ Depot 45% ETA +12m"),
        Case(
            name: "a pushed destination replaces the attributes'", started: "Depot", pushed: "Market Hall",
            destination: "→ Market Hall 45% ETA +12m"),
        Case(
            name: "a pushed destination without one in the attributes", pushed: "Market Hall",
            destination: "→ Market Hall 45% ETA +12m"),
        Case(
            name: "a status text", started: "Depot", pushed: "Market Hall", status: "Out for delivery",
            destination: "→ Market Hall 45% ETA +12m", shownStatus: "status: Out for delivery",
            jsonStatus: #""Out for delivery""#),
        Case(
            name: "a status text without a destination", status: "Loading", shownStatus: "status: Loading",
            jsonStatus: #""Loading""#),
        Case(
            name: "a hostile status text", status: hostile,
            shownStatus: "status: Out?[2J?]0;pwned? for?delivery ?yrevileD?",
            jsonStatus: #""Out\u001b[2J\u001b]0;pwned\u0007 for\ndelivery "# + "\u{202E}yrevileD\u{200F}\""),
        Case(name: "a long status text", status: long, shownStatus: "status: " + long, jsonStatus: "\"\(long)\""),
        Case(name: "a blank status text", status: " ", jsonStatus: #"" ""#),
    ]

    /// A fleet with the case's activity: moving, 45 % of the way, due in 12 minutes.
    static func fleet(_ test: Case) -> Fleet {
        var content: [String: Any] = [
            "latitude": 52.520008, "longitude": 13.404954, "fix": "3d", "distance": 12_345, "elapsed": 1510,
            "progress": 0.45, "eta": 1_700_000_820,
        ]
        func destination(_ name: String?) -> [String: Any]? {
            guard let name, let place = places[name] else { return nil }
            return ["name": name, "latitude": place.latitude, "longitude": place.longitude]
        }
        content["destination"] = destination(test.pushed)
        content["status"] = test.status
        var fleet = Fleet()
        _ = Wire.apply(
            &fleet,
            Wire.envelope(
                device: "van-7", activity: "trip-1", event: "update", timestamp: 1_700_000_098, name: "Van 7",
                destination: destination(test.started), content: content))
        return fleet
    }

    static func row(_ fleet: Fleet) throws -> ActivityRow {
        try #require(fleet.rows.values.first)
    }

    @Test(arguments: cases)
    func thePlainLineShowsTheDestinationNowAndTheStatus(_ test: Case) throws {
        let fleet = Self.fleet(test)
        let row = try Self.row(fleet)
        let line = PlainText.row(
            row, state: .active, status: nil, health: fleet.health(of: row.key.device), now: Wire.now)
        if let destination = test.destination {
            #expect(line.contains(" · \(destination)"), "\(line)")
        } else {
            #expect(!line.contains("→"), "\(line)")
        }
        if test.pushed != nil { #expect(!line.contains("Depot"), "the started destination is gone: \(line)") }
        if let status = test.shownStatus {
            #expect(line.hasSuffix(" · \(status)"), "\(line)")
        } else {
            #expect(!line.contains("status:"), "\(line)")
        }
        #expect(!line.unicodeScalars.contains { $0.properties.generalCategory == .control || $0 == "\u{202E}" })
    }

    @Test(arguments: cases)
    func theCardShowsTheDestinationNowAndTheStatus(_ test: Case) throws {
        let fleet = Self.fleet(test)
        var view = BoardView(layout: .expanded)
        let frame = FrameRenderer(layout: .expanded, columns: Self.columns, lines: 11, colours: false)
            .render(fleet, view: &view, header: BoardHeader(source: "t"), now: Wire.now)
        let title = frame[5]
        let trip = frame[7]
        #expect(title.hasPrefix("van-7 · Van 7"), "\(frame.joined(separator: "\n"))")
        if let destination = test.destination {
            let route = destination.replacingOccurrences(of: " ETA", with: "   ETA")
            #expect(trip.contains("12.3km in 0:25:10   \(route)"), "\(trip)")
        } else {
            #expect(!trip.contains("→"), "\(trip)")
        }
        if let status = test.shownStatus {
            // Cut to the card's width before the state, as a long name is.
            let shown = TerminalText.fit("van-7 · Van 7 · \(status)", Self.columns - 10)
            #expect(title.hasPrefix(shown), "\(title)")
        } else {
            #expect(!title.contains("status:"), "\(title)")
        }
        for line in frame {
            #expect(TerminalText.width(line) == Self.columns, "\(line)")
            #expect(!line.unicodeScalars.contains { $0.properties.generalCategory == .control })
            #expect(!line.contains("\u{202E}") && !line.contains("\u{200F}"))
        }
    }

    /// PROG and ETA count toward the destination now: a pushed destination shows them even when the
    /// activity started without one.
    @Test(arguments: cases)
    func theCompactLineShowsProgressAndETAWithADestinationNow(_ test: Case) throws {
        let fleet = Self.fleet(test)
        var view = BoardView()
        let frame = FrameRenderer(layout: .compact, columns: Self.columns, lines: 6, colours: false)
            .render(fleet, view: &view, header: BoardHeader(source: "t"), now: Wire.now)
        let line = frame[5]
        let hasDestination = test.destination != nil
        #expect(line.contains(" 45% ") == hasDestination, "\(line)")
        #expect(line.contains(" +12m ") == hasDestination, "\(line)")
    }

    @Test(arguments: cases)
    func theJSONLineHasTheDestinationNowAndTheStatusText(_ test: Case) throws {
        let fleet = Self.fleet(test)
        let line = BoardJSON.row(try Self.row(fleet), state: .active, fleet: fleet)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        let destination = object["destination"] as? [String: Any]
        #expect(destination?["name"] as? String == test.pushed ?? test.started, "\(line)")
        if let name = test.pushed ?? test.started {
            #expect(destination?["latitude"] as? Double == Self.places[name]?.latitude)
            #expect(destination?["longitude"] as? Double == Self.places[name]?.longitude)
        }
        if let status = test.jsonStatus {
            #expect(line.contains(#""status-text":\#(status)"#), "\(line)")
            #expect(object["status-text"] as? String == test.status)
        } else {
            #expect(object["status-text"] == nil, "\(line)")
        }
        #expect(object["status"] as? String == "unknown", "`status` stays the device's link state")
    }

    /// The JSON lines of every case, for the schema test (BoardLineSchemaTests).
    static func jsonLines() throws -> [(String, String)] {
        try cases.map { test in
            let fleet = fleet(test)
            return (test.name, BoardJSON.row(try row(fleet), state: .active, change: "updated", fleet: fleet))
        }
    }
}
