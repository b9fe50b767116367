@testable import AggregatorWeb
import Board
import Foundation
import LiveActivity
import MyelineWire
import Testing

/// The web map's pure parts (docs/web.md): routes, the token, the event stream's framing, its
/// clients' bounds and the fleet feed's coalescing.
@Suite struct WebRouteTests {
    @Test(
        arguments: [
            ("GET", "/", nil, WebRoute.page("index.html")),
            ("HEAD", "/index.html", nil, .page("index.html")),
            ("GET", "/app.js", nil, .page("app.js")),
            ("GET", "/style.css", nil, .page("style.css")),
            ("GET", "/leaflet/leaflet.js", nil, .leaflet("leaflet.js")),
            ("GET", "/leaflet/leaflet.css", nil, .leaflet("leaflet.css")),
            ("GET", "/leaflet/images/marker.png", nil, .notFound),
            ("GET", "/leaflet/../../etc/passwd", nil, .notFound),
            ("GET", "/api/fleet", nil, .fleet),
            ("GET", "/api/events", nil, .events),
            ("GET", "/api/trails", nil, .trails),
            ("GET", "/api/settings", nil, .settings),
            ("GET", "/api/stats", nil, .stats),
            ("GET", "/favicon.ico", nil, .favicon),
            ("GET", "/api/fleet", "token=abc", .fleet),
            ("GET", "/api/fleet", "", .fleet),
            ("GET", "/api/fleet", "device=van-7", .badQuery("unknown query parameter: only token=… is taken")),
            ("GET", "/", "token", .badQuery("unknown query parameter: only token=… is taken")),
            ("GET", "/", "token=a&token=b", .badQuery("token given twice")),
            ("GET", "/nowhere", "x=1", .notFound),
            ("GET", "/API/FLEET", nil, .notFound),
            ("POST", "/api/fleet", nil, .methodNotAllowed),
            ("DELETE", "/", nil, .methodNotAllowed),
        ] as [(String, String, String?, WebRoute)])
    func route(method: String, path: String, query: String?, expected: WebRoute) {
        #expect(WebRoutes.route(method: method, path: path, query: query) == expected)
    }

    @Test func theTokenIsReadFromTheQueryPercentDecoded() {
        #expect(WebRoutes.token(inQuery: "token=a%2Bb") == "a+b")
        #expect(WebRoutes.token(inQuery: "other=1") == nil)
        #expect(WebRoutes.token(inQuery: nil) == nil)
    }
}

@Suite struct AccessTokenTests {
    let token = AccessToken(fileContents: "  s3cret-Token_1  \nsecond line ignored\n")!

    @Test func aFileGivesItsFirstLineTrimmed() {
        #expect(token.admits(authorization: "Bearer s3cret-Token_1", cookie: nil, queryToken: nil))
    }

    @Test(arguments: ["", "\n\n", "   \n", "two words", "semi;colon", "quote\"", "non-ascii-é"])
    func aFileWithoutAUsableTokenIsRefused(contents: String) {
        #expect(AccessToken(fileContents: contents) == nil)
    }

    @Test func eachCarrierIsAccepted() {
        #expect(token.admits(authorization: nil, cookie: "a=b; myeline-token=s3cret-Token_1", queryToken: nil))
        #expect(token.admits(authorization: nil, cookie: nil, queryToken: "s3cret-Token_1"))
    }

    @Test(arguments: [
        "s3cret-Token_", "s3cret-Token_12", "S3cret-Token_1", "", "s3cret-Token_1x",
    ])
    func aWrongTokenIsRefusedWherever(candidate: String) {
        #expect(!token.admits(authorization: "Bearer \(candidate)", cookie: nil, queryToken: nil))
        #expect(!token.admits(authorization: nil, cookie: "myeline-token=\(candidate)", queryToken: nil))
        #expect(!token.admits(authorization: nil, cookie: nil, queryToken: candidate))
    }

    @Test func noCredentialsAreRefused() {
        #expect(!token.admits(authorization: nil, cookie: nil, queryToken: nil))
        #expect(!token.admits(authorization: "Basic s3cret-Token_1", cookie: "other=s3cret-Token_1", queryToken: nil))
    }

    @Test func theCookieIsHttpOnlyAndStrict() {
        #expect(token.cookie == "myeline-token=s3cret-Token_1; Path=/; HttpOnly; SameSite=Strict")
    }
}

