import Benchmark
import BenchmarkSupport
import Foundation
import LiveActivity
@_spi(Fuzzing) import MyelineWire

/// The full update envelope of docs/topics.md, as decoded.
private let envelope = SampleEnvelope.envelope(device: "van-7")
/// The same envelope's bytes, as an agent publishes them.
private let payload = Data(SampleEnvelope.payload(device: "van-7"))

let benchmarks: @Sendable () -> Void = {
    // The agent's payload of every fix (issue 24): before, JSONEncoder (ContentJSON's settings) then the
    // checking decode; now the direct writer, then the same decode (both with today's decode: the track
    // point's direct reader came with the writer).
    let point = TrackPoint(
        device: try! DeviceID("van-7"), activity: "0f5c8e1a-3b7d-4c2e-9a6f-1d2e3f4a5b6c", seq: 4711,
        time: SampleEnvelope.now, latitude: 44.068900166666666, longitude: -121.31485183333333, altitude: 1089.5,
        speed: 0.026, course: 211.4, horizontalAccuracy: 2.4, fix: .fix3D, satellites: 9)
    // The baseline: ContentJSON.encoder's settings (package-level, so not visible from this package).
    let contentEncoder = JSONEncoder()
    contentEncoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    contentEncoder.dateEncodingStrategy = .custom { date, encoder in
        var container = encoder.singleValueContainer()
        try container.encode((date.timeIntervalSince1970 * 1000).rounded() / 1000)
    }
    // An envelope at every heartbeat, a status after each connection (issue 24): before, JSONEncoder then
    // the checking decode; now the direct writer (WireJSONEncodable), then the same decode.
    let onlineStatus = StatusMessage.online(
        device: try! DeviceID("van-7"), since: SampleEnvelope.now, dropped: 0, instance: "4f1c9a2e", clockOffset: 12)
    Benchmark(
        "Envelope encode: JSONEncoder, then the checking decode (WireCodec.encode before)", configuration: .myeline()
    ) { benchmark in
        benchmark.measuringCPU {
            for _ in benchmark.scaledIterations {
                blackHole(
                    try! WireCodec.decode(
                        ActivityEnvelope<LocationActivityAttributes>.self,
                        from: Array(try! contentEncoder.encode(envelope))))
            }
        }
    }
    Benchmark(
        "Envelope encode: WireCodec.encode (the direct writer, then its checking decode)", configuration: .myeline()
    ) { benchmark in
        benchmark.measuringCPU {
            for _ in benchmark.scaledIterations {
                blackHole(try! WireCodec.encode(envelope))
            }
        }
    }
    Benchmark(
        "Status encode: JSONEncoder, then the checking decode (WireCodec.encode before)", configuration: .myeline()
    ) {
        benchmark in
        benchmark.measuringCPU {
            for _ in benchmark.scaledIterations {
                blackHole(
                    try! WireCodec.decode(StatusMessage.self, from: Array(try! contentEncoder.encode(onlineStatus))))
            }
        }
    }
    Benchmark(
        "Status encode: WireCodec.encode (the direct writer, then its checking decode)", configuration: .myeline()
    ) {
        benchmark in
        benchmark.measuringCPU {
            for _ in benchmark.scaledIterations {
                blackHole(try! WireCodec.encode(onlineStatus))
            }
        }
    }
    Benchmark("Track point encode: JSONEncoder (before)", configuration: .myeline()) { benchmark in
        benchmark.measuringCPU {
            for _ in benchmark.scaledIterations {
                blackHole(try! contentEncoder.encode(point))
            }
        }
    }
    Benchmark("Track point encode: TrackPoint.directJSON", configuration: .myeline()) { benchmark in
        benchmark.measuringCPU {
            for _ in benchmark.scaledIterations {
                blackHole(point.directJSON()!)
            }
        }
    }
    Benchmark(
        "Track point encode: JSONEncoder, then the checking decode (WireCodec.encode before, with today's decode)",
        configuration: .myeline()
    ) { benchmark in
        benchmark.measuringCPU {
            for _ in benchmark.scaledIterations {
                blackHole(try! WireCodec.decode(TrackPoint.self, from: Array(try! contentEncoder.encode(point))))
            }
        }
    }
    Benchmark(
        "Track point encode: WireCodec.encode (the direct writer, then its checking decode)", configuration: .myeline()
    ) { benchmark in
        benchmark.measuringCPU {
            for _ in benchmark.scaledIterations {
                blackHole(try! WireCodec.encode(point))
            }
        }
    }

    Benchmark("Envelope decode: WireCodec.decode", configuration: .myeline()) { benchmark in
        benchmark.measuringCPU {
            for _ in benchmark.scaledIterations {
                blackHole(try! WireCodec.decode(ActivityEnvelope<LocationActivityAttributes>.self, from: payload))
            }
        }
    }

    // What a board's bootstrap brings for every device, beside its envelopes.
    let status = Array(
        try! WireCodec.encode(
            StatusMessage.online(
                device: try! DeviceID("van-7"), since: SampleEnvelope.now, dropped: 12, instance: "4f1c9a2e")))
    Benchmark("Status decode: WireCodec.decode", configuration: .myeline()) { benchmark in
        benchmark.measuringCPU {
            for _ in benchmark.scaledIterations {
                blackHole(try! WireCodec.decode(StatusMessage.self, from: status))
            }
        }
    }

    Benchmark("Activity state machine step: ActivityStateMachine.update", configuration: .myeline(scalingFactor: .kilo))
    { benchmark in
        let start = SampleEnvelope.now
        var machine = ActivityStateMachine(staleDate: start + 120, now: start)
        benchmark.measuringCPU {
            for step in benchmark.scaledIterations {
                let now = start + Double(step)
                blackHole(try! machine.update(staleDate: now + 120, now: now))
            }
        }
    }

    // The agent's step: the state machine under the activity's lock, the content stored and the event recorded.
    let center = ActivityCenter(clock: SystemWallClock())
    let content = ActivityContent(state: envelope.content.state, staleDate: .distantFuture)
    let activity = try! center.request(attributes: envelope.attributes, content: content)
    Benchmark("Activity update: Activity.update (no subscriber)", configuration: .myeline(scalingFactor: .kilo)) {
        benchmark in
        benchmark.measuringCPU {
            for _ in benchmark.scaledIterations {
                try! activity.update(content)
            }
        }
    }

    // What Activity.update spends on ActivityKit's 4 KiB limit: the content state encoded once.
    Benchmark(
        "Content size check: ActivityModel.validateSize (part of Activity.update)",
        configuration: .myeline(scalingFactor: .kilo)
    ) { benchmark in
        benchmark.measuringCPU {
            for _ in benchmark.scaledIterations {
                try! ActivityModel<LocationActivityAttributes>.validateSize(of: content.state)
            }
        }
    }
}
