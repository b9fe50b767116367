import Foundation
import LiveActivity
import MyelineWire
import Testing
import TestSupport

/// The README's first command, `scripts/demo`, as a user runs it, in its `--print` mode (every
/// message the fleet publishes, instead of the board) with this build's programs (`--bin`): the
/// seven agents publish, two of them through real gpsds, one is paused, one stops, one goes offline
/// by its will; an interrupt then stops every process the demo started and removes its directory.
/// And the board itself in tmux: `q` stops everything and says so (issue 17's finding 11: every
/// name was the device id, PROG, ETA and ALERT were empty, the replays had no speed, the gpsd
/// receivers' clocks were off by hours, `q` took 10 s in silence, and gpsfake's sockets stayed in /tmp).
@Suite(.tags(.integration), .timeLimit(.minutes(3)))
struct DemoIntegrationTests {
    /// One message as `mosquitto_sub -v` prints it: the topic, a space, the payload.
    struct Line {
        var topic: String
        var payload: String

        init?(_ line: some StringProtocol) {
            guard line.hasPrefix("myeline/"), let space = line.firstIndex(of: " ") else { return nil }
            (topic, payload) = (String(line[..<space]), String(line[line.index(after: space)...]))
        }

        var device: String { String(topic.split(separator: "/")[1]) }

        func envelope() -> ActivityEnvelope<LocationActivityAttributes>? {
            guard topic.contains("/activities/"), !topic.hasSuffix("/track") else { return nil }
            return try? WireCodec.decode(ActivityEnvelope<LocationActivityAttributes>.self, from: Data(payload.utf8))
        }

        func status() -> StatusMessage? {
            guard topic.hasSuffix("/status") else { return nil }
            return try? WireCodec.decode(StatusMessage.self, from: Data(payload.utf8))
        }
    }

    static let devices = ["gps-1", "gps-2", "van-7", "truck-2", "bike-4", "taxi-5", "ghost-9"]

    /// `scripts/demo ARGUMENTS` with this build's programs (`--bin`).
    static func demo(_ arguments: [String]) throws -> TestProcess {
        let bin = URL(fileURLWithPath: try builtProductPath("myeline-agent")).deletingLastPathComponent().path
        return try TestProcess(
            name: "scripts/demo", executable: executablePath("bash", package: "bash"),
            arguments: [DeploymentFiles.path("scripts/demo")] + arguments + ["--bin", bin])
    }

    /// Kills the demo, what it started (`started`, taken earlier) and whatever runs below it now,
    /// and removes its directory (`work`, once announced), which a killed demo cannot.
    static func stopAll(_ demo: TestProcess, _ started: [ProcessEntry], work: String?) {
        for process in started + ProcessEntry.descendants(of: demo.pid) where process.isAlive {
            Glibc.kill(process.pid, SIGKILL)
        }
        demo.signal(SIGKILL)
        if let work, work.hasPrefix("/tmp/myeline-demo-") { try? FileManager.default.removeItem(atPath: work) }
    }