@Suite struct WebSettingsTests {
    @Test(
        arguments: [
            ("8080", "127.0.0.1", 8080), ("0", "127.0.0.1", 0), ("0.0.0.0:80", "0.0.0.0", 80),
            ("localhost:9000", "localhost", 9000), ("[::1]:8080", "::1", 8080), ("[::]:1", "::", 1),
        ] as [(String, String, Int)])
    func listen(text: String, host: String, port: Int) {
        let parsed = WebSettings.parseListen(text)
        #expect(parsed?.host == host)
        #expect(parsed?.port == port)
    }

    @Test(arguments: ["", ":", "host:", ":80", "host:65536", "host:-1", "::1:80", "[::1]", "[]:80", "a b"])
    func aBadListenIsRefused(text: String) {
        #expect(WebSettings.parseListen(text) == nil)
    }
}

@Suite struct EventClientsTests {
    @Test func clientsPastTheLimitAreRefusedAndCounted() {
        var clients = EventClients(maximumClients: 2, maximumQueuedBytes: 100)
        let first = clients.add()
        #expect(first != nil)
        #expect(clients.add() != nil)
        #expect(clients.add() == nil)
        #expect(clients.refusedCount == 1)
        clients.remove(first!)
        #expect(clients.add() != nil)
        #expect(clients.count == 2)
    }

    @Test func aClientGetsItsSnapshotFirstWhateverItsSize() {
        var clients = EventClients(maximumClients: 4, maximumQueuedBytes: 10)
        let id = clients.add()!
        #expect(clients.waitingForSnapshot == [id])
        // Frames before the snapshot are not queued: the snapshot holds them.
        #expect(clients.queue([1, 2], for: id) == nil)
        clients.queueSnapshot(Array(repeating: 7, count: 1000), for: id)
        #expect(clients.waitingForSnapshot.isEmpty)
        #expect(clients.queue(Array(repeating: 1, count: 10), for: id) == .queued)
        #expect(clients.take(id)?.count == 1010)
        #expect(clients.queuedBytes(of: id) == 0)
    }

    @Test func aClientThatDoesNotReadIsDroppedAtItsBound() {
        var clients = EventClients(maximumClients: 4, maximumQueuedBytes: 10)
        let slow = clients.add()!
        let fast = clients.add()!
        for id in [slow, fast] { clients.queueSnapshot([0], for: id) }
        var outcomes: [EventClients.Outcome?] = []
        for _ in 0..<4 {
            outcomes.append(clients.queue([1, 2, 3, 4], for: slow))
            #expect(clients.queue([1, 2, 3, 4], for: fast) == .queued)
            _ = clients.take(fast)
        }
        // 4 + 4 fit in 10 bytes; the third frame would pass it: the client is gone.
        #expect(outcomes == [.queued, .queued, .dropped, nil])
        #expect(clients.droppedCount == 1)
        #expect(clients.take(slow) == nil)
        #expect(clients.ids == [fast])
    }

    @Test func oneFrameLargerThanTheBoundIsStillTaken() {
        var clients = EventClients(maximumClients: 1, maximumQueuedBytes: 10)
        let id = clients.add()!
        clients.queueSnapshot([], for: id)
        #expect(clients.queue(Array(repeating: 1, count: 50), for: id) == .queued)
        #expect(clients.queue([1], for: id) == .dropped)
    }
}

@Suite struct FleetFeedTests {
    static let decoder = BoardDecoder(topics: TopicTree())
    static let start = Date(timeIntervalSince1970: 1_700_000_000)

    static func envelope(
        _ device: String, seq: Int, event: String = "update", latitude: Double? = nil, longitude: Double? = nil,
        stale: Double? = nil, name: String? = nil
    ) -> (String, [UInt8]) {
        var state: [String: Any] = [
            "fix": latitude == nil ? "none" : "3d", "distance": 0, "elapsed": 0, "paused": false,
        ]
        state["latitude"] = latitude
        state["longitude"] = longitude
        var object: [String: Any] = [
            "schema": "myeline.activity.v1", "device": device, "activity": "a1", "attributes-type": "location",
            "attributes": ["deviceID": device, "name": name ?? device], "event": event, "seq": seq,
            "timestamp": 1_699_999_000 + Double(seq), "content-state": state, "relevance-score": 0,
        ]
        object["stale-date"] = stale
        if event == "end" { object["dismissal-date"] = 1_700_009_000 }
        return ("myeline/\(device)/activities/a1", Array(try! JSONSerialization.data(withJSONObject: object)))
    }

