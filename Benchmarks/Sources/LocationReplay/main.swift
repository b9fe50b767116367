// Replays a location file through Location's FileSource as fast as possible and reports its
// throughput and peak resident memory, for the GPX reader's memory figure in docs/benchmarks.md:
//
//   location-replay generate PATH MEGABYTES   writes a GPX track of that size (1 point a second)
//   location-replay replay PATH               FileSource, maximum speed, every update consumed
//   location-replay baseline PATH             the GPX reader before issue 20: the whole file read,
//                                             then Foundation's XMLParser (BaselineGPXDecoder)
//
// Peak resident memory is the process's VmHWM (/proc/self/status), in MiB.
import Foundation
import Location

/// The process's peak resident memory so far, in MiB (Linux).
func peakResidentMiB() -> Double {
    let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
    for line in status.split(separator: "\n") where line.hasPrefix("VmHWM:") {
        let kilobytes = line.split(separator: " ").dropFirst().first.flatMap { Double($0) } ?? 0
        return kilobytes / 1024
    }
    return .nan
}

/// Writes a GPX 1.1 track of about `megabytes` MB: points 1 s apart, 10 m apart, heading east.
func generate(path: String, megabytes: Int) throws {
    FileManager.default.createFile(atPath: path, contents: nil)
    let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
    defer { try? handle.close() }
    try handle.write(
        contentsOf: Data(
            """
            <?xml version="1.0" encoding="UTF-8"?>
            <gpx version="1.1" creator="location-replay" xmlns="http://www.topografix.com/GPX/1/1">
            <trk><name>generated</name><trkseg>

            """.utf8))
    let start = 1_700_000_000.0
    let formatter = ISO8601DateFormatter()
    var written = 0
    var index = 0
    var batch = ""
    while written < megabytes * 1_000_000 {
        let latitude = 45.25 + Double(index % 1000) * 0.000001
        let longitude = 13.5 + Double(index) * 0.0001
        let time = formatter.string(from: Date(timeIntervalSince1970: start + Double(index)))
        batch += String(
            format: "<trkpt lat=\"%.9f\" lon=\"%.9f\"><ele>%.2f</ele><time>%@</time></trkpt>\n", latitude,
            longitude, 200 + Double(index % 50), time)
        index += 1
        if batch.utf8.count > 1 << 20 {
            written += batch.utf8.count
            try handle.write(contentsOf: Data(batch.utf8))
            batch = ""
        }
    }
    try handle.write(contentsOf: Data((batch + "</trkseg></trk></gpx>\n").utf8))
    print("wrote \(index) points, \(written + batch.utf8.count) bytes to \(path)")
}

func replay(path: String) async throws {
    let source = try FileSource(path: path, options: FileSource.Options(pacing: .asFastAsPossible))
    let began = ContinuousClock.now
    var fixes = 0
    for try await update in source.updates where update.fix != nil { fixes += 1 }
    let seconds = (ContinuousClock.now - began) / .seconds(1)
    print(
        String(
            format: "FileSource: %d fixes in %.2f s (%.0f/s), peak resident %.1f MiB", fixes, seconds,
            Double(fixes) / seconds, peakResidentMiB()))
}

func baseline(path: String) throws {
    let began = ContinuousClock.now
    let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
    var decoder = BaselineGPXDecoder()
    let points = decoder.decode(bytes)
    let seconds = (ContinuousClock.now - began) / .seconds(1)
    print(
        String(
            format: "baseline (XMLParser): %d points in %.2f s (%.0f/s), peak resident %.1f MiB", points.count,
            seconds, Double(points.count) / seconds, peakResidentMiB()))
}

let arguments = CommandLine.arguments
switch (arguments.count > 1 ? arguments[1] : "", arguments.count) {
case ("generate", 4): try generate(path: arguments[2], megabytes: Int(arguments[3]) ?? 100)
case ("replay", 3): try await replay(path: arguments[2])
case ("baseline", 3): try baseline(path: arguments[2])
default:
    FileHandle.standardError.write(
        Data("usage: location-replay generate PATH MEGABYTES | replay PATH | baseline PATH\n".utf8))
    exit(64)
}
