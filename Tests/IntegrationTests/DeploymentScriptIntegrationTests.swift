import Foundation
import TestSupport
import Testing

/// The systemd units of `deploy/systemd` checked by Debian's `systemd-analyze`, and the deployment
/// scripts by shellcheck. `systemd-analyze verify` and `security --offline=true` read unit files
/// without a running systemd, so these run in a container too.
@Suite(.tags(.integration), .timeLimit(.minutes(2)))
struct SystemdUnitIntegrationTests {
    static let units = ["myeline-agent.service", "myeline-fleet-log.service"]

    /// Runs `body` with `unit` written to a temporary directory, its binaries pointing at this build.
    static func withUnit<R>(_ unit: String, _ body: (String) async throws -> R) async throws -> R {
        let built = (try builtProductPath("myeline-agent") as NSString).deletingLastPathComponent
        return try await withTemporaryDirectory { directory in
            let text = try DeploymentFiles.text("deploy/systemd/\(unit)", replacing: [("/usr/local/bin/", "\(built)/")])
            let path = "\(directory)/\(unit)"
            try text.write(toFile: path, atomically: true, encoding: .utf8)
            return try await body(path)
        }
    }

    @Test(arguments: units)
    func passesSystemdAnalyzeVerify(unit: String) async throws {
        let analyze = try executablePath("systemd-analyze", package: "systemd")
        try await Self.withUnit(unit) { path in
            // Fails on a non-zero exit; an unknown key or a bad value is only a warning: none allowed.
            let output = try await runProgram(analyze, ["verify", path])
            #expect(output.isEmpty, "systemd-analyze verify \(unit):\n\(output)")
        }
    }

    /// The exposure that docs/raspberry-pi.md reports: any loosening of the sandbox shows here.
    @Test(arguments: units)
    func securityExposureIsTheDocumentedOne(unit: String) async throws {
        let analyze = try executablePath("systemd-analyze", package: "systemd")
        let output = try await Self.withUnit(unit) { path in
            try await runProgram(analyze, ["security", "--offline=true", "--no-pager", path])
        }
        let overall = try #require(output.split(separator: "\n").first { $0.contains("Overall exposure level") })
        #expect(overall.contains(": 1.2 OK"), "\(overall)")
        let guide = try DeploymentFiles.text("docs/raspberry-pi.md")
        #expect(guide.contains("`\(unit)` | 1.2 OK"))
    }

    /// Debian's mosquitto.service with `deploy/mosquitto/mosquitto.service.d/myeline.conf` as its
    /// drop-in, verified by `systemd-analyze` from a unit path of their own (`SYSTEMD_UNIT_PATH`);
    /// `replacing` changes the drop-in's text first. Returns what `systemd-analyze verify` printed.
    static func verifyMosquittoDropIn(replacing replacements: [(String, String)] = []) async throws -> String {
        let analyze = try executablePath("systemd-analyze", package: "systemd")
        let unit = "/lib/systemd/system/mosquitto.service"
        guard FileManager.default.fileExists(atPath: unit) else {
            throw TestSupportError("\(unit) is missing: apt-get install mosquitto")
        }
        return try await withTemporaryDirectory { directory in
            try FileManager.default.createDirectory(
                atPath: "\(directory)/mosquitto.service.d", withIntermediateDirectories: true)
            try FileManager.default.copyItem(atPath: unit, toPath: "\(directory)/mosquitto.service")
            try DeploymentFiles.text("deploy/mosquitto/mosquitto.service.d/myeline.conf", replacing: replacements)
                .write(toFile: "\(directory)/mosquitto.service.d/myeline.conf", atomically: true, encoding: .utf8)
            let process = try TestProcess(
                name: "systemd-analyze", executable: analyze, arguments: ["verify", "mosquitto.service"],
                environment: ["PATH": "/usr/bin:/bin:/usr/sbin:/sbin", "SYSTEMD_UNIT_PATH": "\(directory):"])
            defer { process.signal(SIGKILL) }
            let status = try await withDeadline(.seconds(60), what: "systemd-analyze verify", process: process) {
                try await process.waitForExit()
            }
            #expect(status == 0, "\(process.output)")
            return process.output
        }
    }

