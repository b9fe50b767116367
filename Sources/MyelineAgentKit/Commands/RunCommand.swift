import ArgumentParser
import AsyncSupport
import FoundationEssentials
import LiveActivity
import Logging
import ServiceLifecycle
import UnixSignals
import MyelineConfiguration

/// `myeline-agent run`: tracks this device and publishes its live activity until stopped.
struct RunCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Track this device and publish its live activity over MQTT.",
        discussion: """
            Reads the configuration as check-config does and checks the state directory and a file \
            source (exit status 64 on a mistake, before connecting), connects to the broker, starts a \
            location activity and publishes its updates and track points until the source ends or \
            SIGTERM or SIGINT arrives. See docs/agent.md.
            """
    )

    @OptionGroup var options: ConfigurationOptions

    func run() async throws {
        // At most two arenas: the agent's threads allocate little and seldom at once (HeapPolicy).
        HeapPolicy.apply(maximumArenas: 2)
        let environment = ProcessInfo.processInfo.environment
        let (loaded, password) = try await options.loadWithPassword(environment: environment)
        LogOutput.start(level: loaded.configuration.logLevel)
        loaded.configuration.mqtt.warnIfPasswordExposed(logger: Logger(label: "myeline.agent"))
        try await AgentPreflight.check(loaded.configuration, environment: environment)
        try await Self.buildServiceGroup(configuration: loaded.configuration, password: password).run()
    }

    /// The agent's service group: the ``AgentService``, shut down gracefully on SIGTERM and SIGINT;
    /// the group ends when the agent returns (a finite file replay is over).
    static func buildServiceGroup(
        configuration: AgentConfiguration, password: String?, clock: (any WallClock)? = nil
    ) -> ServiceGroup {
        let logger = Logger(label: "myeline.agent")
        let agent = AgentService(configuration: configuration, password: password, logger: logger, clock: clock)
        return ServiceGroup(
            configuration: ServiceGroupConfiguration(
                services: [
                    .init(
                        service: agent, successTerminationBehavior: .gracefullyShutdownGroup,
                        failureTerminationBehavior: .cancelGroup)
                ],
                gracefulShutdownSignals: [.sigterm, .sigint],
                logger: logger))
    }
}
