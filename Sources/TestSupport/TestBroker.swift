import Foundation
import Locking
import MQTT

/// A private mosquitto broker for one test: its own config in a temporary directory, listening on a
/// unix socket there or on a free loopback port, never on a fixed port. Stopped by its PID.
public final class TestBroker: Sendable {
    /// How clients reach the broker.
    public enum Listener: Sendable {
        /// A unix socket in the broker's directory.
        case unixSocket
        /// Plain TCP on a free port of 127.0.0.1.
        case tcp
        /// TLS on a free port of 127.0.0.1 with these certificates; optionally requiring a client certificate.
        case tls(TestCertificates, requireClientCertificate: Bool)
        /// A configuration of the test's own, such as a deployment file with test paths: `lines` gets
        /// the broker's directory and a free port of 127.0.0.1, may write files there, and returns
        /// the mosquitto.conf lines that define the listener on that port (and anything else);
        /// clients connect with TLS to `localhost` when `tls`, else with TCP to 127.0.0.1. No
        /// `allow_anonymous` or password lines are added: the lines decide; a `user` line among
        /// them replaces the current user's.
        case configured(tls: Bool, lines: @Sendable (_ directory: String, _ port: Int) throws -> [String])
    }

    /// The broker's address, as clients pass it to `MQTTConfiguration`.
    public let address: BrokerAddress
    /// The broker's private directory (config, socket, password file).
    public let directory: String
    private let configurationFile: String
    private let process: Locked<TestProcess?>

    private init(address: BrokerAddress, directory: String, configurationFile: String) {
        self.address = address
        self.directory = directory
        self.configurationFile = configurationFile
        self.process = Locked(nil)
    }

    /// The running broker process, for its PID and log.
    public var currentProcess: TestProcess? { process.withLock { $0 } }

    /// Starts (or restarts) the broker with its configuration and waits until it says it is running.
    public func start() async throws {
        let mosquitto = try executablePath("mosquitto", package: "mosquitto")
        let started = try TestProcess(name: "mosquitto", executable: mosquitto, arguments: ["-c", configurationFile])
        process.withLock { $0 = started }
        do {
            try await started.waitForLine(containing: " running")
        } catch {
            await started.stop()
            throw error
        }
    }

    /// Kills the broker with SIGKILL (as a crash or power cut would) and waits for it to be gone.
    public func kill() async {
        guard let running = process.withLock({ $0 }) else { return }
        running.signal(SIGKILL)
        _ = try? await running.waitForExit()
    }

    /// Stops the broker with SIGTERM and waits for it to exit.
    public func stop() async {
        await process.withLock({ $0 })?.stop()
    }

    /// Starts a broker, runs `body` with it, and stops the broker however `body` ends.
    ///
    /// - Parameters:
    ///   - listener: how clients connect; a unix socket by default.
    ///   - users: username → password; when not empty, anonymous clients are refused.
    ///   - extraConfiguration: more mosquitto.conf lines, added to the listener's section.
    ///   - persistent: whether the broker keeps retained messages, persistent sessions and their
    ///     queued messages across a ``stop()`` and ``start()`` (in its directory), as a deployed
    ///     broker does.
    public static func with<R>(
        listener: Listener = .unixSocket,
        users: [String: String] = [:],
        extraConfiguration: [String] = [],
        persistent: Bool = false,
        isolation: isolated (any Actor)? = #isolation,
        _ body: (TestBroker) async throws -> R
    ) async throws -> R {
        try await withTemporaryDirectory { directory in
            var lastError: (any Error)?
            // A free port can be taken by another process before mosquitto binds it: try a few.
            for _ in 0..<5 {
                let broker = try await make(
                    listener: listener, users: users, extraConfiguration: extraConfiguration, persistent: persistent,
                    directory: directory)
                do {
                    try await broker.start()
                } catch {
                    // Only a port taken meanwhile is worth another try; anything else (a configuration
                    // that does not load) is reported at once, in mosquitto's words.
                    guard "\(error)".contains("Address already in use") else { throw error }
                    lastError = error
                    continue
                }
                do {
                    let result = try await body(broker)
                    await broker.stop()
                    return result
                } catch {
                    await broker.stop()
                    throw error
                }
            }
            throw lastError ?? TestSupportError("mosquitto did not start")
        }
    }

    private static func make(
        listener: Listener, users: [String: String], extraConfiguration: [String], persistent: Bool,
        directory: String
    ) async throws -> TestBroker {
        var lines = [
            // mosquitto started as root drops to the "mosquitto" user, which cannot use our directory.
            "user \(currentUserName())",
            "persistence \(persistent)",
            "persistence_location \(directory)/",
            "log_dest stderr",
            "log_type error",
            "log_type warning",
            "log_type notice",
            "log_type information",
            "log_timestamp_format %H:%M:%S",
            "per_listener_settings false",
        ]
        let address: BrokerAddress
        switch listener {
        case .unixSocket:
            let socket = "\(directory)/broker.sock"
            lines.append("listener 0 \(socket)")
            address = BrokerAddress(.unix(path: socket))
        case .tcp:
            let port = try freeLoopbackPort()
            lines.append("listener \(port) 127.0.0.1")
            address = BrokerAddress(.tcp(host: "127.0.0.1", port: port))
        case .tls(let certificates, let requireClientCertificate):
            let port = try freeLoopbackPort()
            lines += [
                "listener \(port) 127.0.0.1",
                "cafile \(certificates.caFile)",
                "certfile \(certificates.serverCertificateFile)",
                "keyfile \(certificates.serverKeyFile)",
                "require_certificate \(requireClientCertificate)",
            ]
            address = BrokerAddress(.tls(host: "localhost", port: port))
        case .configured(let tls, let configure):
            let port = try freeLoopbackPort()
            let configured = try configure(directory, port)
            // The test's own user line (a deployment's broker user) replaces ours: mosquitto takes one.
            if configured.contains(where: { $0.hasPrefix("user ") }) { lines.removeFirst() }
            lines += configured
            address = BrokerAddress(tls ? .tls(host: "localhost", port: port) : .tcp(host: "127.0.0.1", port: port))
        }
        lines += extraConfiguration
        switch (listener, users.isEmpty) {
        case (.configured, _):
            break  // The test's own lines decide who may connect.
        case (_, true):
            lines.append("allow_anonymous true")
        case (_, false):
            let passwordFile = "\(directory)/passwords"
            let tool = try executablePath("mosquitto_passwd", package: "mosquitto")
            for (index, (user, password)) in users.sorted(by: { $0.key < $1.key }).enumerated() {
                try await runProgram(tool, (index == 0 ? ["-c"] : []) + ["-b", passwordFile, user, password])
            }
            lines += ["allow_anonymous false", "password_file \(passwordFile)"]
        }
        let configurationFile = "\(directory)/mosquitto.conf"
        try (lines.joined(separator: "\n") + "\n").write(toFile: configurationFile, atomically: true, encoding: .utf8)
        return TestBroker(address: address, directory: directory, configurationFile: configurationFile)
    }

    private static func currentUserName() -> String {
        guard let entry = getpwuid(geteuid()) else { return "root" }
        return String(cString: entry.pointee.pw_name)
    }
}
