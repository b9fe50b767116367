import Foundation
import LiveActivity
import Locking
import Testing
import TestSupport

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `myeline-aggregator --http` read by a real browser (Debian's headless Chromium over its DevTools
/// pipe): a private mosquitto, real agents replaying GPX drives, the map's DOM and a screenshot
/// (issue 22, item 5).
@Suite(.tags(.integration), .serialized)
struct WebMapIntegrationTests {
    static let gpx = repositoryDirectory.appendingPathComponent("Tests/LocationTests/Data/gpx")
    /// A name that would run script if it were inserted as HTML (and the CSP let it).
    static let hostileName = #"<img src=x onerror="document.body.dataset.pwned='1'">"#

    /// Where the tests leave their screenshots: `MYELINE_TEST_ARTIFACTS`, else .build/test-artifacts.
    static var artifacts: String {
        let directory =
            ProcessInfo.processInfo.environment["MYELINE_TEST_ARTIFACTS"]
            ?? repositoryDirectory.appendingPathComponent(".build/test-artifacts").path
        try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        return directory
    }

    /// A replaying agent for `device`, its name and alerts from `environment`.
    static func agent(
        _ broker: TestBroker, _ device: String, gpx file: String, state: String, environment: [String: String] = [:],
        _ extra: [String] = []
    ) throws -> TestProcess {
        try AgentHarness.agent(
            broker, state: "\(state)/\(device)", ["--speed", "20", "--loop"] + extra,
            environment: environment, source: gpx.appendingPathComponent(file).path, device: device)
    }

    /// The aggregator serving the map on a free loopback port, and the page's address.
    static func aggregator(
        _ broker: TestBroker, _ arguments: [String] = [], environment: [String: String] = [:]
    ) async throws -> (TestProcess, String) {
        let board = try AggregatorIntegrationTests.aggregator(
            broker, ["--http", "127.0.0.1:0", "--tiles", "none"] + arguments, environment: environment)
        let line = try await board.waitForLine(containing: "event=web.serving")
        guard let start = line.range(of: "web.url="), let url = line[start.upperBound...].split(separator: " ").first
        else {
            board.signal(SIGKILL)
            throw TestSupportError("no address in: \(line)")
        }
        return (board, String(url))
    }

    /// The port of a page's address such as `http://127.0.0.1:41234/`.
    static func port(of url: String) throws -> Int {
        guard let port = url.split(separator: ":").last.flatMap({ Int($0.prefix { $0.isNumber }) }) else {
            throw TestSupportError("no port in \(url)")
        }
        return port
    }

    /// The map's `/api/stats` counts.
    static func stats(_ url: String) async throws -> [String: Int] {
        let (data, _) = try await URLSession.shared.data(from: URL(string: url + "api/stats")!)
        return try JSONSerialization.jsonObject(with: data) as? [String: Int] ?? [:]
    }

    /// The JavaScript for the list's row of `device`.
    static func row(_ device: String) -> String {
        "document.querySelector('#list tbody tr[data-device=\(HeadlessBrowser.quoted(device))]')"
    }

    /// The JavaScript for a map layer (`marker` or `trail`) of `device`.
    static func layer(_ kind: String, _ device: String) -> String {
        "document.querySelector('[data-kind=\(kind)][data-device=\(HeadlessBrowser.quoted(device))]')"
    }

    @Test func theMapFollowsTheFleet() async throws {
        try await TestBroker.with { broker in
            try await withTemporaryDirectory { state in
                let van = try Self.agent(
                    broker, "van-7", gpx: "around-visnjan-with-car.gpx", state: state,
                    environment: [
                        "MYELINE_DEVICE_NAME": "Parcel van", "MYELINE_ALERTS_OVERSPEED_THRESHOLD": "12",
                        "MYELINE_ALERTS_OVERSPEED_DURATION": "2",
                        // Ended rows stay on the board (and the map) until dismissed.
                        "MYELINE_ACTIVITY_DISMISSAL": "after:600",
                    ], ["--end-on-exit"])
                defer { van.signal(SIGKILL) }
                let truck = try Self.agent(broker, "truck-2", gpx: "korita-zbevnica.gpx", state: state)
                defer { truck.signal(SIGKILL) }
                let hostile = try Self.agent(
                    broker, "rover-1", gpx: "cerknicko-jezero.gpx", state: state,
                    environment: ["MYELINE_DEVICE_NAME": Self.hostileName])
                defer { hostile.signal(SIGKILL) }
                let (board, url) = try await Self.aggregator(broker, ["--trail-length", "50"])
                defer { board.signal(SIGKILL) }
                try await HeadlessBrowser.with { browser in
                    let page = try await browser.open(url)
                    // Set once the page has read its settings (after the load event).
                    try await page.waitUntil("document.body.dataset.leaflet !== undefined")
                    #expect(try await page.evaluate("document.body.dataset.leaflet") == #""loaded""#)
                    // Markers and rows for the three drives, active.
                    for device in ["van-7", "truck-2", "rover-1"] {
                        try await page.waitUntil(
                            "\(Self.row(device))?.dataset.state === 'active' && \(Self.layer("marker", device))")
                    }
                    // The hostile name is text in the list and the label, and ran nothing.
                    let cell = try await page.evaluate("\(Self.row("rover-1")).cells[0].textContent")
                    #expect(cell == HeadlessBrowser.quoted("\(Self.hostileName) (rover-1)"))
                    let labels = try await page.evaluate(
                        "[...document.querySelectorAll('.leaflet-tooltip')].map((t) => t.textContent)")
                    #expect(labels.contains(#"onerror=\"document.body.dataset.pwned='1'\""#))
                    #expect(try await page.evaluate("document.querySelectorAll('img').length") == "0")
                    #expect(try await page.evaluate("document.body.dataset.pwned ?? 'no'") == #""no""#)
                    // Trails grow; an alert shows; a live update arrives (the row's seq moves on).
                    try await page.waitUntil("Number(\(Self.layer("trail", "van-7"))?.dataset.points) >= 3")
                    try await page.waitUntil("\(Self.row("van-7"))?.querySelector('td.alert') !== null")
                    let seq = try await page.evaluate("Number(\(Self.row("truck-2")).dataset.seq)")
                    try await page.waitUntil("Number(\(Self.row("truck-2")).dataset.seq) > \(seq)")
                    try await page.screenshot(to: "\(Self.artifacts)/web-map-replays.png")
                    // Killed: offline. Stopped (ending its activity): ended.
                    truck.signal(SIGKILL)
                    try await page.waitUntil(
                        "\(Self.row("truck-2")).dataset.state === 'offline' && \(Self.layer("marker", "truck-2")).dataset.state === 'offline'"
                    )
                    van.signal(SIGTERM)
                    try await page.waitUntil(
                        "\(Self.row("van-7")).dataset.state === 'ended' && \(Self.layer("marker", "van-7")).dataset.state === 'ended'"
                    )
                    #expect(try await page.evaluate("document.body.dataset.connection") == #""connected""#)
                    try await page.screenshot(to: "\(Self.artifacts)/web-map-replays-ended.png")
                    // A graceful shutdown ends the page's event stream rather than waiting for it.
                    board.signal(SIGTERM)
                    let status = try await withDeadline(.seconds(20), what: "the aggregator to stop", process: board) {
                        try await board.waitForExit()
                    }
                    #expect(status == 0, "\(board.tail)")
                    try await page.waitUntil("document.body.dataset.connection === 'disconnected'")
                }
            }
        }
    }

    /// Issue 22's bad input "a client that never reads its event stream", under real traffic: 1,000
    /// simulated devices at 1,000 envelopes per second (about 700 KiB/s to each page). Two raw
    /// connections ask for /api/events and never read; each is dropped once its queue passes
    /// web.client-buffer (after the kernel's socket buffers fill), counted, its connection closed,
    /// and logged once for both. Meanwhile a reader that keeps up and a page in Chromium (its 1,000
    /// markers named on hover only) stay connected and receive a device published after the drops,
    /// and the board's own fleet has it too, with no message
    /// dropped by the board. Each page may have 16 MiB waiting (`web.client-buffer`, 1 MiB by
    /// default): about 24 s of this traffic, so that the reader (this test process) and the page
    /// (Chromium), starved for seconds when the whole suite runs on two cores, are not taken for
    /// pages that never read (they were, in a third of the suite's runs on a slower machine with
    /// 1 MiB, and the page once in six runs with 8 MiB).
    @Test func aPageThatNeverReadsIsDroppedWhileOthersKeepUp() async throws {
        try await TestBroker.with(extraConfiguration: AggregatorIntegrationTests.tunedBroker) { broker in
            let (board, url) = try await Self.aggregator(
                broker, environment: ["MYELINE_WEB_CLIENT_BUFFER": "\(16 << 20)"])
            defer { board.signal(SIGKILL) }
            let simulate = try TestProcess(
                name: "myeline-agent simulate", executable: builtProductPath("myeline-agent"),
                arguments: [
                    "simulate", "--device", "load", "--broker", broker.address.description, "--devices", "1000",
                    "--rate", "1000", "--duration", "600", "--track",
                    Self.gpx.appendingPathComponent(
                        "around-visnjan-with-car.gpx"
                    ).path,
                ])
            defer { simulate.signal(SIGKILL) }
            let port = try Self.port(of: url)
            let reader = try RawEventStream(port: port)
            defer { reader.close() }
            reader.startReading(lookingFor: #""device":"late-1""#)
            try await reader.waitUntil("the reader's first snapshot") { $0.bytes > 0 }
            try await HeadlessBrowser.with { browser in
                // And a page in a browser, following the 1,000 (names on hover past 100 markers).
                let page = try await browser.open(url)
                try await page.waitUntil(
                    "document.querySelectorAll('[data-kind=marker]').length >= 1000", timeout: .seconds(60))
                // Past 100 markers the names go: Leaflet removes a closed label's element 200 ms
                // after fading it out, so the last ones may still be there when the markers are.
                try await page.waitUntil(
                    "document.querySelectorAll('.leaflet-tooltip').length === 0", timeout: .seconds(10))
                let stalled = try [RawEventStream(port: port), RawEventStream(port: port)]
                defer { for stream in stalled { stream.close() } }
                try await withDeadline(.seconds(90), what: "both stalled pages to be dropped", process: board) {
                    while try await Self.stats(url)["clients-dropped"] ?? 0 < 2 {
                        try await Task.sleep(for: .milliseconds(200))
                    }
                }
                // Dropped means closed: what the stalled pages never read ends with the end of the stream.
                for stream in stalled {
                    stream.startReading(lookingFor: "\n")
                    try await stream.waitUntil("a dropped page's connection to close") { $0.ended }
                }
                // A device published after the drops reaches the reader, the page and the board (and a
                // device without an activity is a row of its own in the page).
                try await AggregatorIntegrationTests.publish(
                    [
                        ("myeline/late-1/activities/a1", AggregatorIntegrationTests.envelope("late-1")),
                        AggregatorIntegrationTests.status("idle-2", "online"),
                    ], to: broker)
                try await reader.waitUntil("the reader to receive late-1") { $0.found }
                #expect(!reader.seen.ended, "the reader stays connected")
                try await page.waitUntil(
                    "\(Self.row("late-1"))?.dataset.state === 'active' && \(Self.row("idle-2"))?.dataset.state === 'idle'"
                )
                #expect(try await page.evaluate("document.body.dataset.connection") == #""connected""#)
                let (fleet, _) = try await URLSession.shared.data(from: URL(string: url + "api/fleet")!)
                let lines = String(decoding: fleet, as: UTF8.self).split(separator: "\n")
                #expect(lines.contains { $0.contains(#""device":"late-1""#) })
                let summary = try #require(
                    lines.last.flatMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) })
                #expect((summary as? [String: Any])?["dropped"] as? Int == 0, "the board fell behind: \(summary)")
                let counts = try await Self.stats(url)
                #expect(counts["clients-dropped"] == 2)
                #expect(counts["clients"] == 2)
            }
            let logged = board.output.components(separatedBy: "event=web.client.dropped")
            #expect(logged.count - 1 == 1, "logged once: \(board.output)")
        }
    }

    /// With `--http` and standard output not a terminal (systemd, a pipe), the map is served and
    /// nothing is written per change; `--follow` still asks for the plain lines.
    @Test func withoutATerminalTheMapIsServedAlone() async throws {
        try await TestBroker.with { broker in
            try await withTemporaryDirectory { state in
                let van = try Self.agent(broker, "van-7", gpx: "around-visnjan-with-car.gpx", state: state)
                defer { van.signal(SIGKILL) }
                let path = try builtProductPath("myeline-aggregator")
                let arguments = ["--broker", broker.address.description, "--http", "127.0.0.1:0", "--tiles", "none"]
                // Standard error to a file: the process's output is its standard output alone.
                let mapOnly = try TestProcess(
                    name: "myeline-aggregator", executable: path, arguments: arguments,
                    standardErrorFile: "\(state)/map-only.log")
                defer { mapOnly.signal(SIGKILL) }
                let follow = try TestProcess(
                    name: "myeline-aggregator --follow", executable: path, arguments: arguments + ["--follow"],
                    standardErrorFile: "\(state)/follow.log")
                defer { follow.signal(SIGKILL) }
                let serving = try await withDeadline(.seconds(30), what: "the map to be served", process: mapOnly) {
                    while true {
                        let log = (try? String(contentsOfFile: "\(state)/map-only.log", encoding: .utf8)) ?? ""
                        if let line = log.split(separator: "\n").first(where: {
                            $0.contains("event=web.serving")
                        }) {
                            return String(line)
                        }
                        try await Task.sleep(for: .milliseconds(100))
                    }
                }
                let url = String(
                    try #require(serving.split(separator: " ").first { $0.hasPrefix("web.url=") }).dropFirst(
                        "web.url=".count))
                // Two updates of van-7 as plain lines from the one, and in the map of the other.
                try await follow.waitForLine(containing: "van-7/", occurrence: 2, timeout: .seconds(30))
                try await withDeadline(.seconds(30), what: "the map to show van-7", process: mapOnly) {
                    while true {
                        let (fleet, _) = try await URLSession.shared.data(from: URL(string: url + "api/fleet")!)
                        if String(decoding: fleet, as: UTF8.self).contains(#""device":"van-7""#) { return }
                        try await Task.sleep(for: .milliseconds(100))
                    }
                }
                try await follow.waitForLine(containing: "van-7/", occurrence: 3, timeout: .seconds(30))
                #expect(mapOnly.output == "", "written to standard output: \(mapOnly.output.prefix(500))")
            }
        }
    }

    @Test func pagesPastTheLimitAreRefusedAndCounted() async throws {
        try await TestBroker.with { broker in
            let (board, url) = try await Self.aggregator(broker, environment: ["MYELINE_WEB_MAX_CLIENTS": "1"])
            defer { board.signal(SIGKILL) }
            let curl = try executablePath("curl", package: "curl")
            let first = try TestProcess(name: "curl", executable: curl, arguments: ["-sN", url + "api/events"])
            defer { first.signal(SIGKILL) }
            _ = try await first.waitForLine(containing: #""kind":"summary""#)
            let second = try TestProcess(
                name: "curl", executable: curl,
                arguments: ["-s", "-o", "/dev/null", "-w", "status %{http_code}\n", url + "api/events"])
            _ = try await second.waitForLine(containing: "status 503")
            let (stats, _) = try await URLSession.shared.data(from: URL(string: url + "api/stats")!)
            let counts = try JSONSerialization.jsonObject(with: stats) as? [String: Int]
            #expect(counts?["clients"] == 1)
            #expect(counts?["clients-refused"] == 1)
        }
    }

    @Test func aTokenIsRequiredForEveryRequest() async throws {
        try await TestBroker.with { broker in
            try await withTemporaryDirectory { directory in
                let tokenFile = "\(directory)/token"
                try "s3cret-Token_1\n".write(toFile: tokenFile, atomically: true, encoding: .utf8)
                let (board, url) = try await Self.aggregator(broker, ["--http-token-file", tokenFile])
                defer { board.signal(SIGKILL) }
                func status(_ path: String, bearer: String? = nil) async throws -> Int {
                    var request = URLRequest(url: URL(string: url + path)!)
                    if let bearer { request.setValue("Bearer \(bearer)", forHTTPHeaderField: "Authorization") }
                    let (_, response) = try await URLSession.shared.data(for: request)
                    return (response as? HTTPURLResponse)?.statusCode ?? 0
                }
                #expect(try await status("") == 401)
                #expect(try await status("api/fleet") == 401)
                #expect(try await status("app.js", bearer: "wrong") == 401)
                #expect(try await status("api/fleet", bearer: "s3cret-Token_1") == 200)
                #expect(try await status("nowhere", bearer: "s3cret-Token_1") == 404)
                #expect(try await status("api/fleet?x=1", bearer: "s3cret-Token_1") == 400)
                // A browser given the token once in the address keeps it in a cookie for the rest.
                try await HeadlessBrowser.with { browser in
                    let page = try await browser.open(url + "?token=s3cret-Token_1")
                    try await page.waitUntil("document.body.dataset.connection === 'connected'")
                    #expect(try await page.evaluate("document.body.dataset.leaflet") == #""loaded""#)
                }
                let (stats, _) = try await URLSession.shared.data(
                    for: {
                        var request = URLRequest(url: URL(string: url + "api/stats")!)
                        request.setValue("Bearer s3cret-Token_1", forHTTPHeaderField: "Authorization")
                        return request
                    }())
                let counts = try JSONSerialization.jsonObject(with: stats) as? [String: Int]
                #expect(counts?["unauthorized"] == 3)
                #expect(counts?["not-found"] == 1)
                #expect(counts?["bad-query"] == 1)
            }
        }
    }
}

