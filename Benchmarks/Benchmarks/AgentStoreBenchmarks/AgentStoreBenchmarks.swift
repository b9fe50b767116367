import Benchmark
import BenchmarkSupport
import Foundation
import LiveActivity
import Tracking

@_spi(Benchmarks) import AgentStore

/// The agent's activity record, saved to the spool at every fix (issue 24): its trip totals encoded,
/// then the whole record with a header, the way it was (`JSONEncoder` twice) and the way it is
/// (written directly, the attributes' JSON kept from the fix before).
let benchmarks: @Sendable () -> Void = {
    let device = try! DeviceID("van-7")
    let attributes = LocationActivityAttributes(
        deviceID: device, name: "Van 7", vehicle: "B-MY 1234", driver: "Ana",
        destination: .init(name: "Depot North", latitude: 52.5651, longitude: 13.3343))
    // A running trip's totals, as the tracker takes them at a fix (no push update).
    let totals = TripAccumulator.Snapshot(
        distance: 12_345.678901234567, elapsed: 1_834.250871968269, paused: false,
        lastCounted: Coordinate(latitude: 52.520008166666666, longitude: 13.404954333333333),
        lastCountedAccuracy: 2.4, startDistance: 6_123.456789012345)
    func record(totals: Data) -> PersistedActivity<LocationActivityAttributes> {
        PersistedActivity(
            activityID: "0f5c8e1a-3b7d-4c2e-9a6f-1d2e3f4a5b6c", attributesType: LocationActivityAttributes.typeName,
            lastSeq: 1_835, trackSeq: 1_834, attributes: attributes, tripTotals: totals,
            startedAt: Date(timeIntervalSince1970: 1_700_000_000.123))
    }

    // The baselines make an encoder for each encode, as AgentCore.record(of:now:) and ActivityStateStore did.
    Benchmark("Trip totals encode: JSONEncoder (before)", configuration: .myeline()) { benchmark in
        benchmark.measuringCPU {
            for _ in benchmark.scaledIterations {
                blackHole(try! JSONEncoder().encode(totals))
            }
        }
    }
    Benchmark("Trip totals encode: Snapshot.directJSON", configuration: .myeline()) { benchmark in
        benchmark.measuringCPU {
            for _ in benchmark.scaledIterations {
                blackHole(totals.directJSON()!)
            }
        }
    }
    Benchmark(
        "Activity record encode: the totals, then the file, through JSONEncoder (before)", configuration: .myeline()
    ) { benchmark in
        benchmark.measuringCPU {
            for _ in benchmark.scaledIterations {
                let saved = record(totals: try! JSONEncoder().encode(totals))
                blackHole(try! ActivityRecordEncoder.encodeWithJSONEncoder(saved))
            }
        }
    }
    // One encoder for the activity, as the spool keeps one per open record: its first save encodes the
    // attributes (the setup), every one after reuses their JSON. (A benchmark's closure runs once per
    // iteration: an encoder made inside it would encode them every time.)
    var encoder = ActivityRecordEncoder<LocationActivityAttributes>()
    Benchmark("Activity record encode: the totals, then the file, written directly", configuration: .myeline()) {
        benchmark in
        benchmark.measuringCPU {
            for _ in benchmark.scaledIterations {
                let saved = record(totals: Data(totals.directJSON()!))
                blackHole(try! encoder.encode(saved))
            }
        }
    } setup: {
        encoder = ActivityRecordEncoder()
        _ = try! encoder.encode(record(totals: Data(totals.directJSON()!)))
    }
    Benchmark(
        "Activity record encode: the totals, then the file, written directly, the attributes encoded too",
        configuration: .myeline()
    ) { benchmark in
        benchmark.measuringCPU {
            for _ in benchmark.scaledIterations {
                var first = ActivityRecordEncoder<LocationActivityAttributes>()
                blackHole(try! first.encode(record(totals: Data(totals.directJSON()!))))
            }
        }
    }
}