    static func apply(_ fleet: inout Fleet, _ message: (String, [UInt8])) {
        _ = fleet.apply(decoder.decode(topic: message.0, payload: message.1), now: start)
    }

    static func kinds(_ lines: [String]) -> [String] {
        lines.map { line in
            let object = try! JSONSerialization.jsonObject(with: Data(line.utf8)) as! [String: Any]
            return "\(object["kind"]!):\(object["change"] ?? "-"):\(object["device"] ?? "-")"
        }
    }

    @Test func aFloodBetweenTwoFramesIsOneLinePerActivity() {
        var fleet = Fleet()
        var feed = FleetFeed(trailLimit: 10)
        Self.apply(&fleet, Self.envelope("van-7", seq: 1, latitude: 45, longitude: 13))
        let first = feed.advance(to: FleetReading(fleet: fleet), now: Self.start)
        #expect(Self.kinds(first) == ["device:status:van-7", "activity:updated:van-7", "summary:summary:-"])
        for seq in 2...500 {
            Self.apply(&fleet, Self.envelope("van-7", seq: seq, latitude: 45 + Double(seq) / 1000, longitude: 13))
        }
        let second = feed.advance(to: FleetReading(fleet: fleet), now: Self.start)
        // The activity's latest, once; not the device's (only its last-seen moved, as --follow --json).
        #expect(Self.kinds(second) == ["activity:updated:van-7"])
        #expect(second[0].contains(#""seq":500"#))
        // Nothing changed: nothing sent.
        #expect(feed.advance(to: FleetReading(fleet: fleet), now: Self.start).isEmpty)
        // The trail took one point per frame, not one per message.
        #expect(feed.trails.values.first?.count == 2)
    }

    @Test func aDeviceLineComparesWithoutItsLastSeen() {
        let seen = FleetFeed.withoutLastSeen(#"{"a":1,"last-seen":17.5,"z":2}"#)
        #expect(seen == FleetFeed.withoutLastSeen(#"{"a":1,"last-seen":18,"z":2}"#))
        #expect(seen != FleetFeed.withoutLastSeen(#"{"a":1,"last-seen":17.5,"z":3}"#))
        #expect(FleetFeed.withoutLastSeen(#"{"a":1}"#) == #"{"a":1}"#)
    }

    @Test func timeAloneTurnsARowStale() {
        var fleet = Fleet()
        var feed = FleetFeed(trailLimit: 10)
        Self.apply(&fleet, Self.envelope("van-7", seq: 1, stale: 1_700_000_060))
        _ = feed.advance(to: FleetReading(fleet: fleet), now: Self.start)
        let later = feed.advance(to: FleetReading(fleet: fleet), now: Self.start.addingTimeInterval(120))
        #expect(Self.kinds(later) == ["activity:state:van-7", "summary:summary:-"])
        #expect(later[0].contains(#""state":"stale""#))
    }

    @Test func aRemovedActivityIsSaidAndItsTrailForgotten() {
        var fleet = Fleet()
        var feed = FleetFeed(trailLimit: 10)
        Self.apply(&fleet, Self.envelope("van-7", seq: 1, latitude: 45, longitude: 13))
        _ = feed.advance(to: FleetReading(fleet: fleet), now: Self.start)
        Self.apply(&fleet, Self.envelope("van-7", seq: 2, event: "end", latitude: 45, longitude: 13))
        _ = fleet.removeDismissed(now: Date(timeIntervalSince1970: 1_700_010_000))
        let lines = feed.advance(to: FleetReading(fleet: fleet), now: Self.start)
        #expect(Self.kinds(lines).contains("removed:removed:van-7"))
        #expect(feed.trails.isEmpty)
    }

    @Test func trailsAreBoundedAndSkipImpossiblePositions() {
        var fleet = Fleet()
        var feed = FleetFeed(trailLimit: 3)
        for seq in 1...6 {
            Self.apply(&fleet, Self.envelope("van-7", seq: seq, latitude: Double(seq), longitude: 13))
            _ = feed.advance(to: FleetReading(fleet: fleet), now: Self.start)
        }
        #expect(feed.trails.values.first?.map(\.latitude) == [4, 5, 6])
        // No position: no point (never 0,0); the trail keeps what it had.
        Self.apply(&fleet, Self.envelope("van-7", seq: 7))
        _ = feed.advance(to: FleetReading(fleet: fleet), now: Self.start)
        #expect(feed.trails.values.first?.map(\.latitude) == [4, 5, 6])
        #expect(feed.trailsJSON.hasPrefix(#"{"limit":3,"trails":[{"activity":"a1","device":"van-7","points":[[4,13],"#))
    }

    @Test func aSnapshotIsTheStateOfTheLastFrame() {
        var fleet = Fleet()
        var feed = FleetFeed(trailLimit: 10)
        Self.apply(&fleet, Self.envelope("van-7", seq: 1))
        Self.apply(&fleet, Self.envelope("truck-2", seq: 1))
        _ = feed.advance(to: FleetReading(fleet: fleet), now: Self.start)
        let snapshot = feed.snapshot(of: FleetReading(fleet: fleet), now: Self.start)
        #expect(
            Self.kinds(snapshot).sorted() == [
                "activity:updated:truck-2", "activity:updated:van-7", "device:status:truck-2", "device:status:van-7",
                "summary:summary:-",
            ])
    }

