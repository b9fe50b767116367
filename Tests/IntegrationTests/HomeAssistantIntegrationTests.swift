import Foundation
import TestSupport
import Testing

/// The integrations against a real Home Assistant (``TestHomeAssistant``, the version
/// docs/integrations.md names): its MQTT integration set up through its config flow against a
/// private mosquitto, its OwnTracks integration beside it, and two real agents with discovery and
/// OwnTracks on, whose device ids differ only in `.` and `_`. Everything is read back through the
/// REST API, as a user's dashboard would show it, and Home Assistant's log must hold no warning or
/// error about the agents' messages.
@Suite(.tags(.integration), .serialized, .timeLimit(.minutes(10)))
struct HomeAssistantIntegrationTests {
    /// A GPX track of one point with neither speed nor accuracy nor HDOP, as many GPX files are:
    /// replayed in a loop, one fix a second at the same place.
    static let gpx = """
        <?xml version="1.0" encoding="UTF-8"?>
        <gpx version="1.1" creator="myeline-test" xmlns="http://www.topografix.com/GPX/1/1">
        <trk><trkseg><trkpt lat="48.137154" lon="11.576124"><ele>520</ele><time>2026-03-01T12:00:00Z</time></trkpt></trkseg></trk>
        </gpx>

        """

    /// One NMEA epoch: 8 satellites, HDOP 1.2, 10 knots (18.52 km/h) towards 90 degrees; replayed
    /// in a loop, one fix a second at the same place.
    static let nmea = [
        "GPGGA,120000.00,4809.0000,N,01130.0000,E,1,08,1.2,520.0,M,47.0,M,,",
        "GPRMC,120000.00,A,4809.0000,N,01130.0000,E,10.0,90.0,010326,,,A",
    ].map { body in
        "$\(body)*\(String(format: "%02X", body.utf8.reduce(UInt8(0), ^)))\r\n"
    }.joined()

    @Test func homeAssistantShowsTwoTrackersWhoseIdsDifferOnlyInDotAndUnderscore() async throws {
        // A failed install fails the test (scripts/homeassistant-env says why): never a skip.
        let environment = try await TestHomeAssistant.installation()
        try await TestBroker.with(listener: .tcp) { broker in
            guard case .tcp(let host, let port) = broker.address.transport else {
                throw TestSupportError("Home Assistant needs the broker on TCP")
            }
            try await TestHomeAssistant.with(environment: environment) { home in
                try await home.addIntegration("mqtt", answers: [["broker": host, "port": port]])
                try await home.addIntegration("owntracks", answers: [[:]])
                try await withTemporaryDirectory { directory in
                    try await Self.run(home, broker, directory)
                }
            }
        }
    }

    static func run(_ home: TestHomeAssistant, _ broker: TestBroker, _ directory: String) async throws {
        try gpx.write(toFile: "\(directory)/track.gpx", atomically: true, encoding: .utf8)
        try nmea.write(toFile: "\(directory)/receiver.nmea", atomically: true, encoding: .utf8)
        // Device names (in the file: there is no flag for them) make the entity ids.
        for (device, name) in [("dot", "Truck dot 12"), ("underscore", "Truck underscore 12")] {
            try "device:\n  name: \(name)\n".write(
                toFile: "\(directory)/\(device).yaml", atomically: true, encoding: .utf8)
            try FileManager.default.createDirectory(
                atPath: "\(directory)/\(device)-state", withIntermediateDirectories: true)
        }
        let both = ["MYELINE_OWNTRACKS_ENABLED": "true", "MYELINE_HOMEASSISTANT_ENABLED": "true"]
        func agent(_ name: String, _ device: String, source: String, environment: [String: String]) throws
            -> TestProcess
        {
            try AgentHarness.agent(
                broker, state: "\(directory)/\(name)-state",
                ["--config", "\(directory)/\(name).yaml", "--speed", "1", "--loop"], environment: environment,
                source: "\(directory)/\(source)", device: device)
        }
        let dot = try agent("dot", "truck.12", source: "track.gpx", environment: both)
        defer { dot.signal(SIGKILL) }
        // Its OwnTracks user is its device id, so that Home Assistant's OwnTracks tracker is named after it.
        let underscoreOptions = both.merging(["MYELINE_OWNTRACKS_USER": "truck_12"]) { $1 }
        let underscore = try agent("underscore", "truck_12", source: "receiver.nmea", environment: underscoreOptions)
        defer { underscore.signal(SIGKILL) }

        // MQTT discovery: one device each, with its own tracker at its own place, and its sensors.
        let dotTracker = try #require(
            try await home.waitForState("device_tracker.truck_dot_12", "at the GPX point") {
                $0?.number("latitude") == 48.137154 && $0?.number("longitude") == 11.576124
            })
        #expect(dotTracker.state == "not_home")
        #expect(dotTracker.string("source_type") == "gps")
        #expect(dotTracker.number("gps_accuracy") == 10, "assumed: the GPX has neither accuracy nor HDOP")
        #expect(dotTracker.number("altitude") == 520)
        #expect(!dotTracker.attributes.values.contains(.null), "no null attribute: \(dotTracker)")
        #expect(dotTracker.attributes["speed"] == nil, "an unknown speed is left out, not null")

