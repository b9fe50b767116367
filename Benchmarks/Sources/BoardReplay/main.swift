// The board's per-message work without the network, on one thread, deterministic: for callgrind's
// instruction counts (docs/benchmarks.md, "Aggregator: ingest, issue 17 item 11"), which a shared
// machine does not move.
//
//   board-replay decode DEVICES MESSAGES   BoardDecoder.decode of each message
//   board-replay ingest DEVICES MESSAGES   decode, Fleet.apply and the `--follow --json` line of each
//
// The messages are scripts/bench's flood: the same envelope keys and values, device after device, seq
// rising by one a round; the fleet first gets every device's start. Run under callgrind with
// `--collect-atstart=no --toggle-collect='*BoardReplay*replay*'` to count the messages' work only.
import Board
import Foundation
import LiveActivity
import MyelineWire

/// `scripts/bench`'s envelope of device `index` with `seq`, as Python's `json.dumps` writes it.
func envelope(_ index: Int, seq: Int, stamp: Double) -> [UInt8] {
    let device = "dev-\(index)"
    let latitude = 52.5 + Double(index) / 1e5
    let longitude = 13.4 + Double(seq) / 1e5
    let json = """
        {"schema":"myeline.activity.v1","device":"\(device)","activity":"a1","attributes-type":"location",\
        "attributes":{"deviceID":"\(device)","name":"Vehicle \(index)"},"event":"\(seq == 1 ? "start" : "update")",\
        "seq":\(seq),"timestamp":\(stamp),"relevance-score":\(index % 7),"stale-date":\(stamp + 3600),\
        "content-state":{"fix":"3d","latitude":\(latitude),"longitude":\(longitude),"satellites":9,\
        "speed":12.5,"course":90.0,"horizontalAccuracy":4.0,"fixTime":\(stamp),\
        "distance":\(1000.0 + Double(seq)),"elapsed":\(60.0 + Double(seq)),"paused":false}}
        """
    return Array(json.utf8)
}

struct Message {
    var topic: String
    var payload: [UInt8]
}

/// The flood: `messages` envelopes over `devices` devices, seq 2 and up.
func flood(devices: Int, messages: Int, stamp: Double) -> [Message] {
    (0..<messages).map { number in
        let index = number % devices
        return Message(
            topic: "myeline/dev-\(index)/activities/a1",
            payload: envelope(index, seq: 2 + number / devices, stamp: stamp))
    }
}

/// Decodes (and in `ingest` mode applies and writes) every message; returns the bytes written.
@inline(never)
func replay(_ messages: [Message], decoder: BoardDecoder, fleet: inout Fleet, ingest: Bool, now: Date) -> Int {
    var written = 0
    for message in messages {
        let input = decoder.decode(topic: message.topic, payload: message.payload)
        guard ingest else {
            if case .rejected(let rejection) = input { fatalError("rejected: \(rejection)") }
            continue
        }
        if case .updated(let key) = fleet.apply(input, now: now), let row = fleet.rows[key] {
            written +=
                BoardJSON.row(row, state: fleet.state(of: row, at: now), change: "updated", fleet: fleet).utf8.count
        }
    }
    return written
}

let arguments = CommandLine.arguments
guard arguments.count == 4, ["decode", "ingest"].contains(arguments[1]), let devices = Int(arguments[2]),
    let count = Int(arguments[3]), devices > 0
else {
    print("usage: BoardReplay decode|ingest DEVICES MESSAGES")
    exit(64)
}
let stamp = 1_764_000_000.25
let now = Date(timeIntervalSince1970: stamp + 1)
let decoder = BoardDecoder(topics: TopicTree())
var fleet = Fleet()
for index in 0..<devices {
    fleet.apply(
        decoder.decode(topic: "myeline/dev-\(index)/activities/a1", payload: envelope(index, seq: 1, stamp: stamp)),
        now: now)
}
let messages = flood(devices: devices, messages: count, stamp: stamp)
let clock = ContinuousClock()
var written = 0
let elapsed = clock.measure {
    written = replay(messages, decoder: decoder, fleet: &fleet, ingest: arguments[1] == "ingest", now: now)
}
let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
print(
    "\(arguments[1]): \(count) messages, \(devices) devices, \(fleet.rows.count) rows, \(written) bytes written;"
        + " \(String(format: "%.2f", seconds / Double(max(1, count)) * 1e6)) µs a message")
