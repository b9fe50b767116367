import FoundationEssentials
import Location
import Logging
import MyelineConfiguration

import Glibc

/// What `run` checks before it connects to anything, so that a mistake a user can make is a
/// configuration error (exit status 64, one line naming the cause and the fix) and nothing is
/// published: the state directory can be written, and a file source can be read and holds at
/// least one position.
enum AgentPreflight {
    /// Checks the state directory and the source of `configuration`.
    ///
    /// - Throws: ``ConfigurationError`` naming `state-directory` or `source.address`.
    static func check(_ configuration: AgentConfiguration, environment: [String: String])
        async throws(ConfigurationError)
    {
        try checkDirectory(configuration.stateDirectory, key: .stateDirectory)
        if configuration.storage.durability.syncInterval != nil {
            try checkDirectory(
                configuration.storage.resolvedSpoolDirectory(
                    stateDirectory: configuration.stateDirectory, environment: environment),
                key: .storageSpoolDirectory)
        }
        if case .file(let path) = configuration.source.address {
            try await checkFile(path, options: configuration.fileOptions)
        }
    }

    /// Creates a directory the agent writes (the state directory, the spool) if it is missing and
    /// checks that this user can write in it.
    static func checkDirectory(_ path: String, key: ConfigurationKey) throws(ConfigurationError) {
        let fix =
            "create it writable by the user the agent runs as (sudo install -d -o myeline -g myeline \(path)), "
            + "or set \(key.nameAndFlag) to a directory that user can write"
        var prefix = ""
        for component in path.split(separator: "/") {
            prefix += "/\(component)"
            var status = stat()
            if stat(prefix, &status) == 0 {
                guard status.st_mode & S_IFMT == S_IFDIR else {
                    throw ConfigurationError(key: key, "\(prefix) is not a directory: \(fix)")
                }
                continue
            }
            guard errno == ENOENT, mkdir(prefix, 0o755) == 0 || errno == EEXIST else {
                throw ConfigurationError(key: key, "cannot create \(prefix): \(Self.reason()); \(fix)")
            }
        }
        let probe = "\(path)/.myeline-write-check-\(getpid())"
        let fd = open(probe, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw ConfigurationError(key: key, "cannot write in \(path): \(Self.reason()); \(fix)")
        }
        close(fd)
        unlink(probe)
    }

    /// Checks that a file source is a readable file in a format the agent replays, with at least
    /// one position (reading, as fast as possible, up to its first fix).
    static func checkFile(_ path: String, options: FileSource.Options) async throws(ConfigurationError) {
        let key = ConfigurationKey.sourceAddress
        let fix =
            "set \(key.nameAndFlag) to an NMEA, GPX or gpspipe file with positions, or to gpsd://HOST"
        var status = stat()
        guard stat(path, &status) == 0 else {
            throw ConfigurationError(key: key, "cannot open \(path): \(Self.reason()); \(fix)")
        }
        guard status.st_mode & S_IFMT != S_IFDIR else {
            throw ConfigurationError(key: key, "\(path) is a directory, not a file: \(fix)")
        }
        guard access(path, R_OK) == 0 else {
            throw ConfigurationError(key: key, "cannot read \(path): \(Self.reason()); \(fix)")
        }
        var probe = options
        probe.pacing = .asFastAsPossible
        probe.loops = false
        do {
            // Quiet: what the replay itself rejects is logged when it runs.
            let quiet = Logger(label: "myeline.preflight") { _ in SwiftLogNoOpLogHandler() }
            for try await update in try FileSource(path: path, options: probe, logger: quiet).updates
            where update.fix != nil {
                return
            }
        } catch {
            throw ConfigurationError(key: key, "\(error.message): \(fix)")
        }
        throw ConfigurationError(
            key: key,
            "\(path) has no position (no GPX point with lat and lon, no NMEA or gpsd fix): \(fix)")
    }

    private static func reason() -> String { String(cString: strerror(errno)) }
}