    @Test func aHostileNameIsAJSONStringNotMarkup() {
        var fleet = Fleet()
        var feed = FleetFeed(trailLimit: 10)
        Self.apply(&fleet, Self.envelope("x", seq: 1, name: "<img src=x onerror=alert(1)>\"\n"))
        let lines = feed.advance(to: FleetReading(fleet: fleet), now: Self.start)
        let line = lines.first { $0.contains(#""kind":"activity""#) } ?? ""
        // One line (no raw newline can break the event stream's framing), the name intact.
        #expect(!line.contains("\n"))
        let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
        #expect(object?["name"] as? String == "<img src=x onerror=alert(1)>\"\n")
    }
}

@Suite struct WebFramingTests {
    @Test func anEventIsOneDataLinePerJSONLine() {
        let frame = String(decoding: ServerSentEvents.event(lines: [#"{"a":1}"#, #"{"b":2}"#]), as: UTF8.self)
        #expect(frame == "data: {\"a\":1}\ndata: {\"b\":2}\n\n")
        let snapshot = String(decoding: ServerSentEvents.event(name: "snapshot", lines: []), as: UTF8.self)
        #expect(snapshot == "event: snapshot\nretry: 2000\ndata: \n\n")
    }

    @Test func thePolicyForbidsInlineScriptAndAllowsOnlyTheTiles() {
        var settings = WebSettings()
        settings.tiles = "https://{s}.tile.example.org/{z}/{x}/{y}.png"
        #expect(settings.tilesOrigin == "https://*.tile.example.org")
        let policy = WebResponder.contentSecurityPolicy(tilesOrigin: settings.tilesOrigin)
        #expect(policy.contains("script-src 'self';"))
        #expect(!policy.contains("unsafe"))
        #expect(policy.contains("img-src 'self' data: https://*.tile.example.org;"))
        settings.tiles = nil
        #expect(WebResponder.contentSecurityPolicy(tilesOrigin: settings.tilesOrigin).contains("img-src 'self' data:;"))
    }
}

extension FleetFeedTests {
    @Test func withNobodyReadingOnlyTheTrailsAreFollowed() {
        var fleet = Fleet()
        var feed = FleetFeed(trailLimit: 10)
        Self.apply(&fleet, Self.envelope("van-7", seq: 1, latitude: 45, longitude: 13))
        #expect(feed.advance(to: FleetReading(fleet: fleet), now: Self.start, producingLines: false).isEmpty)
        Self.apply(&fleet, Self.envelope("van-7", seq: 2, latitude: 46, longitude: 13))
        #expect(feed.advance(to: FleetReading(fleet: fleet), now: Self.start, producingLines: false).isEmpty)
        #expect(feed.trails.values.first?.count == 2)
        // A reader who comes now starts from a snapshot of the latest state, then gets the lines of
        // the devices followed while nobody read.
        let snapshot = feed.snapshot(of: FleetReading(fleet: fleet), now: Self.start)
        #expect(Self.kinds(snapshot) == ["activity:updated:van-7", "device:status:van-7", "summary:summary:-"])
        #expect(snapshot[0].contains(#""seq":2"#))
        let next = feed.advance(to: FleetReading(fleet: fleet), now: Self.start)
        #expect(Self.kinds(next) == ["device:status:van-7", "activity:state:van-7", "summary:summary:-"])
    }
}