    /// The directory the demo says holds its broker's socket and logs.
    static func workDirectory(_ demo: TestProcess) async throws -> String {
        let announcement = try await demo.waitForLine(containing: "demo: the broker's socket and every log are in")
        return String(try #require(announcement.split(separator: " ").last))
    }

    @Test(.tags(.slow)) func theDemoRunsTheFleetAndStopsEverythingItStarted() async throws {
        let demo = try Self.demo(["--print"])
        // However the test ends, nothing the demo started outlives it.
        var started: [ProcessEntry] = []
        var announced: String?
        defer { Self.stopAll(demo, started, work: announced) }
        let work = try await Self.workDirectory(demo)
        announced = work

        // The demo's last scripted event, 40 s in: ghost-9 killed, offline by its will.
        try await demo.waitForLine(timeout: .seconds(120), description: "ghost-9's will") { line in
            Line(line).flatMap { $0.status() }.map { $0.device.rawValue == "ghost-9" && $0.state == .offline } ?? false
        }
        let lines = demo.output.split(separator: "\n").compactMap(Line.init)
        let envelopes = lines.compactMap { $0.envelope() }
        for device in Self.devices {
            #expect(
                lines.contains { $0.device == device && $0.status()?.state == .online }, "\(device) online")
            #expect(
                envelopes.contains { $0.header.device.rawValue == device && $0.content.state.latitude != nil },
                "\(device) publishes its position")
        }
        #expect(
            envelopes.contains { $0.header.device.rawValue == "bike-4" && $0.content.state.paused }, "bike-4 paused")
        #expect(envelopes.contains { $0.header.device.rawValue == "taxi-5" && $0.header.event == .end }, "taxi-5 ended")
        #expect(
            !envelopes.contains { $0.header.device.rawValue == "van-7" && $0.header.event == .end }, "van-7 goes on")
        // Names, vehicles and drivers; a destination whose progress moves; alerts; speed and course.
        for device in Self.devices {
            let attributes = try #require(envelopes.first { $0.header.device.rawValue == device }?.attributes)
            #expect(attributes.name != device && attributes.vehicle != nil && attributes.driver != nil, "\(device)")
        }
        let van = envelopes.filter { $0.header.device.rawValue == "van-7" }
        #expect(van.first?.attributes.destination?.name == "Višnjan depot")
        #expect(Set(van.compactMap(\.content.state.progress)).count > 1, "van-7's progress moves")
        #expect(van.contains { $0.content.state.speed != nil && $0.content.state.course != nil }, "a replay's speed")
        let alerts = Set(envelopes.compactMap { $0.alert.map { "\($0.title)" } })
        #expect(alerts.isSuperset(of: ["Overspeed", "Left yard"]), "\(alerts)")
        // The gpsd receivers play at their pace: their agents' clocks agree with them.
        #expect(!lines.contains { $0.status()?.clockOffset != nil }, "no clock-offset")

        // Ctrl-C: the demo stops what it started, by PID, and removes its directory.
        started = ProcessEntry.descendants(of: demo.pid)
        let commands = started.map(\.command)
        #expect(commands.filter { $0 == "myeline-agent" }.count == 6, "six agents left running: \(started)")
        #expect(commands.filter { $0 == "gpsd" }.count == 2, "two gpsds: \(started)")
        #expect(commands.contains("mosquitto") && commands.contains("mosquitto_sub"), "\(started)")
        demo.signal(SIGINT)
        #expect(try await demo.waitForExit() == 130)
        // The demo returns only once what it started has ended.
        #expect(started.filter(\.isAlive).isEmpty, "still running: \(started.filter(\.isAlive))")
        #expect(!FileManager.default.fileExists(atPath: work), "\(work) removed")
        #expect(demo.output.contains("demo: stopped; removed \(work)"))
        for gpsfake in started where gpsfake.command == "gpsfake" {
            #expect(!FileManager.default.fileExists(atPath: "/tmp/gpsfake-\(gpsfake.pid).sock"), "nothing left in /tmp")
        }
    }

    /// The README's `scripts/demo --map`, its map read in Debian's headless Chromium once every state
    /// the demo scripts is on it: the seven drives and receivers located, van-7's overspeed and
    /// truck-2's geofence alerts, bike-4 paused, taxi-5 ended, ghost-9 offline. Its screenshot is
    /// docs/images/web-map.png (docs/web.md says how to take it again). Without a terminal the
    /// aggregator serves the map alone; stopping it ends the demo, which stops what it started.
    @Test(.tags(.slow)) func theDemoFleetOnTheMap() async throws {
        let demo = try Self.demo(["--map", "--tiles", "none"])
        var started: [ProcessEntry] = []
        var announced: String?
        defer { Self.stopAll(demo, started, work: announced) }
        let work = try await Self.workDirectory(demo)
        announced = work
        // After the drives are converted and two gpsfakes and seven agents started: on two busy
        // cores (the suite's other tests beside it) that took over 20 s.
        let address = try await demo.waitForLine(containing: "demo: the fleet map is at ", timeout: .seconds(60))
        let url = String(try #require(address.split(separator: " ").first { $0.hasPrefix("http://") }))
        // The board starts 3 s after the address is printed: its log says when the map listens.
        try await withDeadline(.seconds(30), what: "the demo's aggregator to serve the map", process: demo) {
            while !((try? String(contentsOfFile: "\(work)/board.log", encoding: .utf8))?.contains(
                "web.url=\(url)") ?? false)
            {
                try await Task.sleep(for: .milliseconds(100))
            }
        }
        try await HeadlessBrowser.with(width: 1600, height: 800) { browser in
            let page = try await browser.open(url)
            try await page.waitUntil("document.body.dataset.leaflet !== undefined")
            #expect(try await page.evaluate("document.body.dataset.leaflet") == #""loaded""#)
            let row = WebMapIntegrationTests.row
            let marker = { WebMapIntegrationTests.layer("marker", $0) }
            // ghost-9 is killed 40 s in; taxi-5's ended row stays 60 s from 25 s in.
            let states = [
                "gps-1": "active", "gps-2": "active", "van-7": "active", "truck-2": "active", "bike-4": "paused",
                "taxi-5": "ended", "ghost-9": "offline",
            ]
            let condition = states.sorted { $0.key < $1.key }.map { device, state in
                "\(row(device))?.dataset.state === '\(state)' && \(marker(device))?.dataset.state === '\(state)'"
            }
            try await page.waitUntil(
                (condition + [
                    "\(row("van-7")).querySelector('td.alert')?.textContent.startsWith('Overspeed')",
                    "\(row("truck-2")).querySelector('td.alert')?.textContent.startsWith('Left yard')",
                ]).joined(separator: " && "), timeout: .seconds(120))
            #expect(try await page.evaluate("document.querySelectorAll('#list tbody tr').length") == "7")
            #expect(try await page.evaluate("document.querySelectorAll('[data-kind=marker]').length") == "7")
            #expect(try await page.evaluate("document.body.dataset.connection") == #""connected""#)
            let name = try await page.evaluate("\(row("van-7")).cells[0].textContent")
            #expect(name == #""Van 7 (van-7)""#)
            // van-7's details, as a dispatcher clicks its row: its destination and driver.
            _ = try await page.evaluate("\(row("van-7")).click()")
            try await page.waitUntil(
                "!document.getElementById('details').hidden && document.getElementById('details').textContent.includes('Višnjan depot')"
            )
            #expect(try await page.evaluate("document.getElementById('details').textContent.includes('Ana')") == "true")
            // The map comes to van-7's region: Istria and Cerknica, where five of the seven drive.
            try await page.waitUntil("Number(document.getElementById('map').dataset.zoom) >= 9")
            try await page.screenshot(to: "\(WebMapIntegrationTests.artifacts)/web-map.png")
            // A page opened after bike-4 paused and taxi-5 ended (their last contents carry no fix)
            // places them at their last known positions too, from the trails the aggregator kept.
            let later = try await browser.open(url)
            try await later.waitUntil(
                ["bike-4", "taxi-5", "ghost-9"].map { "\(marker($0))?.dataset.state === '\(states[$0]!)'" }
                    .joined(separator: " && "))
            #expect(try await later.evaluate("document.querySelectorAll('[data-kind=marker]').length") == "7")
            #expect(try await later.evaluate("\(row("bike-4")).title") == #""Last known position""#)
        }
        // Stopping the aggregator ends the demo (as q on the board), which stops the rest.
        started = ProcessEntry.descendants(of: demo.pid)
        let aggregators = started.filter { "myeline-aggregator".hasPrefix($0.command) }
        #expect(aggregators.count == 1, "\(started)")
        for aggregator in aggregators { kill(aggregator.pid, SIGTERM) }
        #expect(try await demo.waitForExit() == 0, "\(demo.tail)")
        #expect(demo.output.contains("demo: the board ended"))
        #expect(started.filter(\.isAlive).isEmpty, "still running: \(started.filter(\.isAlive))")
        #expect(!FileManager.default.fileExists(atPath: work), "\(work) removed")
    }

    /// The demo as a person runs it: the board in a terminal (tmux), with names, then `q`: the demo
    /// says what it stops, stops it, and leaves nothing behind.
    @Test func qOnTheBoardStopsTheDemo() async throws {
        let bin = URL(fileURLWithPath: try builtProductPath("myeline-agent")).deletingLastPathComponent().path
        try await withTemporaryDirectory { directory in
            let command = "bash \(DeploymentFiles.path("scripts/demo")) --bin \(bin) 2>\(directory)/demo.log"
            try await TmuxPane.with(command, in: directory, columns: 160, rows: 30, session: "demo") { pane in
                var started: [ProcessEntry] = []
                defer { for process in started where process.isAlive { kill(process.pid, SIGKILL) } }
                let log = { (try? String(contentsOfFile: "\(directory)/demo.log", encoding: .utf8)) ?? "" }
                _ = try await pane.waitFor("the board with the fleet's names", timeout: .seconds(90), diagnostics: log)
                {
                    $0.contains("Van 7") && $0.contains("gps-2")
                }
                started = ProcessEntry.descendants(of: pane.server)
                #expect(started.contains { $0.command == "myeline-agent" })
                try await pane.send("q")
                #expect(try await pane.exitStatus(timeout: .seconds(30)) == "0")
                #expect(log().contains("demo: the board ended"), "\(log())")
                #expect(
                    log().contains("demo: stopping what it started") && log().contains("demo: stopped; removed"),
                    "\(log())")
                #expect(started.filter(\.isAlive).isEmpty, "still running: \(started.filter(\.isAlive))")
            }
        }
    }
}

