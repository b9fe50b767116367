import Foundation
import Location

/// The real receiver captures and GPX files in `Data/` (see `Data/README.md`).
enum TestData {
    /// The directory holding `gpsd-logs/` and `gpx/`.
    static let directory: URL = {
        guard let url = Bundle.module.url(forResource: "Data", withExtension: nil) else {
            fatalError("the LocationTests bundle has no Data directory")
        }
        return url
    }()

    /// Every gpsd test log's name, such as `bu353s4.log`, sorted.
    static let gpsdLogs: [String] = {
        let names =
            (try? FileManager.default.contentsOfDirectory(atPath: directory.appendingPathComponent("gpsd-logs").path))
            ?? []
        return names.filter { $0.hasSuffix(".log") }.sorted()
    }()

    /// The path of a file under `Data/`.
    static func path(_ relative: String) -> String {
        directory.appendingPathComponent(relative).path
    }

    /// The bytes of a file under `Data/`.
    static func bytes(_ relative: String) throws -> [UInt8] {
        Array(try Data(contentsOf: directory.appendingPathComponent(relative)))
    }
}
