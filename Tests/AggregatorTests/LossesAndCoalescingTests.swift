import Board
import Foundation
import LiveActivity
import MQTT
import Logging
import TestSupport
import Testing

@testable import Aggregator

/// What a stalled board keeps and shows (fault scenario 10): `--follow --json` keeps one pending
/// change per row and device, however many messages arrive while its output is blocked, and the
/// header and the `summary` line show what was missed and dropped.
struct LossesAndCoalescingTests {
    static func session() -> BoardSession {
        BoardSession(
            topics: Wire.topics, sentinelTopic: "sync", clock: ManualWallClock(now: Wire.now),
            logger: Logger(label: "test"),
            recordsChanges: true)
    }

    static func receive(_ session: BoardSession, _ payload: [UInt8], topic: String = Wire.activityTopic()) {
        session.receive(MQTTMessage(topic: topic, payload: payload))
        session.drain()
    }

    @Test func aFloodOfUpdatesOfOneRowWaitsAsOneChange() {
        let session = Self.session()
        for seq in 1...2_000 { Self.receive(session, Wire.envelope(seq: seq, event: seq == 1 ? "start" : "update")) }
        Self.receive(session, Wire.envelope(device: "bus-1", seq: 1), topic: Wire.activityTopic("bus-1"))
        Self.receive(session, Wire.status(state: "online"), topic: Wire.statusTopic())
        Self.receive(session, Wire.status(state: "online", since: 1_700_000_050), topic: Wire.statusTopic())
        let van = ActivityKey(device: try! DeviceID("van-7"), activity: "a1")
        let bus = ActivityKey(device: try! DeviceID("bus-1"), activity: "a1")
        let changes = session.withState { $0.takeChanges() }
        #expect(changes == [.updated(van), .updated(bus), .status(try! DeviceID("van-7"))], "\(changes)")
        #expect(session.withState { $0.fleet.rows[van]?.seq } == 2_000)
        let again = session.withState { $0.takeChanges() }
        #expect(again.isEmpty, "taken")
    }

    /// A flood that comes faster than the board applies it is decoded once per topic: the latest
    /// envelope of each row, and the replaced ones are not counted as missed.
    @Test func aFloodIsDecodedOncePerTopic() {
        let session = Self.session()
        for seq in 1...2_000 {
            for device in ["van-7", "bus-1"] {
                session.receive(
                    MQTTMessage(
                        topic: Wire.activityTopic(device),
                        payload: Wire.envelope(device: device, seq: seq, event: seq == 1 ? "start" : "update")))
            }
        }
        session.receive(MQTTMessage(topic: Wire.activityTopic("bus-1"), payload: Array("junk".utf8)))
        #expect(session.drain() == 2, "one message a topic")
        #expect(session.drain() == 0)
        let van = ActivityKey(device: try! DeviceID("van-7"), activity: "a1")
        session.withState { state in
            #expect(state.fleet.rows[van]?.seq == 2_000)
            #expect(state.fleet.rows.count == 1, "bus-1's latest message was junk: rejected, its row never shown")
            #expect(state.fleet.rejectedCount == 1 && state.fleet.missedCount == 0)
        }
        // A gap that the replaced envelopes do not explain is still missed.
        session.receive(MQTTMessage(topic: Wire.activityTopic(), payload: Wire.envelope(seq: 2_010, event: "update")))
        session.drain()
        #expect(session.withState { $0.fleet.missedCount } == 9)
    }

    @Test func theMailboxKeepsTheLatestPerTopicInArrivalOrder() {
        var mailbox = Mailbox<Int>()
        for (topic, value) in [("a", 1), ("b", 2), ("a", 3), ("c", 4), ("a", 5)] {
            mailbox.put(topic: topic, payload: value)
        }
        let entries = mailbox.takeAll()
        #expect(entries.map(\.topic) == ["a", "b", "c"])
        #expect(entries.map(\.payload) == [5, 2, 4])
        #expect(entries.map(\.superseded) == [2, 0, 0])
        #expect(mailbox.isEmpty && mailbox.takeAll().isEmpty)
    }

    /// Taken a chunk at a time, oldest topic first; a topic received again after it was taken waits
    /// again, behind the others, and a topic waits once however often it is received.
    @Test func theMailboxHandsOutChunksOldestTopicFirst() {
        var mailbox = Mailbox<Int>()
        for index in 0..<10_000 { mailbox.put(topic: "t\(index)", payload: index) }
        var taken: [Mailbox<Int>.Entry] = []
        var round = 0
        while taken.count < 10_000 {
            taken += mailbox.take(upTo: 256)
            // Meanwhile: the first topic again (taken already), and the last one (still waiting), twice.
            mailbox.put(topic: "t0", payload: -round)
            mailbox.put(topic: "t9999", payload: 20_000 + round)
            mailbox.put(topic: "t9999", payload: 30_000 + round)
            round += 1
        }
        #expect(round == 40)
        #expect(taken.prefix(10_000).map(\.topic) == (0..<10_000).map { "t\($0)" })
        #expect(taken[9_999].payload == 30_038 && taken[9_999].superseded == 78)
        // t0, received again after its first chunk, waited behind every other topic.
        #expect(taken.dropFirst(10_000).map(\.topic) == ["t0"] && taken.last?.payload == -38)
        let rest = mailbox.takeAll()
        #expect(rest.map(\.topic) == ["t0", "t9999"] && rest.map(\.superseded) == [0, 1])
        #expect(mailbox.isEmpty && mailbox.take(upTo: 256).isEmpty)
    }

    @Test func aRemovalWaitsAsTheRowsOneChange() {
        let session = Self.session()
        Self.receive(session, Wire.envelope(seq: 1))
        Self.receive(session, [])
        let key = ActivityKey(device: try! DeviceID("van-7"), activity: "a1")
        let changes = session.withState { $0.takeChanges() }
        #expect(changes == [.updated(key)])
        #expect(session.withState { $0.fleet.rows[key] } == nil, "the follower writes it as removed")
    }

    @Test func theHeaderShowsMissedAndDroppedOnlyWhenThereAreAny() {
        var fleet = Fleet()
        _ = Wire.apply(&fleet, Wire.envelope(seq: 1))
        let renderer = FrameRenderer(layout: .compact, columns: 200, lines: 10, colours: false)
        var view = BoardView()
        let clean = renderer.render(fleet, view: &view, header: BoardHeader(source: "test"), now: Wire.now)[0]
        #expect(!clean.contains("missed") && !clean.contains("dropped"))
        // 1,204 envelopes in 60 s: plausible, all counted as missed.
        _ = Wire.apply(&fleet, Wire.envelope(seq: 1_206, event: "update", timestamp: 1_700_000_060))
        let lossy = renderer.render(fleet, view: &view, header: BoardHeader(source: "test", dropped: 37), now: Wire.now)
        #expect(lossy[0].contains("0 rejected · 1,204 missed · 37 dropped · test"), "\(lossy[0])")
        let summary = BoardJSON.summary(fleet, now: Wire.now, warning: nil, dropped: 37)
        #expect(summary.contains(#""missed":1204"#) && summary.contains(#""dropped":37"#), "\(summary)")
    }
}