    /// Issue 23, finding 3: Debian's unit sets no `LimitNOFILE`, and production.conf no
    /// `max_connections`. The drop-in loads without a word (a broken value would be named, as the
    /// second check shows), and leaves at least twice production.conf's `max_connections` in
    /// descriptors, so that a flood meets the cap before the broker runs out (BrokerAttackIntegrationTests).
    @Test func theMosquittoDropInLoadsAndLeavesRoomAboveMaxConnections() async throws {
        #expect(try await Self.verifyMosquittoDropIn() == "")
        let broken = try await Self.verifyMosquittoDropIn(replacing: [("LimitNOFILE=65536", "LimitNOFILE=many")])
        #expect(broken.contains("myeline.conf") && broken.contains("Failed to parse resource value"), "\(broken)")
        func value(_ file: String, _ key: String) throws -> Int {
            let line = try DeploymentFiles.text(file).split(separator: "\n").first { $0.hasPrefix(key) }
            return try #require(line.flatMap { Int($0.dropFirst(key.count)) }, "\(key) in \(file)")
        }
        let descriptors = try value("deploy/mosquitto/mosquitto.service.d/myeline.conf", "LimitNOFILE=")
        let connections = try value("deploy/mosquitto/production.conf", "max_connections ")
        #expect(descriptors >= 2 * connections, "LimitNOFILE \(descriptors), max_connections \(connections)")
    }

    /// The firewall rule docs/security.md gives against one address holding the broker's
    /// connections: `nft -c` parses and checks it without loading it.
    @Test func theConnectionLimitRulesetIsValid() async throws {
        let nft = try executablePath("nft", package: "nftables")
        let output = try await runProgram(
            nft, ["-c", "-f", DeploymentFiles.path("deploy/mosquitto/connection-limit.nft")])
        #expect(output.isEmpty, "\(output)")
        // The port it limits is production.conf's listener's.
        let listener = try #require(
            try DeploymentFiles.text("deploy/mosquitto/production.conf").split(separator: "\n")
                .first { $0.hasPrefix("listener ") })
        let port = listener.dropFirst("listener ".count)
        let rules = try DeploymentFiles.text("deploy/mosquitto/connection-limit.nft").split(separator: "\n")
            .filter { $0.contains("ct count over") }
        #expect(rules.count == 2 && rules.allSatisfy { $0.contains("tcp dport \(port) ") }, "\(rules)")
    }

    @Test(arguments: [
        "deploy/install.sh", "deploy/mosquitto/make-credentials.sh", "scripts/install-dependencies",
        "scripts/demo", "scripts/test", "scripts/fuzz", "scripts/sanitize", "scripts/release-check", ".ci/run",
    ])
    func scriptIsShellcheckClean(script: String) async throws {
        let shellcheck = try executablePath("shellcheck", package: "shellcheck")
        let output = try await runProgram(shellcheck, [DeploymentFiles.path(script)])
        #expect(output.isEmpty, "\(output)")
    }
}

/// `deploy/install.sh` in a private root directory (`--root`), never on this machine's system:
/// idempotent, and `--uninstall` leaves the root exactly as it was.
@Suite(.tags(.integration), .timeLimit(.minutes(2)))
struct InstallScriptIntegrationTests {
    /// What a root directory holds: each path with its mode, owner and content. shadow's own
    /// backups (`etc/passwd-` and so on, rewritten by useradd and userdel) are left out.
    static func snapshot(_ root: String) throws -> [String: String] {
        var entries: [String: String] = [:]
        let manager = FileManager.default
        for relative in try manager.subpathsOfDirectory(atPath: root)
        where !relative.hasPrefix("etc/") || !relative.hasSuffix("-") {
            let path = "\(root)/\(relative)"
            let attributes = try manager.attributesOfItem(atPath: path)
            var entry =
                "\(attributes[.posixPermissions] ?? "") \(attributes[.ownerAccountID] ?? "") \(attributes[.groupOwnerAccountID] ?? "")"
            if attributes[.type] as? FileAttributeType == .typeRegular {
                entry += " \(try Data(contentsOf: URL(fileURLWithPath: path)).base64EncodedString())"
            }
            entries[relative] = entry
        }
        return entries
    }