/// A raw HTTP/1.1 connection to the map's `/api/events`, without a browser or curl: one that never
/// reads (its receive buffer fills, then the server's send buffer, then its queue), or one
/// read on a thread of its own, which counts the bytes, notes whether a marker went by and whether
/// the server closed the stream.
final class RawEventStream: Sendable {
    struct Seen: Sendable {
        var bytes = 0
        var found = false
        var ended = false
    }

    private let descriptor: Int32
    /// What was read; whether a thread reads (it closes the descriptor when the stream ends);
    /// whether the descriptor is closed. The descriptor is shut down and closed under the lock, so
    /// that it is never used once closed (its number may be another file's by then).
    private let state = Locked((seen: Seen(), reading: false, released: false))

    /// What was read so far.
    var seen: Seen { state.withLock { $0.seen } }

    /// Connects to 127.0.0.1:`port` and asks for the stream. (The socket's buffers are the kernel's:
    /// shrinking one after connecting would make the server's retransmissions back off for tens of
    /// seconds once it is read.)
    init(port: Int) throws {
        descriptor = try BrokerAttackIntegrationTests.openSockets(port: port, count: 1)[0]
        let request = Array("GET /api/events HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\r\n".utf8)
        guard write(descriptor, request, request.count) == request.count else {
            let error = String(cString: strerror(errno))
            Glibc.close(descriptor)
            throw TestSupportError("cannot ask 127.0.0.1:\(port) for /api/events: \(error)")
        }
    }

