import AggregatorWeb
import ArgumentParser
import AsyncSupport
import Board
import Foundation
import LiveActivity
import MyelineWire
import Logging
import MyelineConfiguration
import ServiceLifecycle

/// `myeline-aggregator`: subscribes to every device's topics and shows the fleet in a terminal.
///
/// The executable target's `@main` calls ``main()``; tests parse and build it from here.
public struct AggregatorCommand: AsyncParsableCommand {
    /// The command's name, abstract, discussion and version.
    public static let configuration = CommandConfiguration(
        commandName: "myeline-aggregator",
        abstract: "Show a live board of every Myeline tracker's activities.",
        discussion: """
            Subscribes to the status and activity topics of every device under a topic prefix and \
            shows them as a live board in the terminal. See docs/topics.md for the topics and payloads \
            and docs/aggregator.md for the board, its keys and its configuration.
            """,
        version: Myeline.version
    )

    @Option(
        name: .customLong("config"),
        help: ArgumentHelp(
            "The YAML configuration file (default: /etc/myeline/aggregator.yaml, if it exists).", valueName: "file"))
    var configFile: String?

    @Option(help: ArgumentHelp("The broker URL (mqtt.broker), such as mqtts://broker:8883.", valueName: "url"))
    var broker: String?

    @Option(name: .customLong("prefix"), help: ArgumentHelp("The topic prefix (topic-prefix).", valueName: "prefix"))
    var prefix: String?

    @Option(help: ArgumentHelp("compact, expanded or minimal (board.layout).", valueName: "layout"))
    var layout: String?

    @Option(
        name: .customLong("log-level"),
        help: ArgumentHelp("The lowest level logged to stderr (log-level): trace ... critical.", valueName: "level"))
    var logLevel: String?

    @Flag(help: "Also show OwnTracks phones and trackers from owntracks/+/+ (owntracks.subscribe).")
    var owntracks = false

    @Option(help: ArgumentHelp("all, offline or unhealthy (board.show).", valueName: "rows"))
    var show: String?

    @Flag(name: .customLong("no-bell"), help: "Do not ring the terminal's bell on a new alert (board.bell).")
    var noBell = false

    @Option(
        name: .customLong("max-activities-per-device"),
        help: ArgumentHelp(
            "The most rows one device may have; more are rejected (board.max-activities-per-device, 8).",
            valueName: "n"))
    var maximumActivitiesPerDevice: String?

    @Option(
        help: ArgumentHelp(
            "How long --once waits to reach the broker, seconds (board.once-timeout, 10).", valueName: "seconds"))
    var timeout: String?

    @Flag(
        help: """
            Wait for the retained state, print the board (or JSON with --json) and exit: 0 complete, 69             broker unreachable, 75 bootstrap cut by the broker, 77 refused by the broker.
            """)
    var once = false

    @Flag(help: "Print JSON lines (activities, devices, a summary) instead of a table (with --once or --follow).")
    var json = false

    @Flag(help: "Print every change as a line (JSON with --json) until stopped.")
    var follow = false

    @Option(
        help: ArgumentHelp(
            "Serve the fleet map on HOST:PORT or PORT (web.listen; loopback unless a host is given; without a terminal, the map alone: add --follow for lines; docs/web.md).",
            valueName: "address"))
    var http: String?

    @Option(
        name: .customLong("http-token-file"),
        help: ArgumentHelp("A file whose token every map request must carry (web.token-file).", valueName: "file"))
    var httpTokenFile: String?

    @Option(help: ArgumentHelp("The map's tile URL template, or none (web.tiles; OpenStreetMap's).", valueName: "url"))
    var tiles: String?

    @Option(
        name: .customLong("trail-length"),
        help: ArgumentHelp(
            "The most points of each activity's trail on the map (web.trail-length, 100).", valueName: "n"))
    var trailLength: String?

    /// The values given, by dotted key.
    var flagValues: [String: String] {
        let given: [(ConfigurationKey, String?)] = [
            (.mqttBroker, broker), (.topicPrefix, prefix), (.boardLayout, layout), (.boardShow, show),
            (.boardBell, noBell ? "false" : nil), (.boardMaxActivitiesPerDevice, maximumActivitiesPerDevice),
            (.boardOnceTimeout, timeout), (.logLevel, logLevel), (.ownTracksSubscribe, owntracks ? "true" : nil),
            (.webListen, http), (.webTokenFile, httpTokenFile), (.webTiles, tiles), (.webTrailLength, trailLength),
        ]
        return Dictionary(uniqueKeysWithValues: given.compactMap { key, value in value.map { (key.name, $0) } })
    }

