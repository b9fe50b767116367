import ArgumentParser
import AsyncSupport
import FoundationEssentials
import LiveActivity
import Logging
import MQTT
import MyelineConfiguration

/// `myeline-agent remove-integrations`: clears what the integrations left on the broker, for an
/// uninstall (deploy/install.sh --uninstall runs it).
struct RemoveIntegrationsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "remove-integrations",
        abstract: "Remove this device's Home Assistant entities and retained OwnTracks location.",
        discussion: """
            Publishes an empty retained message on every Home Assistant discovery topic the agent \
            published (recorded in the state directory) or would publish (homeassistant.enabled), and on \
            the OwnTracks location topic when owntracks.enabled, then forgets the record. Run it with the \
            agent stopped. See docs/integrations.md.
            """
    )

    @OptionGroup var options: ConfigurationOptions

    @Option(help: ArgumentHelp("How long to wait for the broker, seconds.", valueName: "seconds"))
    var timeout: Double = 10

    func validate() throws {
        guard timeout.isFinite, timeout > 0, timeout <= 3600 else {
            throw ValidationError("--timeout \(timeout) is not a number of seconds from 0 to 3600: use such as 10")
        }
    }

    func run() async throws {
        let environment = ProcessInfo.processInfo.environment
        let (loaded, password) = try await options.loadWithPassword(environment: environment)
        let configuration = loaded.configuration
        LogOutput.start(level: configuration.logLevel)
        let logger = Logger(label: "myeline.agent")
        configuration.mqtt.warnIfPasswordExposed(logger: logger)
        let mqtt = configuration.mqtt.clientConfiguration(password: password).withOneShotClientID()
        let outcome = await withTimeout(.seconds(timeout)) { () -> Result<[String], any Error> in
            do {
                return .success(
                    try await MQTTClient.withClient(configuration: mqtt, logger: logger) { client in
                        try await IntegrationLink(
                            configuration: configuration, client: client, logger: logger, clock: SystemWallClock(),
                            stateFiles: BlockingExecutor(name: "state-files")
                        ).removeRetained()
                    })
            } catch {
                return .failure(error)
            }
        }
        guard let outcome else {
            throw CommandFailure(
                .unavailable,
                "the broker \(configuration.mqtt.broker) did not answer within \(timeout) s: is it running and reachable?"
            )
        }
        let topics = try outcome.get()
        print(topics.isEmpty ? "nothing to remove" : "removed \(topics.joined(separator: " "))")
    }
}