    /// A minimal root: the user databases (root and nogroup only), an unrelated unit and program
    /// that must survive, and optionally gpsd.
    static func makeRoot(_ root: String, gpsd: Bool) throws {
        let manager = FileManager.default
        for directory in ["etc/systemd/system", "usr/local/bin", "usr/sbin"] {
            try manager.createDirectory(atPath: "\(root)/\(directory)", withIntermediateDirectories: true)
        }
        let files = [
            "etc/passwd":
                "root:x:0:0:root:/root:/bin/bash\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n",
            "etc/group": "root:x:0:\nnogroup:x:65534:\n", "etc/shadow": "root:*:19000:0:99999:7:::\n",
            "etc/gshadow": "root:*::\nnogroup:*::\n",
            "etc/systemd/system/other.service": "[Service]\nExecStart=/bin/true\n",
            "usr/local/bin/other-tool": "#!/bin/sh\n",
        ]
        for (path, text) in files { try text.write(toFile: "\(root)/\(path)", atomically: true, encoding: .utf8) }
        if gpsd {
            try "#!/bin/sh\n".write(toFile: "\(root)/usr/sbin/gpsd", atomically: true, encoding: .utf8)
            try manager.setAttributes([.posixPermissions: 0o755], ofItemAtPath: "\(root)/usr/sbin/gpsd")
        }
    }

