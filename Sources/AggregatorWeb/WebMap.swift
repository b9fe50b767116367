import Board
import Foundation
import Hummingbird
import NIOCore
import Locking
import Logging
import ServiceLifecycle

/// The aggregator's web map (`--http`, docs/web.md): an HTTP service that serves the page, Leaflet,
/// the fleet as JSON and its changes as server-sent events, read from the board's model a frame at
/// a time. Run in the aggregator's service group; a graceful shutdown ends every event stream and
/// then the server.
public struct WebMap: Service {
    /// How often the fleet is read and its changes sent: the page's frame, and the most a flood
    /// of envelopes can cost the browser.
    public static let frameInterval = Duration.milliseconds(200)
    /// How often an idle event stream gets a comment, so that proxies keep it open.
    static let keepAliveFrames = 75

    let settings: WebSettings
    let token: AccessToken?
    let read: @Sendable () -> FleetReading
    let now: @Sendable () -> Date
    let logger: Logger
    let hub: EventHub
    let feed: Locked<FleetFeed>
    let counters = Locked(WebCounters())
    let files: WebFiles
    /// Called with the bound port once the server listens (the log says it too).
    let onListening: @Sendable (Int) -> Void

    /// A web map on `settings`, reading the board with `read` and the time with `now`.
    public init(
        settings: WebSettings, token: AccessToken?, logger: Logger, now: @escaping @Sendable () -> Date = Date.init,
        onListening: @escaping @Sendable (Int) -> Void = { _ in }, read: @escaping @Sendable () -> FleetReading
    ) {
        self.settings = settings
        self.token = token
        self.read = read
        self.now = now
        self.logger = logger
        self.onListening = onListening
        hub = EventHub(maximumClients: settings.maximumClients, maximumQueuedBytes: settings.maximumQueuedBytes)
        feed = Locked(FleetFeed(trailLimit: settings.trailLength))
        files = WebFiles(leafletDirectory: settings.leafletDirectory)
    }

    /// Serves until cancelled or shut down gracefully.
    public func run() async throws {
        let responder = WebResponder(map: self)
        let (host, port, logger, onListening) = (settings.host, settings.port, logger, onListening)
        let app = Application(
            responder: CallbackResponder<WebRequestContext> { request, context in
                try await responder.respond(to: request, context: context)
            },
            configuration: ApplicationConfiguration(address: .hostname(host, port: port), serverName: nil),
            onServerRunning: { channel in
                let bound = channel.localAddress?.port ?? port
                logger.notice(
                    "Serving the fleet map",
                    metadata: [
                        "event": "web.serving", "web.port": "\(bound)",
                        "web.url": "http://\(host.contains(":") ? "[\(host)]" : host):\(bound)/",
                    ])
                onListening(bound)
            },
            logger: logger)
        if let problem = files.problem {
            logger.warning(
                "The page's files are incomplete", metadata: ["event": "web.files.missing", "error": "\(problem)"])
        }
        let hub = self.hub
        try await withGracefulShutdownHandler {
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    do {
                        try await app.runService()
                    } catch let error as CancellationError {
                        throw error
                    } catch {
                        throw WebError(
                            "cannot serve the map on \(host):\(port): \(error); choose another address with --http (web.listen)"
                        )
                    }
                }
                group.addTask { try await frames() }
                defer { group.cancelAll() }
                try await group.next()
            }
        } onGracefulShutdown: {
            hub.close()
        }
    }

    /// Reads the fleet every frame, turns its changes into lines and queues them for the clients.
    private func frames() async throws {
        var quietFrames = 0
        while !Task.isShuttingDownGracefully {
            try await Task.sleep(for: Self.frameInterval)
            let reading = read()
            let at = now()
            // With no page open only the trails are followed (nothing rendered).
            let nobodyReads = hub.isEmpty
            let lines = feed.withLock { $0.advance(to: reading, now: at, producingLines: !nobodyReads) }
            if nobodyReads { continue }
            var frame = lines.isEmpty ? nil : ServerSentEvents.event(lines: lines)
            quietFrames = frame == nil ? quietFrames + 1 : 0
            if quietFrames >= Self.keepAliveFrames {
                quietFrames = 0
                frame = ServerSentEvents.keepAlive
            }
            let dropped = hub.publish(frame: frame) {
                ServerSentEvents.event(name: "snapshot", lines: feed.withLock { $0.snapshot(of: reading, now: at) })
            }
            if dropped > 0 {
                let first = counters.withLock { counters in
                    defer { counters.loggedDrop = true }
                    return !counters.loggedDrop
                }
                if first {
                    logger.notice(
                        "Dropped a page that did not read its event stream fast enough; counted in /api/stats",
                        metadata: [
                            "event": "web.client.dropped", "web.client-buffer": "\(settings.maximumQueuedBytes)",
                        ])
                }
            }
        }
    }

    /// The current fleet's lines, as `--once --json` prints them.
    func fleetLines() -> [String] {
        let reading = read()
        let at = now()
        var lines: [String] = []
        let fleet = reading.fleet
        for entry in BoardView.order(fleet, sort: .relevance, filter: "", now: at) {
            switch entry {
            case .activity(let key):
                guard let row = fleet.rows[key] else { continue }
                lines.append(BoardJSON.row(row, state: fleet.state(of: row, at: at), fleet: fleet))
            case .device(let device):
                lines.append(BoardJSON.device(device, fleet: fleet))
            }
        }
        lines.append(BoardJSON.summary(fleet, now: at, warning: reading.warning, dropped: reading.dropped))
        return lines
    }
}

/// The web map's failure to serve, with what to do.
public struct WebError: Error, CustomStringConvertible, Sendable {
    /// What went wrong and what to do.
    public let description: String

    init(_ description: String) { self.description = description }
}

/// Server-sent events' framing (the HTML standard's text/event-stream).
enum ServerSentEvents {
    /// A comment line that keeps an idle stream open through proxies.
    static let keepAlive = Array(": keep-alive\n\n".utf8)

    /// One event whose data is `lines` (one `data:` line each; the reader gets them joined by
    /// newlines), named `name` when given; a snapshot also sets the reconnection delay.
    static func event(name: String? = nil, lines: [String]) -> [UInt8] {
        var text = ""
        text.reserveCapacity(lines.reduce(32) { $0 + $1.utf8.count + 7 })
        if let name { text += "event: \(name)\nretry: 2000\n" }
        if lines.isEmpty { text += "data: \n" }
        for line in lines {
            text += "data: "
            text += line
            text += "\n"
        }
        text += "\n"
        return Array(text.utf8)
    }
}