        let underscoreTracker = try #require(
            try await home.waitForState("device_tracker.truck_underscore_12", "at the NMEA position") {
                $0?.number("latitude") == 48.15 && $0?.number("longitude") == 11.5
            })
        #expect(underscoreTracker.number("gps_accuracy") == 6, "from HDOP 1.2: \(underscoreTracker)")
        #expect(underscoreTracker.number("satellites") == 8)
        #expect(underscoreTracker.number("course") == 90)

        // Speed in km/h: under the metric system Home Assistant shows it as published.
        let speed = try #require(
            try await home.waitForState("sensor.truck_underscore_12_speed", "18.5 km/h") { $0?.state == "18.5" })
        #expect(speed.string("unit_of_measurement") == "km/h")
        #expect(speed.string("device_class") == "speed")
        try await home.waitForState("sensor.truck_underscore_12_satellites", "8") { $0?.state == "8" }
        // The GPX-fed tracker has no speed or satellites: unknown, without a warning about the template.
        try await home.waitForState("sensor.truck_dot_12_speed", "unknown") { $0?.state == "unknown" }
        try await home.waitForState("sensor.truck_dot_12_satellites", "unknown") { $0?.state == "unknown" }

        // Two devices, each with the identifier of its own node id, each holding its own entities.
        #expect(
            try await home.render("{{ device_attr(device_id('device_tracker.truck_dot_12'), 'identifiers') | list }}")
                == "[('mqtt', 'myeline_truckD12')]")
        #expect(
            try await home.render(
                "{{ device_attr(device_id('device_tracker.truck_underscore_12'), 'identifiers') | list }}")
                == "[('mqtt', 'myeline_truck_12')]")
        #expect(
            try await home.render(
                "{{ device_id('sensor.truck_dot_12_speed') == device_id('device_tracker.truck_dot_12')"
                    + " and device_id('sensor.truck_underscore_12_speed') == device_id('device_tracker.truck_underscore_12')"
                    + " and device_id('device_tracker.truck_dot_12') != device_id('device_tracker.truck_underscore_12') }}"
            ) == "True")

        // Home Assistant's OwnTracks integration reads the OwnTracks messages: a tracker each (the
        // GPX-fed one too: it has an acc), named after the topic's user level.
        let dotOwnTracks = try #require(
            try await home.waitForState("device_tracker.myeline_truck_12", "the GPX-fed tracker") { $0 != nil })
        #expect(dotOwnTracks.number("latitude") == 48.137154 && dotOwnTracks.number("longitude") == 11.576124)
        #expect(dotOwnTracks.number("gps_accuracy") == 10)
        #expect(dotOwnTracks.string("friendly_name") == "myeline", "the default owntracks.user")
        #expect(dotOwnTracks.string("tid") == "12")
        let underscoreOwnTracks = try #require(
            try await home.waitForState("device_tracker.truck_12_truck_12", "the NMEA-fed tracker") { $0 != nil })
        #expect(underscoreOwnTracks.string("friendly_name") == "truck_12", "owntracks.user is the device id")
        #expect(underscoreOwnTracks.number("gps_accuracy") == 6)
        #expect(underscoreOwnTracks.number("velocity") == 19, "km/h, whole")

        // A crash: the status will makes the tracker's entities unavailable, and only its own.
        try await AgentHarness.kill(dot)
        for entity in ["device_tracker.truck_dot_12", "sensor.truck_dot_12_speed", "sensor.truck_dot_12_satellites"] {
            try await home.waitForState(entity, "unavailable") { $0?.state == "unavailable" }
        }
        #expect(try await home.state("device_tracker.truck_underscore_12")?.state == "not_home")

        // Removal: truck_12 restarted with discovery off removes its entities, and not truck.12's.
        underscore.signal(SIGTERM)
        #expect(try await underscore.waitForExit() == 0, "\(underscore.tail)")
        let restarted = try agent(
            "underscore", "truck_12", source: "receiver.nmea",
            environment: underscoreOptions.merging(["MYELINE_HOMEASSISTANT_ENABLED": "false"]) { $1 })
        defer { restarted.signal(SIGKILL) }
        for entity in [
            "device_tracker.truck_underscore_12", "sensor.truck_underscore_12_speed",
            "sensor.truck_underscore_12_satellites",
        ] {
            try await home.waitForState(entity, "removed") { $0 == nil }
        }
        #expect(try await home.state("device_tracker.truck_dot_12")?.state == "unavailable")
        restarted.signal(SIGTERM)
        #expect(try await restarted.waitForExit() == 0, "\(restarted.tail)")

        let quiet = home.problems.filter(Self.isAboutMyeline)
        #expect(quiet.isEmpty, "Home Assistant's log about the agents' messages:\n\(quiet)")

        // The uninstall's step for truck.12: its entities go, and its retained OwnTracks location.
        let remove = try TestProcess(
            name: "myeline-agent remove-integrations", executable: try builtProductPath("myeline-agent"),
            arguments: [
                "remove-integrations", "--device", "truck.12", "--broker", "\(broker.address)", "--state-dir",
                "\(directory)/dot-state", "--config", "\(directory)/dot.yaml",
            ],
            environment: ProcessInfo.processInfo.environment.merging(both) { $1 })
        #expect(try await remove.waitForExit() == 0, "\(remove.output)")
        for entity in ["device_tracker.truck_dot_12", "sensor.truck_dot_12_speed", "sensor.truck_dot_12_satellites"] {
            try await home.waitForState(entity, "removed") { $0 == nil }
        }
        // The one complaint docs/integrations.md announces: the OwnTracks integration reads the empty
        // message that clears the retained location as JSON.
        try await home.process.waitForLine(containing: "Unable to parse payload as JSON")
        let problems = home.problems.filter(Self.isAboutMyeline)
        #expect(problems.count == 1, "\(problems)")
        #expect(
            problems.first.map {
                $0.logger == "homeassistant.components.owntracks" && $0.message.hasPrefix("Unable to parse payload")
            } == true, "\(problems)")
    }

    /// Whether a log record is about the agents' messages: from the integrations that read them
    /// (MQTT, OwnTracks, the trackers and sensors, templates), or naming a test device.
    @Sendable static func isAboutMyeline(_ problem: TestHomeAssistant.Problem) -> Bool {
        let loggers = [
            "homeassistant.components.mqtt", "homeassistant.components.owntracks",
            "homeassistant.components.device_tracker", "homeassistant.components.sensor", "homeassistant.helpers",
        ]
        return loggers.contains { problem.logger.hasPrefix($0) }
            || ["myeline", "truck", "owntracks"].contains { problem.message.lowercased().contains($0) }
    }
}