/// A process from `/proc`, told apart from a later process with the same PID by its start time.
struct ProcessEntry: CustomStringConvertible {
    var pid: Int32
    var parent: Int32
    var state: Substring
    var startTime: Substring
    var command: Substring

    /// `/proc/PID/stat`: the command in parentheses, then the state, the parent, … and the start
    /// time (field 22).
    init?(pid: Int32) {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let open = stat.firstIndex(of: "("), let close = stat.lastIndex(of: ")")
        else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 19, let parent = Int32(fields[1]) else { return nil }
        (self.pid, self.parent, state, startTime) = (pid, parent, fields[0], fields[19])
        command = stat[stat.index(after: open)..<close]
    }

    /// Whether this very process still runs (a zombie, dead but not reaped, does not count).
    var isAlive: Bool {
        guard let now = ProcessEntry(pid: pid) else { return false }
        return now.startTime == startTime && now.state != "Z"
    }

    var description: String { "\(pid) \(command)" }

    /// Every process below `root`, children and their children.
    static func descendants(of root: Int32) -> [ProcessEntry] {
        let all = ((try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []).compactMap(Int32.init)
            .compactMap(ProcessEntry.init(pid:))
        var found: [ProcessEntry] = []
        var parents: Set<Int32> = [root]
        while true {
            let next = all.filter { parents.contains($0.parent) && !found.map(\.pid).contains($0.pid) }
            if next.isEmpty { return found }
            found += next
            parents = Set(next.map(\.pid))
        }
    }
}