    /// What the flags ask to be shown, given whether the map is served and whether standard output
    /// is a terminal (``Presentation/choose(once:json:follow:map:interactive:)``).
    func presentation(map: Bool = false, interactive: Bool = Terminal.isInteractive) -> Presentation {
        Presentation.choose(once: once, json: json, follow: follow, map: map, interactive: interactive)
    }

    /// Creates the command with no option set (ArgumentParser fills them in).
    public init() {}

    /// Refuses contradictory flags (exit status 64).
    public func validate() throws {
        if follow && once { throw ValidationError("--follow and --once exclude each other: choose one") }
        if once && http != nil { throw ValidationError("--http serves a live map and --once exits: choose one") }
        if json && !follow && http != nil {
            throw ValidationError(
                "--http serves a live map and --json without --follow prints the fleet once and exits: add --follow")
        }
    }

    /// Runs the board until its presentation ends or SIGTERM or SIGINT arrives.
    public func run() async throws {
        let environment = ProcessInfo.processInfo.environment
        let (configuration, password) = try await load(environment: environment)
        let webToken: AccessToken?
        do {
            webToken = try configuration.web?.loadToken()
        } catch {
            throw ValidationError(error.description)
        }
        let level = configuration.logLevel
        // The full-screen board owns the terminal: its log goes to stderr only when that is elsewhere.
        let chosen = presentation(map: configuration.web != nil)
        let quiet = chosen == .board && isatty(2) == 1
        LogOutput.start(level: level, quiet: quiet)
        configuration.mqtt.warnIfPasswordExposed(logger: Logger(label: "myeline.aggregator"))
        HeapPolicy.apply()
        let (group, session) = Self.buildServiceGroup(
            configuration: configuration, password: password, presentation: chosen,
            colours: Display.coloursWanted(environment: environment), webToken: webToken)
        try await group.run()
        if let status = session.withState({ $0.onceOutcome?.exitStatus }), status != 0 {
            throw ExitCode(status)
        }
    }

    /// Reads and checks the configuration and the password.
    ///
    /// - Throws: a `ValidationError` (exit status 64) naming the key at fault.
    func load(
        environment: [String: String], defaultFile: String = AggregatorConfiguration.defaultFilePath
    ) async throws -> (AggregatorConfiguration, String?) {
        do {
            let configuration = try await AggregatorConfiguration.load(
                flags: flagValues, file: configFile, environment: environment, defaultFile: defaultFile)
            return (configuration, try configuration.mqtt.loadPassword(environment: environment))
        } catch {
            throw ValidationError(error.description)
        }
    }

    /// The aggregator's service group, shut down gracefully on SIGTERM and SIGINT, which ends when
    /// the presentation does, and its session (what `--once` found is in it afterwards).
    static func buildServiceGroup(
        configuration: AggregatorConfiguration, password: String?, presentation: Presentation, colours: Bool,
        clock: any WallClock = SystemWallClock(), webToken: AccessToken? = nil
    ) -> (ServiceGroup, BoardSession) {
        let logger = Logger(label: "myeline.aggregator")
        let display = Display(
            layout: configuration.layout, colours: colours,
            header: "\(configuration.topicPrefix) @ \(configuration.mqtt.broker)",
            broker: "\(configuration.mqtt.broker)", bell: configuration.bell,
            rows: configuration.rows)
        let session = BoardSession(
            topics: TopicTree(prefix: configuration.topicPrefix), ownTracks: configuration.ownTracksInput,
            sentinelTopic: "myeline-aggregator/sync/\(UUID().uuidString.lowercased())", clock: clock, logger: logger,
            recordsChanges: presentation == .followJSON || presentation == .followPlain,
            view: BoardView(layout: configuration.layout, rows: configuration.rows),
            maximumActivitiesPerDevice: configuration.maximumActivitiesPerDevice)
        let service = AggregatorService(
            configuration: configuration, password: password, presentation: presentation, display: display,
            session: session, logger: logger, clock: clock)
        var services: [ServiceGroupConfiguration.ServiceConfiguration] = [
            .init(
                service: service, successTerminationBehavior: .gracefullyShutdownGroup,
                failureTerminationBehavior: .cancelGroup)
        ]
        if let web = configuration.web, presentation.servesMap {
            // The map reads the board's fleet a frame at a time (docs/web.md).
            let map = WebMap(settings: web, token: webToken, logger: logger, now: { clock.now }) {
                session.withState { state in
                    FleetReading(
                        fleet: state.fleet, dropped: state.dropped,
                        warning: [state.bootstrap.warning, state.fleet.duplicationWarning].compactMap { $0 }.first)
                }
            }
            services.append(.init(service: map, failureTerminationBehavior: .cancelGroup))
        }
        let group = ServiceGroup(
            configuration: ServiceGroupConfiguration(
                services: services,
                gracefulShutdownSignals: [.sigterm, .sigint],
                logger: logger))
        return (group, session)
    }
}
