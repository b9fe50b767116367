import ArgumentParser
import LiveActivity

/// `myeline-agent`: runs on each tracker and publishes its live activities over MQTT.
@main
struct AgentCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "myeline-agent",
        abstract: "Track this device's location as a live activity and publish it over MQTT.",
        discussion: """
            Reads locations from gpsd or a file, runs the activity lifecycle (start, update, stale, end, \
            dismiss) and publishes each activity's content state as JSON to its own MQTT topic. \
            See docs/topics.md for the topics and payloads.
            """,
        version: Myeline.version,
        subcommands: [
            RunCommand.self, CheckConfigCommand.self, StartCommand.self, StopCommand.self, PauseCommand.self,
            ResumeCommand.self, ReportCommand.self, SimulateCommand.self,
            RemoveIntegrationsCommand.self,
        ]
    )
}
