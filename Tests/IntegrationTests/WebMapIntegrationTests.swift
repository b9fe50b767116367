import Foundation
import LiveActivity
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
        let line = try await board.waitForLine(containing: "Serving the fleet map at ")
        guard let start = line.range(of: "http://"), let url = line[start.lowerBound...].split(separator: " ").first
        else {
            board.signal(SIGKILL)
            throw TestSupportError("no address in: \(line)")
        }
        return (board, String(url))
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
                    try await page.screenshot(to: "\(Self.artifacts)/web-map.png")
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
                    try await page.screenshot(to: "\(Self.artifacts)/web-map-ended.png")
                    // A graceful shutdown ends the page's event stream rather than waiting for it.
                    board.signal(SIGTERM)
                    let status = try await withDeadline(.seconds(20), what: "the aggregator to stop", process: board) {
                        try await board.waitForExit()
                    }
                    #expect(status == 0)
                    try await page.waitUntil("document.body.dataset.connection === 'disconnected'")
                }
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
