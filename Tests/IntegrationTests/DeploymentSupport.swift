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

/// A locked-down fleet broker's files, set up in a test's directory as `deploy/mosquitto/production.conf`'s
/// header says, its commands run as written (paths substituted): the CA and the broker's certificate
/// made on "the machine that keeps the CA" (`ca/`), the broker's files installed in its
/// `/etc/mosquitto` (`etc/mosquitto/`, as Debian's package leaves it), and a password for every
/// account; then a client certificate for `dev-a` and `dev-b`.
struct FleetCredentials {
    /// The accounts: two devices and the roles of `deploy/mosquitto/acl`. `dev-a` stands for the
    /// header's `van-7` (behind `site-1`), `dev-b` for a device elsewhere; `watcher` is a second
    /// board account, for the tests' `mosquitto_sub` observers (one connection per account).
    static let accounts = ["dev-a", "dev-b", "aggregator", "watcher", "operator", "site-1"]

    /// The test's directory: `ca/` (the CA's machine), `etc/mosquitto/` (the broker's), and
    /// `secrets/` (where the header's broker commands ran, holding each account's password alone,
    /// `NAME.password`, as a client's password file).
    let directory: String

    /// The CA's directory, on the CA's machine.
    var certificateAuthority: String { "\(directory)/ca" }
    /// The broker's `/etc/mosquitto`.
    var brokerFiles: String { "\(directory)/etc/mosquitto" }
    var caFile: String { "\(certificateAuthority)/ca.crt" }
    func passwordFile(_ account: String) -> String { "\(directory)/secrets/\(account).password" }
    func certificateFile(_ account: String) -> String { "\(certificateAuthority)/\(account).crt" }
    func keyFile(_ account: String) -> String { "\(certificateAuthority)/\(account).key" }

    func password(_ account: String) throws -> String {
        try String(contentsOfFile: passwordFile(account), encoding: .utf8).trimmingCharacters(in: .newlines)
    }

    static let script = DeploymentFiles.path("deploy/mosquitto/make-credentials.sh")

    /// The shell commands of production.conf's header (its indented lines), with the test's paths:
    /// `systemctl` is left out (no systemd here), the broker's host names are `localhost` and
    /// 127.0.0.1, the device `van-7` is `dev-a` and `van-8` a device of no test (`dev-c`).
    func headerCommands() throws -> (caMachine: [String], broker: [String]) {
        let text = try DeploymentFiles.text("deploy/mosquitto/production.conf")
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        guard let brokerStep = lines.firstIndex(where: { $0.hasPrefix("# 2. On the broker") }) else {
            throw TestSupportError("production.conf no longer has its step 2 (On the broker): update the test")
        }
        func commands(_ range: ArraySlice<String>) -> [String] {
            range.filter { $0.hasPrefix("#      ") && !$0.contains("systemctl ") }.map { line in
                var command = String(line.dropFirst(7))
                for (pattern, replacement) in [
                    ("deploy/mosquitto/", "\(DeploymentFiles.root)/deploy/mosquitto/"),
                    ("~/myeline-ca", certificateAuthority), ("/etc/mosquitto/", "\(brokerFiles)/"),
                    ("/etc/systemd/system/", "\(directory)/etc/systemd/system/"),
                    ("broker.example.net", "localhost 127.0.0.1"), ("van-7", "dev-a"), ("van-8", "dev-c"),
                ] {
                    command = command.replacingOccurrences(of: pattern, with: replacement)
                }
                return command
            }
        }
        return (commands(lines[..<brokerStep]), commands(lines[brokerStep...]))
    }

    /// Runs `commands` with bash in `directory`, stopping at the first that fails.
    static func run(_ commands: [String], in directory: String) async throws {
        try await runProgram(
            "/bin/bash", ["-euo", "pipefail", "-c", (["cd \(directory)"] + commands).joined(separator: "\n")])
    }

    static func make(in directory: String) async throws -> FleetCredentials {
        let credentials = FleetCredentials(directory: directory)
        let manager = FileManager.default
        // The broker reads the files as the user mosquitto: the test's directory is its /.
        try manager.setAttributes([.posixPermissions: 0o755], ofItemAtPath: directory)
        // What Debian's mosquitto package makes.
        for path in ["etc", "etc/mosquitto", "etc/mosquitto/certs", "etc/mosquitto/conf.d"] {
            try manager.createDirectory(
                atPath: "\(directory)/\(path)", withIntermediateDirectories: true,
                attributes: [.posixPermissions: 0o755])
        }
        try manager.createDirectory(atPath: "\(directory)/secrets", withIntermediateDirectories: true)
        let (caMachine, broker) = try credentials.headerCommands()
        try await run(caMachine, in: directory)
        // "then copy ... to the broker".
        for file in ["ca.crt", "crl.pem", "server.crt", "server.key"] {
            try manager.copyItem(
                atPath: "\(credentials.certificateAuthority)/\(file)", toPath: "\(directory)/secrets/\(file)")
        }
        try await run(broker, in: "\(directory)/secrets")
        try credentials.checkInstalledFiles()
        let accounts = "\(credentials.brokerFiles)/myeline"
        try await runProgram(script, ["password", "\(accounts)/passwords", "dev-b", credentials.passwordFile("dev-b")])
        try await runProgram(script, ["board", accounts, "watcher", credentials.passwordFile("watcher")])
        for device in ["dev-a", "dev-b"] {
            try await runProgram(script, ["client", credentials.certificateAuthority, device])
        }
        return credentials
    }