    /// Reads everything from now on, on a thread of its own, noting when `marker` goes by.
    func startReading(lookingFor marker: String) {
        let marker = Array(marker.utf8)
        state.withLock { $0.reading = true }
        Thread.detachNewThread { [self] in
            var buffer = [UInt8](repeating: 0, count: 1 << 16)
            // The end of the previous read, for a marker split across two reads.
            var tail: [UInt8] = []
            while true {
                let count = read(descriptor, &buffer, buffer.count)
                if count < 0 && errno == EINTR { continue }
                if count <= 0 { break }
                let window = tail + buffer[..<count]
                let found =
                    !marker.isEmpty
                    && window.indices.dropLast(marker.count - 1).contains {
                        window[$0..<($0 + marker.count)].elementsEqual(marker)
                    }
                tail = Array(window.suffix(marker.count - 1))
                state.withLock { state in
                    state.seen.bytes += count
                    if found { state.seen.found = true }
                }
            }
            state.withLock { state in
                state.seen.ended = true
                if !state.released { Glibc.close(descriptor) }
                state.released = true
            }
        }
    }

    /// Waits until `condition` holds for what was read, checking every 50 ms, for at most `timeout`.
    func waitUntil(
        _ what: String, timeout: Duration = .seconds(30), _ condition: @escaping @Sendable (Seen) -> Bool
    ) async throws {
        try await withDeadline(timeout, what: what) {
            while !condition(self.seen) { try await Task.sleep(for: .milliseconds(50)) }
        }
    }

    /// Shuts the connection down, which ends a reading thread (that closes it), or closes it.
    func close() {
        state.withLock { state in
            guard !state.released else { return }
            shutdown(descriptor, Int32(SHUT_RDWR))
            if !state.reading {
                Glibc.close(descriptor)
                state.released = true
            }
        }
    }
}
