import Board
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// The web service's counts of what it answered and refused, for `/api/stats` and a log line the
/// first time each kind of refusal happens.
struct WebCounters: Sendable {
    var requests = 0
    var notFound = 0
    var badQuery = 0
    var unauthorized = 0
    var methodNotAllowed = 0
    var logged: Set<String> = []
    var loggedDrop = false

    /// Counts a refusal; true the first time of its kind (to be logged).
    mutating func refuse(_ kind: String) -> Bool {
        switch kind {
        case "not-found": notFound += 1
        case "bad-query": badQuery += 1
        case "unauthorized": unauthorized += 1
        default: methodNotAllowed += 1
        }
        return logged.insert(kind).inserted
    }
}

/// A request's context: Hummingbird's, and the connection, which is closed when its client is dropped.
struct WebRequestContext: RequestContext {
    var coreContext: CoreRequestContextStorage
    let channel: any Channel

    init(source: ApplicationRequestContextSource) {
        coreContext = CoreRequestContextStorage(source: source)
        channel = source.channel
    }
}

/// Answers the web map's requests: the access token first, then the route.
struct WebResponder: Sendable {
    let map: WebMap

    /// The Content-Security-Policy of every answer: scripts, styles and connections from this
    /// server only (no inline script), images from it and the tiles' origin.
    static func contentSecurityPolicy(tilesOrigin: String?) -> String {
        let images = ["'self'", "data:"] + (tilesOrigin.map { [$0] } ?? [])
        return "default-src 'none'; script-src 'self'; style-src 'self'; img-src \(images.joined(separator: " ")); "
            + "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    }

    func respond(to request: Request, context: WebRequestContext) async throws -> Response {
        let query = request.uri.query
        let route = WebRoutes.route(method: request.method.rawValue, path: request.uri.path, query: query)
        map.counters.withLock { $0.requests += 1 }
        let queryToken = WebRoutes.token(inQuery: query)
        if let token = map.token,
            !token.admits(
                authorization: request.headers[.authorization], cookie: request.headers[.cookie],
                queryToken: queryToken)
        {
            return refuse(
                "unauthorized", .unauthorized,
                "An access token is required: open the address with ?token=… or send Authorization: Bearer …\n",
                path: request.uri.path, extra: [.wwwAuthenticate: "Bearer"])
        }
        var response: Response
        switch route {
        case .page(let name):
            guard let bytes = map.files.page[name] else {
                return text(.internalServerError, map.files.problem ?? "the page is missing\n")
            }
            response = bytesResponse(bytes, type: WebRoutes.pageFiles[name] ?? "application/octet-stream")
        case .leaflet(let name):
            guard let bytes = map.files.leaflet[name] else {
                return text(
                    .notFound, "Leaflet is missing: install Debian's libjs-leaflet (apt install libjs-leaflet)\n")
            }
            response = bytesResponse(bytes, type: WebRoutes.leafletFiles[name] ?? "application/octet-stream")
            response.headers[.cacheControl] = "max-age=3600"
        case .fleet:
            let lines = map.fleetLines()
            response = bytesResponse(Array((lines.joined(separator: "\n") + "\n").utf8), type: "application/x-ndjson")
        case .trails:
            response = bytesResponse(Array(map.feed.withLock { $0.trailsJSON }.utf8), type: "application/json")
        case .settings:
            response = bytesResponse(Array(settingsJSON.utf8), type: "application/json")
        case .stats:
            response = bytesResponse(Array(statsJSON.utf8), type: "application/json")
        case .events:
            guard let client = map.hub.add() else {
                return refuse(
                    "too-many-clients", .serviceUnavailable,
                    "Too many pages follow the map (web.max-clients is \(map.settings.maximumClients)); close one and retry\n",
                    path: request.uri.path, extra: [.retryAfter: "5"], counted: false)
            }
            let channel = context.channel
            response = events(client) { channel.close(promise: nil) }
        case .favicon:
            response = Response(status: .noContent, headers: commonHeaders(type: "image/x-icon"))
        case .notFound:
            return refuse("not-found", .notFound, "No such page: the map is at /\n", path: request.uri.path)
        case .methodNotAllowed:
            return refuse(
                "method-not-allowed", .methodNotAllowed, "Only GET and HEAD are served\n", path: request.uri.path,
                extra: [.allow: "GET, HEAD"])
        case .badQuery(let reason):
            return refuse("bad-query", .badRequest, "Bad query: \(reason)\n", path: request.uri.path)
        }
        if let token = map.token, queryToken != nil { response.headers[.setCookie] = token.cookie }
        return response
    }

    private var settingsJSON: String {
        var object = JSONObject()
        object["tiles"] = map.settings.tiles.map(JSONValue.string)
        object["attribution"] = map.settings.tiles == nil ? nil : .string(map.settings.tilesAttribution)
        object["trail-length"] = .int(map.settings.trailLength)
        object["leaflet"] = .bool(map.files.leaflet.count == WebRoutes.leafletFiles.count)
        return object.text
    }

    private var statsJSON: String {
        let counters = map.counters.withLock { $0 }
        let clients = map.hub.counts
        var object = JSONObject()
        object["requests"] = .int(counters.requests)
        object["not-found"] = .int(counters.notFound)
        object["bad-query"] = .int(counters.badQuery)
        object["unauthorized"] = .int(counters.unauthorized)
        object["method-not-allowed"] = .int(counters.methodNotAllowed)
        object["clients"] = .int(clients.clients)
        object["clients-refused"] = .int(clients.refused)
        object["clients-dropped"] = .int(clients.dropped)
        return object.text
    }

    private func events(_ client: EventHub.Client, closeConnection: @escaping @Sendable () -> Void) -> Response {
        let hub = map.hub
        var headers = commonHeaders(type: "text/event-stream")
        headers[.cacheControl] = "no-store"
        // nginx buffers a proxied answer unless told not to; events must go out as they come.
        headers[HTTPField.Name("X-Accel-Buffering")!] = "no"
        return Response(
            status: .ok, headers: headers,
            body: ResponseBody { writer in
                defer { hub.remove(client.id) }
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask {
                        // A dropped client's bell rings before it is finished: its connection is
                        // closed, which ends a write blocked on a client that does not read.
                        var dropped = false
                        while await client.closed.wait() { dropped = true }
                        if dropped { closeConnection() }
                    }
                    defer { group.cancelAll() }
                    while await client.doorbell.wait() {
                        guard let bytes = hub.take(client.id) else { break }
                        if !bytes.isEmpty { try await writer.write(ByteBuffer(bytes: bytes)) }
                    }
                }
                try await writer.finish(nil)
            })
    }

