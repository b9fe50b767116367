import ArgumentParser

/// The flags that say where the configuration is and which tracker and broker it is about: every
/// agent command takes them, the daemon (`run`) and the intents sent to it (`start`, `stop`, ...).
struct ConnectionOptions: ParsableArguments {
    @Option(
        name: .customLong("config"),
        help: ArgumentHelp(
            "The YAML configuration file (default: /etc/myeline/agent.yaml, if it exists).", valueName: "file"))
    var configFile: String?

    @Option(name: .customLong("device"), help: ArgumentHelp("The tracker's device id (device.id).", valueName: "id"))
    var device: String?

    @Option(help: ArgumentHelp("The broker URL (mqtt.broker), such as mqtts://broker:8883.", valueName: "url"))
    var broker: String?
}
