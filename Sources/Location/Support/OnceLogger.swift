import Logging

/// Logs the first occurrence of each kind of problem and only counts the rest, so that a stream of
/// garbage costs one log line per reason, not one per line.
struct OnceLogger {
    let logger: Logger
    private var seen: Set<String> = []

    init(logger: Logger) {
        self.logger = logger
    }

    /// Logs `message` at info level the first time `key` is seen; later calls with the same key only
    /// log at trace level.
    mutating func log(
        _ key: String, _ message: @autoclosure () -> Logger.Message,
        metadata: @autoclosure () -> Logger.Metadata = [:]
    ) {
        if seen.insert(key).inserted {
            logger.info(message(), metadata: metadata())
        } else {
            logger.trace(message(), metadata: metadata())
        }
    }
}

extension Logger {
    /// A logger that writes nothing: the default of the decoders and sources for a caller that gives
    /// none. The library never makes a logger of its own that writes; the program passes its own.
    public static let discarding = Logger(label: "myeline.location.discarding") { _ in SwiftLogNoOpLogHandler() }
}
