import Foundation
import MQTT
import Testing
import TestSupport

/// The deployment files of this checkout (deploy/, docs/, config/), read as they are, so that the
/// tests check the very files an operator installs.
enum DeploymentFiles {
    /// The checkout's root directory.
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path

    /// The absolute path of `relative` in the checkout.
    static func path(_ relative: String) -> String { "\(root)/\(relative)" }

    /// The text of `relative`, with every occurrence of each pattern replaced by its replacement.
    ///
    /// - Throws: `TestSupportError` when a pattern does not occur, so that a changed file cannot
    ///   keep a production path or port in a test.
    static func text(_ relative: String, replacing replacements: [(String, String)] = []) throws -> String {
        var text = try String(contentsOfFile: path(relative), encoding: .utf8)
        for (pattern, replacement) in replacements {
            guard text.contains(pattern) else {
                throw TestSupportError("\(relative) no longer contains \"\(pattern)\": update the test")
            }
            text = text.replacingOccurrences(of: pattern, with: replacement)
        }
        return text
    }
}

/// The credentials of a locked-down fleet broker, made by `deploy/mosquitto/make-credentials.sh` in
/// a test's directory: a CA, the broker's certificate for localhost, a client certificate for
/// `dev-a`, and a password for every account.
struct FleetCredentials {
    /// The accounts: two devices and the roles of `deploy/mosquitto/acl`.
    static let accounts = ["dev-a", "dev-b", "aggregator", "operator", "site-1"]

    /// Where `/etc/mosquitto/` of the deployment files is: `certs/`, `myeline/passwords`, and
    /// `secrets/NAME.password` (each account's password alone, as a client's password file).
    let directory: String

    var caFile: String { "\(directory)/certs/ca.crt" }
    func passwordFile(_ account: String) -> String { "\(directory)/secrets/\(account).password" }
    func certificateFile(_ account: String) -> String { "\(directory)/certs/\(account).crt" }
    func keyFile(_ account: String) -> String { "\(directory)/certs/\(account).key" }

    func password(_ account: String) throws -> String {
        try String(contentsOfFile: passwordFile(account), encoding: .utf8).trimmingCharacters(in: .newlines)
    }

    static func make(in directory: String) async throws -> FleetCredentials {
        let script = DeploymentFiles.path("deploy/mosquitto/make-credentials.sh")
        try FileManager.default.createDirectory(atPath: "\(directory)/secrets", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: "\(directory)/myeline", withIntermediateDirectories: true)
        try await runProgram(script, ["ca", "\(directory)/certs"])
        try await runProgram(script, ["server", "\(directory)/certs", "localhost", "127.0.0.1"])
        try await runProgram(script, ["client", "\(directory)/certs", "dev-a"])
        for account in accounts {
            try await runProgram(
                script,
                ["password", "\(directory)/myeline/passwords", account, "\(directory)/secrets/\(account).password"])
        }
        return FleetCredentials(directory: directory)
    }

    /// The `mosquitto.conf` lines of a broker running `deploy/mosquitto/production.conf` and
    /// `deploy/mosquitto/acl` as Debian's package would (an `include_dir` of conf.d), with these
    /// credentials' paths and the test's `port` on 127.0.0.1 substituted; with
    /// `certificateIdentity`, the file's optional client-certificate lines are turned on.
    func brokerConfiguration(directory brokerDirectory: String, port: Int, certificateIdentity: Bool) throws
        -> [String]
    {
        var replacements = [
            ("/etc/mosquitto/certs/", "\(directory)/certs/"), ("/etc/mosquitto/myeline/", "\(directory)/myeline/"),
            ("\nlistener 8883\n", "\nlistener \(port) 127.0.0.1\n"),
        ]
        if certificateIdentity {
            replacements += [
                ("#require_certificate true", "require_certificate true"),
                ("#use_identity_as_username true", "use_identity_as_username true"),
            ]
        }
        let configuration = try DeploymentFiles.text("deploy/mosquitto/production.conf", replacing: replacements)
        try DeploymentFiles.text("deploy/mosquitto/acl").write(
            toFile: "\(directory)/myeline/acl", atomically: true, encoding: .utf8)
        try FileManager.default.createDirectory(atPath: "\(brokerDirectory)/conf.d", withIntermediateDirectories: true)
        try configuration.write(toFile: "\(brokerDirectory)/conf.d/myeline.conf", atomically: true, encoding: .utf8)
        return ["include_dir \(brokerDirectory)/conf.d"]
    }

    /// Runs `body` with credentials and a broker on them, stopped however `body` ends.
    static func withLockedBroker<R>(
        certificateIdentity: Bool = false, isolation: isolated (any Actor)? = #isolation,
        _ body: (TestBroker, FleetCredentials) async throws -> R
    ) async throws -> R {
        try await withTemporaryDirectory { directory in
            let credentials = try await make(in: directory)
            return try await TestBroker.with(
                listener: .configured(tls: true) { brokerDirectory, port in
                    try credentials.brokerConfiguration(
                        directory: brokerDirectory, port: port, certificateIdentity: certificateIdentity)
                }
            ) { broker in try await body(broker, credentials) }
        }
    }

    /// A client configuration for `broker` as `account` (with its password; none for `nil`),
    /// trusting this CA; with `certificate`, presenting `account`'s client certificate instead.
    func client(
        _ broker: TestBroker, _ account: String?, certificate: Bool = false,
        protocolVersion: MQTTProtocolVersion = .v5
    ) throws -> MQTTConfiguration {
        var configuration = MQTTConfiguration(
            broker: broker.address, clientID: "\(account ?? "anonymous")-\(UUID().uuidString.prefix(8))",
            protocolVersion: protocolVersion, reconnect: MQTTClientIntegrationTests.quickBackoff)
        configuration.tls = MQTTTLSConfiguration(caFile: caFile)
        if let account, certificate {
            configuration.tls = MQTTTLSConfiguration(
                caFile: caFile, certificateFile: certificateFile(account), keyFile: keyFile(account))
        } else if let account {
            configuration.credentials = MQTTCredentials(username: account, password: try password(account))
        }
        return configuration
    }

    /// The `MYELINE_*` variables that connect the agent or the aggregator to `broker` as `account`.
    func environment(_ broker: TestBroker, _ account: String) -> [String: String] {
        [
            "MYELINE_MQTT_BROKER": "\(broker.address)", "MYELINE_MQTT_USERNAME": account,
            "MYELINE_MQTT_PASSWORD_FILE": passwordFile(account), "MYELINE_MQTT_TLS_CA_FILE": caFile,
        ]
    }

    /// The `mosquitto_sub` arguments that reach `broker` as `account`.
    func mosquittoArguments(_ broker: TestBroker, _ account: String) throws -> [String] {
        guard case .tls(let host, let port) = broker.address.transport else {
            throw TestSupportError("the locked-down broker listens with TLS")
        }
        return ["-h", host, "-p", "\(port)", "--cafile", caFile, "-u", account, "-P", try password(account)]
    }
}