    /// Checks what the header's commands left on the broker: the checkout's production.conf; the
    /// checkout's acl, with make-credentials.sh's blocks for the header's accounts identical to the
    /// shipped ones; and no CA key. (That the user mosquitto can read them, the broker shows.)
    func checkInstalledFiles() throws {
        let installed = try String(contentsOfFile: "\(brokerFiles)/conf.d/myeline.conf", encoding: .utf8)
        guard installed == (try DeploymentFiles.text("deploy/mosquitto/production.conf")) else {
            throw TestSupportError("the installed myeline.conf is not deploy/mosquitto/production.conf")
        }
        let acl = try String(contentsOfFile: "\(brokerFiles)/myeline/acl", encoding: .utf8)
        let shipped = try DeploymentFiles.text(
            "deploy/mosquitto/acl", replacing: [("van-7", "dev-a"), ("van-8", "dev-c")])
        guard acl == shipped else {
            throw TestSupportError(
                "make-credentials.sh's ACL blocks differ from deploy/mosquitto/acl's:\n\(acl)\n---\n\(shipped)")
        }
        let files = try FileManager.default.subpathsOfDirectory(atPath: "\(directory)/etc")
        guard !files.contains(where: { $0.hasSuffix("ca.key") }) else {
            throw TestSupportError("the CA key is on the broker: \(files)")
        }
    }

    /// The `mosquitto.conf` lines of a broker that runs the installed files as Debian's package
    /// would (an `include_dir` of conf.d, as the user mosquitto when the tests run as root), with
    /// the test's `port` on 127.0.0.1 in place of 8883 and these `replacements` in
    /// production.conf; with `certificateIdentity`, the file's optional client-certificate lines
    /// are turned on.
    func brokerConfiguration(
        directory brokerDirectory: String, port: Int, certificateIdentity: Bool, replacements: [(String, String)],
        asMosquitto: Bool = true
    ) throws -> [String] {
        var replacements = replacements + [("\nlistener 8883\n", "\nlistener \(port) 127.0.0.1\n")]
        if certificateIdentity {
            replacements += [
                ("#require_certificate true", "require_certificate true"),
                ("#use_identity_as_username true", "use_identity_as_username true"), ("#crlfile ", "crlfile "),
            ]
        }
        let installed = "\(brokerFiles)/conf.d/myeline.conf"
        let configuration = try DeploymentFiles.text(
            "deploy/mosquitto/production.conf",
            replacing: [("/etc/mosquitto/", "\(brokerFiles)/")] + replacements)
        try configuration.write(toFile: installed, atomically: true, encoding: .utf8)
        var lines = ["include_dir \(brokerFiles)/conf.d"]
        if asMosquitto, let user = Self.brokerUser {
            // Debian's unit starts mosquitto as root, and it runs as mosquitto, which must be able to
            // read every file it is given and write its persistence (in the broker's directory).
            lines.insert("user mosquitto", at: 0)
            guard chown(brokerDirectory, user, gid_t.max) == 0 else {
                throw TestSupportError(
                    "cannot give \(brokerDirectory) to mosquitto: \(String(cString: strerror(errno)))")
            }
        }
        return lines
    }

    /// The uid of the user mosquitto when the tests run as root and it exists (Debian's package
    /// makes it); nil otherwise, when the broker runs as the tests' user.
    static var brokerUser: uid_t? {
        guard geteuid() == 0, let entry = getpwnam("mosquitto") else { return nil }
        return entry.pointee.pw_uid
    }

    /// Runs `body` with credentials and a broker on them, stopped however `body` ends.
    ///
    /// - Parameter replacements: text of production.conf to change, such as a lower
    ///   `max_connections` (each pattern must occur).
    /// - Parameter asMosquitto: whether the broker runs as the user mosquitto (when the tests run
    ///   as root), as Debian's does; else as the tests' user.
    static func withLockedBroker<R>(
        certificateIdentity: Bool = false, replacing replacements: [(String, String)] = [], asMosquitto: Bool = true,
        isolation: isolated (any Actor)? = #isolation, _ body: (TestBroker, FleetCredentials) async throws -> R
    ) async throws -> R {
        try await withTemporaryDirectory { directory in
            let credentials = try await make(in: directory)
            return try await TestBroker.with(
                listener: .configured(tls: true) { brokerDirectory, port in
                    try credentials.brokerConfiguration(
                        directory: brokerDirectory, port: port, certificateIdentity: certificateIdentity,
                        replacements: replacements, asMosquitto: asMosquitto)
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
