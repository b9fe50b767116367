import ArgumentParser
import LiveActivity

/// `myeline-aggregator`: subscribes to every device's topics and shows the fleet in a terminal.
@main
struct AggregatorCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "myeline-aggregator",
        abstract: "Show a live board of every Myeline tracker's activities.",
        discussion: """
            Subscribes to the status and activity topics of every device under a topic prefix and \
            shows them as a live board in the terminal. See docs/topics.md for the topics and payloads.
            """,
        version: Myeline.version
    )
}
