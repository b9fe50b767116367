import Logging

/// Where the executables' log lines go: standard error, one line per event, in the format of
/// docs/logging.md. Every command of both executables starts its logging here, once, with the
/// level its configuration gives.
public enum LogOutput {
    /// Sends every logger's lines at `level` and above to standard error from now on; with `quiet`,
    /// nowhere (a command whose standard error is for its own output).
    ///
    /// swift-log allows one bootstrap per process: a command calls this once, as it starts.
    public static func start(level: Logger.Level, quiet: Bool = false) {
        LoggingSystem.bootstrap { label in
            if quiet { return SwiftLogNoOpLogHandler() }
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
    }
}
