import Foundation

/// The page's files and Leaflet's, read once at start: the page from this target's resources (next
/// to the executable as SwiftPM builds it, or in PREFIX/share/myeline/web beside PREFIX/bin where
/// deploy/install.sh puts it, or /usr/local/share or /usr/share), Leaflet from Debian's libjs-leaflet.
struct WebFiles: Sendable {
    /// The page's files by name.
    let page: [String: [UInt8]]
    /// Leaflet's files by name; empty when libjs-leaflet is not installed.
    let leaflet: [String: [UInt8]]
    /// What is missing and how to fix it, for the log; nil when everything is there.
    let problem: String?

    /// The resource bundle's name beside the executable, as SwiftPM names it.
    static let bundleName = "Myeline_AggregatorWeb.resources"

    init(leafletDirectory: String) {
        let executable = URL(fileURLWithPath: CommandLine.arguments.first ?? ".").resolvingSymlinksInPath()
        let candidates = [
            executable.deletingLastPathComponent().appendingPathComponent(Self.bundleName).appendingPathComponent(
                "Page"),
            Bundle.main.bundleURL.appendingPathComponent(Self.bundleName).appendingPathComponent("Page"),
            // deploy/install.sh puts it in PREFIX/share/myeline/web beside PREFIX/bin.
            executable.deletingLastPathComponent().deletingLastPathComponent()
                .appendingPathComponent("share/myeline/web"),
            URL(fileURLWithPath: "/usr/local/share/myeline/web"),
            URL(fileURLWithPath: "/usr/share/myeline/web"),
        ]
        var page: [String: [UInt8]] = [:]
        for directory in candidates {
            let found = WebRoutes.pageFiles.keys.compactMap { name in
                FileManager.default.contents(atPath: directory.appendingPathComponent(name).path).map {
                    (name, Array($0))
                }
            }
            if found.count == WebRoutes.pageFiles.count {
                page = Dictionary(uniqueKeysWithValues: found)
                break
            }
        }
        var leaflet: [String: [UInt8]] = [:]
        for name in WebRoutes.leafletFiles.keys {
            if let data = FileManager.default.contents(atPath: "\(leafletDirectory)/\(name)") {
                leaflet[name] = Array(data)
            }
        }
        var problems: [String] = []
        if page.isEmpty {
            problems.append(
                "the map's page is missing (looked in \(candidates.map(\.path).joined(separator: ", "))): install it with deploy/install.sh"
            )
        }
        if leaflet.count < WebRoutes.leafletFiles.count {
            problems.append(
                "Leaflet is missing from \(leafletDirectory): install Debian's libjs-leaflet (apt install libjs-leaflet); the page shows the list without a map"
            )
        }
        self.page = page
        self.leaflet = leaflet
        self.problem = problems.isEmpty ? nil : problems.joined(separator: "; ")
    }
}