    private func refuse(
        _ kind: String, _ status: HTTPResponse.Status, _ message: String, path: String,
        extra: HTTPFields = [:], counted: Bool = true
    ) -> Response {
        // Refused pages are counted by the event clients; the others here. Each kind is logged once.
        let first = map.counters.withLock { counters in
            counted ? counters.refuse(kind) : counters.logged.insert(kind).inserted
        }
        if first {
            map.logger.notice(
                "Refused a request; further ones of its kind are counted in /api/stats",
                metadata: [
                    "event": "web.request.refused", "web.refusal": "\(kind)", "web.path": "\(path.prefix(200))",
                    "web.status": "\(status.code)",
                ])
        }
        var response = text(status, message)
        for field in extra { response.headers[field.name] = field.value }
        return response
    }

    private func text(_ status: HTTPResponse.Status, _ message: String) -> Response {
        Response(
            status: status, headers: commonHeaders(type: "text/plain; charset=utf-8"),
            body: ResponseBody(byteBuffer: ByteBuffer(string: message)))
    }

    private func bytesResponse(_ bytes: [UInt8], type: String) -> Response {
        Response(
            status: .ok, headers: commonHeaders(type: type), body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes)))
    }

    private func commonHeaders(type: String) -> HTTPFields {
        var headers = HTTPFields()
        headers[.contentType] = type
        headers[.contentSecurityPolicy] = Self.contentSecurityPolicy(tilesOrigin: map.settings.tilesOrigin)
        headers[HTTPField.Name("X-Content-Type-Options")!] = "nosniff"
        headers[HTTPField.Name("Referrer-Policy")!] = "no-referrer"
        headers[.cacheControl] = "no-store"
        return headers
    }
}
