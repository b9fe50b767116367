import Benchmark
import BenchmarkSupport
import Foundation
@_spi(Benchmarks) import Location

/// The test data of Tests/LocationTests/Data.
private let dataDirectory = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("Tests/LocationTests/Data")

/// The real receiver captures of Tests/LocationTests/Data/gpsd-logs.
private let logDirectory = dataDirectory.appendingPathComponent("gpsd-logs")

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

/// The 12 GPX files of Tests/LocationTests/Data/gpx (gpxpy's tests: real tracks, routes, extremes).
private let gpxFiles: [[UInt8]] = {
    let directory = dataDirectory.appendingPathComponent("gpx")
    let names = ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []).filter {
        $0.hasSuffix(".gpx")
    }
    return names.sorted().map { Array((try? Data(contentsOf: directory.appendingPathComponent($0))) ?? Data()) }
}()
/// The points the readers yield from them.
private let gpxFilePoints = gpxFiles.reduce(0) { total, file in
    var decoder = GPXDecoder()
    return total + decoder.decode(file).count
}

/// A long track: the real car drive "around Višnjan" (104 points, a Garmin eTrex 20x) with its
/// segment repeated 100 times, 10,400 points.
private let longTrack: [UInt8] = {
    let file = dataDirectory.appendingPathComponent("gpx/around-visnjan-with-car.gpx")
    let text = String(decoding: (try? Data(contentsOf: file)) ?? Data(), as: UTF8.self)
    guard let open = text.range(of: "<trkseg>"), let close = text.range(of: "</trkseg>") else { return [] }
    let segment = text[open.upperBound..<close.lowerBound]
    return Array(
        (text[..<open.upperBound] + String(repeating: String(segment), count: 100) + text[close.lowerBound...]).utf8)
}()
private let longTrackPoints: Int = {
    var decoder = GPXDecoder()
    return decoder.decode(longTrack).count
}()

/// Every field of the NMEA captures that is a decimal number (latitudes, times, speeds, ...), the
/// texts the NMEA decoder parses: what `DecimalParsing` is measured on beside the standard library.
private let nmeaNumbers: [[UInt8]] = nmeaLogs.flatMap { log in
    log.split(whereSeparator: { $0 == UInt8(ascii: ",") || $0 == UInt8(ascii: "*") || $0 == UInt8(ascii: "\n") })
        .map(Array.init)
        .filter { field in
            !field.isEmpty
                && field.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || $0 == UInt8(ascii: ".") }
                && field.filter { $0 == UInt8(ascii: ".") }.count <= 1 && field != [UInt8(ascii: ".")]
        }
}

/// The fields of a TPV that the gpsd decoder reads, decoded by Foundation's `JSONDecoder`: the
/// baseline of the hand-written scanner (`GpsdJSONScanner`) on the same lines, JSON only (no epoch
/// merging, no ISO 8601 time: those cost the decoder more).
private struct CodableTPV: Decodable {
    var `class`: String
    var device: String?
    var mode: Int?
    var time: String?
    var lat: Double?
    var lon: Double?
    var altHAE: Double?
    var altMSL: Double?
    var speed: Double?
    var track: Double?
    var eph: Double?
    var epx: Double?
    var epy: Double?
    var status: Int?
}

/// The TPV lines one by one, for the Codable baseline.
private let tpvLineList: [Data] = tpvLines.split(separator: UInt8(ascii: "\n")).map { Data($0) }

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

    Benchmark("GPX decode: \(gpxFilePoints) points of 12 files") { benchmark in
        benchmark.measuringCPU {
            for _ in benchmark.scaledIterations {
                for file in gpxFiles {
                    var decoder = GPXDecoder()
                    blackHole(decoder.decode(file))
                }
            }
        }
    }

    Benchmark("GPX decode, baseline (XMLParser, before issue 20): \(gpxFilePoints) points of 12 files") { benchmark in
        benchmark.measuringCPU {
            for _ in benchmark.scaledIterations {
                for file in gpxFiles {
                    var decoder = BaselineGPXDecoder()
                    blackHole(decoder.decode(file))
                }
            }
        }
    }

    Benchmark("GPX decode: a \(longTrack.count / 1024) KiB track of \(longTrackPoints) points") { benchmark in
        benchmark.measuringCPU {
            for _ in benchmark.scaledIterations {
                var decoder = GPXDecoder()
                blackHole(decoder.decode(longTrack))
            }
        }
    }

    Benchmark(
        "GPX decode, baseline (XMLParser, before issue 20): a \(longTrack.count / 1024) KiB track of \(longTrackPoints) points"
    ) { benchmark in
        benchmark.measuringCPU {
            for _ in benchmark.scaledIterations {
                var decoder = BaselineGPXDecoder()
                blackHole(decoder.decode(longTrack))
            }
        }
    }

    Benchmark("Decimal numbers: \(nmeaNumbers.count) fields of the NMEA captures, DecimalParsing") { benchmark in
        benchmark.measuringCPU {
            for _ in benchmark.scaledIterations {
                for field in nmeaNumbers {
                    blackHole(field.withUnsafeBufferPointer { DecimalParsing.double($0) })
                }
            }
        }
    }

    Benchmark("Decimal numbers: \(nmeaNumbers.count) fields of the NMEA captures, baseline Double(Substring)") {
        benchmark in
        let texts = nmeaNumbers.map { Substring(String(decoding: $0, as: UTF8.self)) }
        benchmark.measuringCPU {
            for _ in benchmark.scaledIterations {
                for text in texts { blackHole(Double(text)) }
            }
        }
    }

    Benchmark("Decimal numbers: \(nmeaNumbers.count) fields of the NMEA captures, baseline bytes to Double(Substring)")
    {
        benchmark in
        benchmark.measuringCPU {
            for _ in benchmark.scaledIterations {
                for field in nmeaNumbers { blackHole(Double(Substring(String(decoding: field, as: UTF8.self)))) }
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

    Benchmark("gpsd TPV decode, baseline JSONDecoder (the JSON alone): \(tpvLineCount) TPV lines") { benchmark in
        let decoder = JSONDecoder()
        benchmark.measuringCPU {
            for _ in benchmark.scaledIterations {
                for line in tpvLineList { blackHole(try? decoder.decode(CodableTPV.self, from: line)) }
            }
        }
    }
}
