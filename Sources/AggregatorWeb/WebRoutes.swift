import Foundation

/// What a request asks for, decided from its method, path and query alone (pure, tested as a
/// table): the page's files, Leaflet's, the API, or a clean refusal.
public enum WebRoute: Hashable, Sendable {
    /// One of the page's own files (``WebRoutes/pageFiles``), by name.
    case page(String)
    /// A file of Debian's libjs-leaflet, by its path under the package's directory.
    case leaflet(String)
    /// The current fleet: the lines of `--once --json`.
    case fleet
    /// The change stream: the lines of `--follow --json`, as server-sent events.
    case events
    /// Each activity's recent trail.
    case trails
    /// The page's settings: tiles, attribution, trail length.
    case settings
    /// The web service's own counts: clients, refusals, drops, bad requests.
    case stats
    /// The icon browsers ask for by themselves: 204, no content (not counted as a wrong path).
    case favicon
    /// No such path: 404.
    case notFound
    /// A method other than GET or HEAD: 405.
    case methodNotAllowed
    /// A query the path does not take, or a malformed one: 400, with the reason.
    case badQuery(String)
}

/// The map's URL space.
public enum WebRoutes {
    /// The page's files (in the target's `Page` resources) and their media types.
    public static let pageFiles: [String: String] = [
        "index.html": "text/html; charset=utf-8",
        "app.js": "text/javascript; charset=utf-8",
        "fleet.js": "text/javascript; charset=utf-8",
        "map.js": "text/javascript; charset=utf-8",
        "list.js": "text/javascript; charset=utf-8",
        "style.css": "text/css; charset=utf-8",
    ]

    /// Leaflet's files the page loads, under /usr/share/javascript/leaflet, and their media types.
    public static let leafletFiles: [String: String] = [
        "leaflet.js": "text/javascript; charset=utf-8",
        "leaflet.css": "text/css; charset=utf-8",
    ]

    /// The query parameter that carries the access token (besides the header and the cookie).
    public static let tokenParameter = "token"

    /// The route for `method` on `path` with its raw `query` (without the `?`), if any.
    public static func route(method: String, path: String, query: String?) -> WebRoute {
        guard method == "GET" || method == "HEAD" else { return .methodNotAllowed }
        let route: WebRoute
        switch path {
        case "/", "/index.html": route = .page("index.html")
        case "/api/fleet": route = .fleet
        case "/api/events": route = .events
        case "/api/trails": route = .trails
        case "/api/settings": route = .settings
        case "/api/stats": route = .stats
        case "/favicon.ico": route = .favicon
        default:
            if path.hasPrefix("/leaflet/"), let file = leafletFiles.keys.first(where: { path == "/leaflet/" + $0 }) {
                route = .leaflet(file)
            } else if let file = pageFiles.keys.first(where: { path == "/" + $0 }) {
                route = .page(file)
            } else {
                return .notFound
            }
        }
        if let problem = queryProblem(query) { return .badQuery(problem) }
        return route
    }

    /// Why `query` is refused: only `token=…` is taken, once, by any path (the page's address
    /// carries it the first time); nil when it is absent or that.
    static func queryProblem(_ query: String?) -> String? {
        guard let query, !query.isEmpty else { return nil }
        var sawToken = false
        for part in query.split(separator: "&", omittingEmptySubsequences: false) {
            let pieces = part.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard pieces.count == 2, pieces[0] == Substring(tokenParameter) else {
                return "unknown query parameter: only token=… is taken"
            }
            guard !sawToken else { return "token given twice" }
            sawToken = true
        }
        return nil
    }

    /// The `token` parameter of `query`, percent-decoded; nil when absent or malformed.
    public static func token(inQuery query: String?) -> String? {
        guard let query else { return nil }
        for part in query.split(separator: "&") {
            let pieces = part.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            if pieces.count == 2, pieces[0] == Substring(tokenParameter) {
                return String(pieces[1]).removingPercentEncoding
            }
        }
        return nil
    }
}
