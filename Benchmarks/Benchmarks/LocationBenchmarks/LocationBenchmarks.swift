import Benchmark
import BenchmarkSupport
import Foundation
import Location

/// The real receiver captures of Tests/LocationTests/Data/gpsd-logs.
private let logDirectory = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("Tests/LocationTests/Data/gpsd-logs")

private let logNames: [String] = {
    let names = (try? FileManager.default.contentsOfDirectory(atPath: logDirectory.path)) ?? []
    return names.filter { $0.hasSuffix(".log") }.sorted()
}()

/// Every NMEA log, as read from the receivers.
private let nmeaLogs: [[UInt8]] = logNames.map {
    Array((try? Data(contentsOf: logDirectory.appendingPathComponent($0))) ?? Data())
}
/// Lines of the logs that hold an NMEA sentence (`$` or `!`), the unit of the NMEA throughput.
private let nmeaSentenceCount = nmeaLogs.reduce(0) { total, log in
    total
        + log.split(separator: UInt8(ascii: "\n")).filter {
            $0.contains(UInt8(ascii: "$")) || $0.contains(UInt8(ascii: "!"))
        }.count
}
/// gpsd's TPV lines from the logs' .chk files (what gpsd sent when it replayed them).
private let tpvLines: [UInt8] = {
    var lines: [UInt8] = []
    for name in logNames {
        let bytes = Array((try? Data(contentsOf: logDirectory.appendingPathComponent(name + ".chk"))) ?? Data())
        for line in bytes.split(separator: UInt8(ascii: "\n")) where line.starts(with: Array("{\"class\":\"TPV\"".utf8))
        {
            lines += line
            lines.append(UInt8(ascii: "\n"))
        }
    }
    return lines
}()
private let tpvLineCount = tpvLines.filter { $0 == UInt8(ascii: "\n") }.count

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .myeline()

    Benchmark("NMEA decode: \(nmeaSentenceCount) sentences of 18 real captures") { benchmark in
        benchmark.measuringCPU {
            for _ in benchmark.scaledIterations {
                for log in nmeaLogs {
                    var decoder = NMEADecoder()
                    blackHole(decoder.decode(log))
                }
            }
        }
    }

    Benchmark("gpsd TPV decode: \(tpvLineCount) TPV lines") { benchmark in
        benchmark.measuringCPU {
            for _ in benchmark.scaledIterations {
                var decoder = GpsdDecoder()
                blackHole(decoder.decode(tpvLines))
            }
        }
    }
}
