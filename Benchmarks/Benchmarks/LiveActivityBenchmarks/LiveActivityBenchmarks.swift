import Benchmark
import BenchmarkSupport
import Foundation
import LiveActivity
import MyelineWire

/// The full update envelope of docs/topics.md, as decoded.
private let envelope = SampleEnvelope.envelope(device: "van-7")
/// The same envelope's bytes, as an agent publishes them.
private let payload = Data(SampleEnvelope.payload(device: "van-7"))

let benchmarks: @Sendable () -> Void = {
    Benchmark("Envelope encode: WireCodec.encode (JSONEncoder, then its checking decode)", configuration: .myeline()) {
        benchmark in
        benchmark.measuringCPU {
            for _ in benchmark.scaledIterations {
                blackHole(try! WireCodec.encode(envelope))
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
