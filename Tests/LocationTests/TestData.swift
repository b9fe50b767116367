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

    /// Every capture under `Data/` that has gpsd's decoding of it beside it (`NAME.chk`), as paths
    /// relative to `Data/` (such as `gpsd-logs/bu353s4.log`), sorted.
    static let capturesWithCheckFiles: [String] = {
        let names = FileManager.default.enumerator(atPath: directory.path)?.compactMap { $0 as? String } ?? []
        let all = Set(names)
        return names.filter { $0.hasSuffix(".chk") && all.contains(String($0.dropLast(4))) }.map {
            String($0.dropLast(4))
        }
        .sorted()
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
