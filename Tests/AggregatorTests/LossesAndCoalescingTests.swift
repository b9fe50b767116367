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
        session.apply(session.receive(MQTTMessage(topic: topic, payload: payload)))
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
