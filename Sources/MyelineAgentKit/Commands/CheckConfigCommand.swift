import ArgumentParser
import FoundationEssentials

/// `myeline-agent check-config`: validates the configuration and prints it, secrets masked.
struct CheckConfigCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check-config",
        abstract: "Validate the configuration and print the effective values.",
        discussion: """
            Reads flags, MYELINE_* environment variables and the YAML file, in that order of precedence, \
            and prints every key with its value and where it came from. Secrets are masked. Exits with \
            status 64 naming the key when a value is invalid. Connects to nothing. \
            See docs/configuration.md for every key.
            """
    )

    @OptionGroup var options: ConfigurationOptions

    func run() async throws {
        print(try await render(environment: ProcessInfo.processInfo.environment), terminator: "")
    }

    /// Loads, checks (the password too) and renders the configuration.
    ///
    /// - Throws: a `ValidationError` (exit status 64) naming the key at fault.
    func render(
        environment: [String: String], defaultFile: String = ConfigurationLoader.defaultFilePath
    ) async throws -> String {
        let (loaded, _) = try await options.loadWithPassword(environment: environment, defaultFile: defaultFile)
        return ConfigurationReport(loaded).text
    }
}