    /// Two stand-ins for the built binaries (the script copies whatever it is given).
    static func makeBinaries(_ directory: String) throws -> String {
        let from = "\(directory)/release"
        try FileManager.default.createDirectory(atPath: from, withIntermediateDirectories: true)
        for binary in ["myeline-agent", "myeline-aggregator"] {
            try "#!/bin/sh\necho \(binary)\n".write(toFile: "\(from)/\(binary)", atomically: true, encoding: .utf8)
            try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: "\(from)/\(binary)")
        }
        return from
    }

    struct Run {
        var status: Int32
        var output: String
    }

    static func install(_ arguments: [String], as user: [String] = []) async throws -> Run {
        let script = DeploymentFiles.path("deploy/install.sh")
        let executable = user.isEmpty ? script : try executablePath("setpriv", package: "util-linux")
        let process = try TestProcess(
            name: "install.sh", executable: executable, arguments: user + (user.isEmpty ? [] : [script]) + arguments)
        defer { process.signal(SIGKILL) }
        let status = try await withDeadline(.seconds(60), what: "install.sh to exit", process: process) {
            try await process.waitForExit()
        }
        return Run(status: status, output: process.output)
    }

    @Test func installTwiceThenUninstallLeavesTheRootAsItWas() async throws {
        try await withTemporaryDirectory { directory in
            let root = "\(directory)/root"
            try Self.makeRoot(root, gpsd: true)
            let from = try Self.makeBinaries(directory)
            let before = try Self.snapshot(root)

            let first = try await Self.install(["--root", root, "--from", from, "--with-fleet-log"])
            #expect(first.status == 0, "\(first.output)")
            #expect(first.output.contains("created system user myeline"))
            #expect(first.output.contains("systemctl enable --now myeline-agent"))
            let passwd = try String(contentsOfFile: "\(root)/etc/passwd", encoding: .utf8)
            #expect(passwd.contains(":/nonexistent:/usr/sbin/nologin\n") && passwd.contains("\nmyeline:x:"))
            let unit = try String(contentsOfFile: "\(root)/etc/systemd/system/myeline-agent.service", encoding: .utf8)
            #expect(unit.contains("ExecStart=/usr/local/bin/myeline-agent run --config /etc/myeline/agent.yaml"))
            #expect(FileManager.default.fileExists(atPath: "\(root)/etc/systemd/system/myeline-fleet-log.service"))
            #expect(
                try String(contentsOfFile: "\(root)/etc/myeline/agent.yaml", encoding: .utf8)
                    == DeploymentFiles.text("config/agent.example.yaml"))
            let state = try FileManager.default.attributesOfItem(atPath: "\(root)/var/lib/myeline")
            #expect(state[.posixPermissions] as? Int == 0o700)
            #expect(state[.ownerAccountID] as? Int != 0)
            #expect(FileManager.default.isExecutableFile(atPath: "\(root)/usr/local/bin/myeline-agent"))
            let installed = try Self.snapshot(root)

            // Again: nothing changes, and nothing is reported as installed.
            let second = try await Self.install(["--root", root, "--from", from, "--with-fleet-log"])
            #expect(second.status == 0, "\(second.output)")
            #expect(!second.output.contains("installed /"), "\(second.output)")
            #expect(try Self.snapshot(root) == installed)

            let removal = try await Self.install(["--root", root, "--uninstall"])
            #expect(removal.status == 0, "\(removal.output)")
            let after = try Self.snapshot(root)
            #expect(
                after == before,
                "left behind: \(Set(after.keys).subtracting(before.keys).sorted()); changed: \(before.keys.filter { after[$0] != before[$0] }.sorted())"
            )
        }
    }

    /// A real executable is installed without its symbols (a third of the agent's size), still
    /// runs, and a second install finds it unchanged; a script stand-in is copied as it is.
    @Test func theAgentIsInstalledStrippedAndRuns() async throws {
        try await withTemporaryDirectory { directory in
            let root = "\(directory)/root"
            try Self.makeRoot(root, gpsd: true)
            let from = try Self.makeBinaries(directory)
            let built = try builtProductPath("myeline-agent")
            try FileManager.default.removeItem(atPath: "\(from)/myeline-agent")
            try FileManager.default.copyItem(atPath: built, toPath: "\(from)/myeline-agent")
            let first = try await Self.install(["--root", root, "--from", from])
            #expect(first.status == 0, "\(first.output)")
            let installed = "\(root)/usr/local/bin/myeline-agent"
            let readelf = try executablePath("readelf", package: "binutils")
            #expect(try await runProgram(readelf, ["-S", "--wide", built]).contains(".symtab"))
            #expect(!(try await runProgram(readelf, ["-S", "--wide", installed]).contains(".symtab")))
            let size = { (path: String) in try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int ?? 0 }
            #expect(try size(installed) < size(built))
            #expect(try await runProgram(installed, ["--version"]) == (try await runProgram(built, ["--version"])))
            #expect(
                try String(contentsOfFile: "\(root)/usr/local/bin/myeline-aggregator", encoding: .utf8)
                    == "#!/bin/sh\necho myeline-aggregator\n")
            let second = try await Self.install(["--root", root, "--from", from])
            #expect(second.status == 0 && !second.output.contains("installed /"), "\(second.output)")
        }
    }

    @Test func uninstallKeepsAConfigurationTheOperatorEdited() async throws {
        try await withTemporaryDirectory { directory in
            let root = "\(directory)/root"
            try Self.makeRoot(root, gpsd: true)
            let from = try Self.makeBinaries(directory)
            #expect(try await Self.install(["--root", root, "--from", from]).status == 0)
            let configuration = "\(root)/etc/myeline/agent.yaml"
            try "device:\n  id: van-7\n".write(toFile: configuration, atomically: true, encoding: .utf8)
            let removal = try await Self.install(["--root", root, "--uninstall"])
            #expect(removal.status == 0, "\(removal.output)")
            #expect(removal.output.contains("kept /etc/myeline/agent.yaml"))
            #expect(try String(contentsOfFile: configuration, encoding: .utf8) == "device:\n  id: van-7\n")
            #expect(!FileManager.default.fileExists(atPath: "\(root)/usr/local/bin/myeline-agent"))
            #expect(!(try String(contentsOfFile: "\(root)/etc/passwd", encoding: .utf8).contains("myeline")))
        }
    }

    @Test func aMissingGpsdIsNamedWithItsPackageAndNothingIsInstalled() async throws {
        try await withTemporaryDirectory { directory in
            let root = "\(directory)/root"
            try Self.makeRoot(root, gpsd: false)
            let before = try Self.snapshot(root)
            let run = try await Self.install(["--root", root, "--from", try Self.makeBinaries(directory)])
            #expect(run.status == 1)
            #expect(run.output.contains("gpsd is not installed: apt-get install gpsd gpsd-clients"), "\(run.output)")
            #expect(try Self.snapshot(root) == before)
        }
    }

    @Test func itRefusesToRunWithoutRoot() async throws {
        // As nobody when the tests run as root (as CI does); else as the user running them.
        let user = geteuid() == 0 ? ["--reuid=65534", "--regid=65534", "--clear-groups", "--"] : []
        let run = try await Self.install([], as: user)
        #expect(run.status == 1)
        #expect(run.output.contains("must be run as root"), "\(run.output)")
    }
}
