import Benchmark
import BenchmarkSupport
import Board
import Foundation
import LiveActivity
import MyelineWire

private let now = SampleEnvelope.now

/// How many rows one iteration of the reducer benchmarks updates, and how many times each: together one
/// iteration's 1,000 envelopes (the `.kilo` scaling factor).
private let updatedRows = 100
private let updatesPerRow = 10

/// The envelopes one iteration of the reducer benchmarks applies: seq 2 to 11 of the fleet's first 100
/// rows, row after row, each newer than the row it updates (so none is dropped as outdated).
private let updates: [BoardInput] = (0..<updatesPerRow).flatMap { round in
    (0..<updatedRows).map { index in
        .envelope(SampleEnvelope.envelope(device: SampleEnvelope.device(index), seq: 2 + round))
    }
}

/// The seq 1 envelope of the `index`th device, with a relevance score from 0 to 99 so that sorting has
/// work to do.
private func start(_ index: Int) -> ActivityEnvelope<LocationActivityAttributes> {
    SampleEnvelope.envelope(device: SampleEnvelope.device(index), seq: 1, relevance: Double(index % 100))
}

/// A fleet of `size` activities, one per device.
private func fleet(size: Int) -> Fleet {
    var fleet = Fleet()
    for index in 0..<size { fleet.apply(.envelope(start(index)), now: now) }
    return fleet
}

/// The seq 1 envelopes of the updated rows, which take them back to seq 1 after an iteration.
private let restarts = (0..<updatedRows).map(start)

let benchmarks: @Sendable () -> Void = {
    let topic = SampleEnvelope.topic(device: "van-7")
    let payload = SampleEnvelope.payload(device: "van-7")
    Benchmark("Board decode: BoardDecoder.decode(topic:payload:) of an envelope", configuration: .myeline()) {
        benchmark in
        let decoder = BoardDecoder(topics: SampleEnvelope.topics)
        benchmark.measuringCPU {
            for _ in benchmark.scaledIterations {
                blackHole(decoder.decode(topic: topic, payload: payload))
            }
        }
    }

    // An envelope of an attributes type the board shows generically (the step tracker example's, issue 18):
    // decoded only after the `location` decode failed, so it pays for that failure too.
    let steps = Array(
        (#"{"activity":"walk","attributes":{"goal":5000,"name":"Walk"},"attributes-type":"com.example.steps","#
            + #""content-state":{"distance":2340.5,"elapsedSeconds":1820,"floors":3,"isPaused":false,"steps":3120},"#
            + #""device":"van-7","event":"update","relevance-score":0,"schema":"myeline.activity.v1","seq":40,"#
            + #""timestamp":1700000095}"#).utf8)
    let stepsTopic = SampleEnvelope.topics.activity(device: try! DeviceID("van-7"), activityID: "walk")
    Benchmark("Board decode: BoardDecoder.decode(topic:payload:) of another type's envelope", configuration: .myeline())
    { benchmark in
        let decoder = BoardDecoder(topics: SampleEnvelope.topics)
        precondition(decoder.decode(topic: stepsTopic, payload: steps).isGenericEnvelope)
        benchmark.measuringCPU {
            for _ in benchmark.scaledIterations {
                blackHole(decoder.decode(topic: stepsTopic, payload: steps))
            }
        }
    }

    // The network thread's part of every message, filed under its topic: 10,000 topics received in turn, and
    // every 10,000 messages all taken, as under a flood the board keeps up with.
    let topics = (0..<10_000).map { SampleEnvelope.topic(device: SampleEnvelope.device($0)) }
    Benchmark("Board mailbox: Mailbox.put, 10000 topics", configuration: .myeline(scalingFactor: .kilo)) {
        benchmark in
        var mailbox = Mailbox<[UInt8]>()
        var next = 0
        benchmark.measuringCPU {
            for _ in benchmark.scaledIterations {
                mailbox.put(topic: topics[next], payload: payload)
                next += 1
                if next == topics.count {
                    next = 0
                    blackHole(mailbox.takeAll())
                }
            }
        }
    }

    for size in [100, 1_000, 10_000] {
        var rows = Fleet()
        Benchmark(
            "Board reducer: Fleet.apply of an envelope, \(size) rows", configuration: .myeline(scalingFactor: .kilo)
        ) { benchmark in
            for envelope in restarts {
                rows.apply(
                    .activityCleared(ActivityKey(device: envelope.header.device, activity: envelope.header.activity)),
                    now: now)
                rows.apply(.envelope(envelope), now: now)
            }
            benchmark.startMeasurement()
            benchmark.measuringCPU {
                for input in updates {
                    blackHole(rows.apply(input, now: now))
                }
            }
            benchmark.stopMeasurement()
        } setup: {
            rows = fleet(size: size)
        } teardown: {
            rows = Fleet()
        }
    }

    // A frame of the live board in a 120x40 terminal, with the rows' order already known: what each of the
    // board's redraws costs while no relevance score changes.
    var fleet10K = Fleet()
    let header = BoardHeader(source: "myeline @ mqtt://broker")
    for layout in [BoardLayout.compact, .expanded] {
        let renderer = FrameRenderer(layout: layout, columns: 120, lines: 40, colours: true)
        var view = BoardView()
        Benchmark("Board frame: FrameRenderer.render, \(layout), 10000 rows, 120x40", configuration: .myeline()) {
            benchmark in
            benchmark.measuringCPU {
                for _ in benchmark.scaledIterations {
                    blackHole(renderer.render(fleet10K, view: &view, header: header, now: now))
                }
            }
        } setup: {
            fleet10K = fleet(size: 10_000)
            _ = renderer.render(fleet10K, view: &view, header: header, now: now)
        } teardown: {
            fleet10K = Fleet()
        }
    }

    // The same frame after the order changed (a row added or removed, a new relevance score): the view sorts
    // the 10,000 rows again.
    Benchmark("Board frame after an order change: render, compact, 10000 rows, 120x40", configuration: .myeline()) {
        benchmark in
        let renderer = FrameRenderer(layout: .compact, columns: 120, lines: 40, colours: true)
        benchmark.measuringCPU {
            for _ in benchmark.scaledIterations {
                var view = BoardView()
                blackHole(renderer.render(fleet10K, view: &view, header: header, now: now))
            }
        }
    } setup: {
        fleet10K = fleet(size: 10_000)
    } teardown: {
        fleet10K = Fleet()
    }

    // One line of `--json` and `--follow --json`.
    let row = ActivityRow(SampleEnvelope.envelope(device: "van-7"), receivedAt: now)
    Benchmark("Board JSON line: BoardJSON.row", configuration: .myeline(scalingFactor: .kilo)) { benchmark in
        benchmark.measuringCPU {
            for _ in benchmark.scaledIterations {
                blackHole(BoardJSON.row(row, state: .active))
            }
        }
    }
}

extension BoardInput {
    /// Whether this is an envelope of another attributes type than `location`.
    fileprivate var isGenericEnvelope: Bool {
        if case .genericEnvelope = self { return true }
        return false
    }
}
