import Board
import Foundation
import LiveActivity
import TestSupport
import Testing

/// Devices are rows too, with their link, since when, last seen and health; rows never freeze; a
/// device's rows are bounded (issue 17's findings 2, 3 and 5; issue 23's row bound).
struct DevicesAndHealthTests {
    static let van = try! DeviceID("van-7")

    static func status(
        _ state: String, device: String = "van-7", since: Double? = 1_700_000_000, extra: [String: Any] = [:]
    )
        -> BoardInput
    {
        Wire.decoder.decode(
            topic: Wire.statusTopic(device),
            payload: Wire.status(device: device, state: state, since: since, extra: extra))
    }

    /// Finding 2: a tracker whose activity was dismissed stays on the board as a device row, and an
    /// offline one says since when.
    @Test func aDeviceWithoutActivityIsARow() throws {
        var fleet = Fleet()
        fleet.apply(Self.status("online"), now: Wire.now)
        _ = Wire.apply(&fleet, Wire.envelope())
        #expect(fleet.entries == [.activity(ActivityKey(device: Self.van, activity: "a1"))])
        fleet.apply(Wire.decoder.decode(topic: Wire.activityTopic(), payload: []), now: Wire.now)
        #expect(fleet.entries == [.device(Self.van)])
        #expect(fleet.state(of: .device(Self.van), at: Wire.now) == .idle)
        fleet.apply(Self.status("offline", since: nil), now: Wire.now)
        #expect(fleet.state(of: .device(Self.van), at: Wire.now) == .offline)
        #expect(fleet.devices[Self.van]?.since == Wire.now)
        let later = Wire.now.addingTimeInterval(720)
        var view = BoardView(sort: .device)
        let frame = FrameRenderer(layout: .compact, columns: 120, lines: 8, colours: false)
            .render(fleet, view: &view, header: BoardHeader(source: "t"), now: later)
        let row = try #require(frame.first { $0.hasPrefix("van-7 ") })
        #expect(row.contains("OFFLINE") && row.contains(" 12m ") && row.contains("no activity"), "\(row)")
        #expect(frame[0].contains("1 devices: 1 offline"))
        let json = BoardJSON.device(Self.van, fleet: fleet)
        #expect(json.contains(#""kind":"device""#) && json.contains(#""status":"offline""#))
        #expect(json.contains(#""activities":0"#) && json.contains(#""since":1700000100"#), "\(json)")
        #expect(
            PlainText.device(Self.van, fleet: fleet, now: later).contains("van-7 OFFLINE for 12m (connection-lost)"))
    }

    /// The offline filter and the attention order: which trackers are offline right now, and since when.
    @Test func offlineAndUnhealthyFilterAndSort() {
        var fleet = Wire.sampleFleet()
        fleet.apply(Self.status("online", device: "bike-4"), now: Wire.now)
        let offline = BoardView.order(fleet, sort: .device, filter: "", rows: .offline, now: Wire.now)
        #expect(offline.map(\.device.rawValue) == ["car-1"])
        let unhealthy = BoardView.order(fleet, sort: .device, filter: "", rows: .unhealthy, now: Wire.now)
        #expect(unhealthy.map(\.device.rawValue) == ["car-1", "spare-3", "truck-2"])
        let attention = BoardView.order(fleet, sort: .attention, filter: "", now: Wire.now)
        #expect(attention.prefix(3).map(\.device.rawValue) == ["car-1", "truck-2", "spare-3"])
        var view = BoardView()
        _ = view.handle(.character("f"), pageSize: 5, rowCount: 7)
        #expect(view.rows == .offline)
        _ = view.handle(.character("f"), pageSize: 5, rowCount: 7)
        #expect(view.rows == .unhealthy)
        _ = view.handle(.escape, pageSize: 5, rowCount: 7)
        #expect(view.rows == .all)
    }

    /// Finding 3: what the agents report on the status topic is the device's health, on its rows,
    /// its card and its JSON lines; a fix time ahead of the board's clock is a clock problem too.
    @Test func theHealthAgentsPublishIsShown() throws {
        var fleet = Fleet()
        fleet.apply(
            Self.status(
                "online",
                extra: [
                    "clock-offset": -7015, "storage-error": "writing outbox failed: No space left on device",
                    "dropped": 12, "instance": "abc", "version": "0.1.0",
                ]), now: Wire.now)
        _ = Wire.apply(&fleet, Wire.envelope(content: ["fixTime": Wire.now.timeIntervalSince1970 + 7015]))
        let health = fleet.health(of: Self.van)
        #expect(health.issues.map(\.name) == ["clock", "storage", "dropped"])
        #expect(health.summary == "clock -1h56m, storage error, 12 dropped")
        let row = try #require(fleet.rows.values.first)
        let json = BoardJSON.row(row, state: fleet.state(of: row, at: Wire.now), fleet: fleet)
        #expect(json.contains(#""healthy":false"#) && json.contains(#""issues":["clock","storage","dropped"]"#))
        let device = BoardJSON.device(Self.van, fleet: fleet)
        #expect(device.contains(#""clock-offset":-7015"#) && device.contains(#""dropped":12"#))
        #expect(device.contains(#""version":"0.1.0""#) && device.contains(#""instance":"abc""#))
        #expect(device.contains(#""storage-error":"writing outbox failed: No space left on device""#))
        var view = BoardView()
        let compact = FrameRenderer(layout: .compact, columns: 160, lines: 8, colours: false)
            .render(fleet, view: &view, header: BoardHeader(source: "t"), now: Wire.now)
        let line = try #require(compact.first { $0.hasPrefix("van-7 ") })
        // The fix is in the future: its age is implausible, not a frozen 0s, and the health says why.
        #expect(line.contains("     ? ") && line.contains("clock -1h56m"), "\(line)")
        let card = FrameRenderer(layout: .expanded, columns: 160, lines: 12, colours: false)
            .render(fleet, view: &view, header: BoardHeader(source: "t"), now: Wire.now).joined(separator: "\n")
        #expect(card.contains("agent 0.1.0, health: clock -1h56m, storage error, 12 dropped (writing outbox failed"))

        // Without clock-offset, a fix time 2 h ahead of the board's clock is flagged by the board itself.
        var ahead = Fleet()
        _ = Wire.apply(&ahead, Wire.envelope(content: ["fixTime": Wire.now.timeIntervalSince1970 + 7200]))
        #expect(ahead.health(of: Self.van).issues == [.clock(seconds: 7200)])
        var fine = Fleet()
        _ = Wire.apply(&fine, Wire.envelope(content: ["fixTime": Wire.now.timeIntervalSince1970 + 2]))
        #expect(fine.health(of: Self.van).isHealthy)
    }

    /// The power cuts an agent reports (`power-losses`, issue 16) are on its JSON line, its card and
    /// its plain line, without making it unhealthy (a tracker on a vehicle's switched supply loses
    /// power at every stop); a clean status afterwards clears them.
    @Test func thePowerLossesAgentsReportAreShown() throws {
        var fleet = Fleet()
        fleet.apply(Self.status("online", extra: ["power-losses": 3, "version": "0.1.0"]), now: Wire.now)
        #expect(fleet.devices[Self.van]?.powerLosses == 3)
        #expect(fleet.health(of: Self.van).isHealthy)
        let json = BoardJSON.device(Self.van, fleet: fleet)
        #expect(json.contains(#""power-losses":3"#) && json.contains(#""healthy":true"#), "\(json)")
        #expect(
            PlainText.device(Self.van, fleet: fleet, now: Wire.now).contains("agent 0.1.0 · 3 power losses · healthy"))
        var view = BoardView()
        let card = FrameRenderer(layout: .expanded, columns: 120, lines: 8, colours: false)
            .render(fleet, view: &view, header: BoardHeader(source: "t"), now: Wire.now).joined(separator: "\n")
        #expect(card.contains("agent 0.1.0, 3 power losses, healthy"), "\(card)")
        fleet.apply(Self.status("online", since: 1_700_000_010, extra: ["power-losses": 1]), now: Wire.now)
        #expect(PlainText.device(Self.van, fleet: fleet, now: Wire.now).contains(" · 1 power loss · "))
        fleet.apply(Self.status("online", since: 1_700_000_020), now: Wire.now)
        #expect(!BoardJSON.device(Self.van, fleet: fleet).contains("power-losses"))
    }

    /// Finding 5: a retained envelope with an absurd seq no longer freezes the row: genuine updates
    /// (newer timestamps) that keep coming for the resync window are taken, the row is flagged, and
    /// the missed count is not poisoned.
    @Test func aHugeSeqDoesNotFreezeTheRow() throws {
        let clock = ManualWallClock(now: Wire.now)
        var fleet = Fleet()
        _ = Wire.apply(&fleet, Wire.envelope(seq: 3, timestamp: 1_700_000_090), now: clock.now)
        _ = Wire.apply(
            &fleet, Wire.envelope(seq: 9_007_199_254_740_991, event: "update", timestamp: 1_700_000_091), now: clock.now
        )
        #expect(fleet.missedCount == 0 && fleet.seqJumpCount == 1)
        var seq = 4
        var timestamp = 1_700_000_092.0
        func genuine() -> Fleet.Change {
            defer {
                seq += 1
                timestamp += 1
                clock.advance(by: 1)
            }
            return Wire.apply(
                &fleet,
                Wire.envelope(seq: seq, event: "update", timestamp: timestamp, content: ["distance": Double(seq)]),
                now: clock.now)
        }
        for _ in 0..<10 { #expect(genuine() == .unchanged) }
        #expect(genuine() == .updated(ActivityKey(device: Self.van, activity: "a1")))
        let row = try #require(fleet.rows.values.first)
        #expect(row.seq == 14 && row.content?.distance == 14 && row.resyncedAt == clock.now.addingTimeInterval(-1))
        #expect(fleet.resyncCount == 1 && fleet.missedCount == 0)
        #expect(genuine() != .unchanged, "then it follows the device's seq again")
        #expect(fleet.health(of: Self.van).issues == [.resynced])
        #expect(BoardJSON.row(row, state: .active, fleet: fleet).contains(#""resynced-at":"#))
        var view = BoardView()
        let frame = FrameRenderer(layout: .compact, columns: 120, lines: 8, colours: false)
            .render(fleet, view: &view, header: BoardHeader(source: "t"), now: clock.now)
        #expect(frame.contains { $0.hasPrefix("van-7 ") && $0.contains("ACTIVE↺") })
        #expect(frame[0].contains("· 1 resynced") && !frame[0].contains("missed"))
    }

    /// Duplicates and older envelopes (QoS 1 redelivery, a reconnecting subscriber) never resync.
    @Test func olderEnvelopesNeverResync() {
        let clock = ManualWallClock(now: Wire.now)
        var fleet = Fleet()
        _ = Wire.apply(&fleet, Wire.envelope(seq: 5, timestamp: 1_700_000_090), now: clock.now)
        for _ in 0..<30 {
            clock.advance(by: 1)
            #expect(
                Wire.apply(&fleet, Wire.envelope(seq: 4, event: "update", timestamp: 1_700_000_080), now: clock.now)
                    == .unchanged)
        }
        #expect(fleet.rows.values.first?.seq == 5 && fleet.resyncCount == 0)
    }

    /// Issue 23: one device cannot fill the board: past its row limit, envelopes of new activities
    /// are rejected and counted.
    @Test func aDevicesRowsAreBounded() {
        var fleet = Fleet(maximumActivitiesPerDevice: 3)
        for index in 0..<5 { _ = Wire.apply(&fleet, Wire.envelope(activity: "a\(index)")) }
        #expect(fleet.rows.count == 3 && fleet.rejectedCount == 2)
        // Its rows still update, and another device is not affected.
        #expect(Wire.apply(&fleet, Wire.envelope(activity: "a0", seq: 2, event: "update")) != .unchanged)
        _ = Wire.apply(&fleet, Wire.envelope(device: "bus-1"))
        #expect(fleet.rows.count == 4)
        #expect(Fleet().maximumActivitiesPerDevice == 8)
    }

    /// Finding 7: an alert is highlighted with its age for a minute, is in the line of recent alerts,
    /// and in full in the expanded card.
    @Test func alertsAreSeen() throws {
        let clock = ManualWallClock(now: Wire.now)
        var fleet = Fleet()
        _ = Wire.apply(&fleet, Wire.envelope(seq: 1, timestamp: 1_700_000_090), now: clock.now)
        #expect(fleet.alertCount == 0)
        _ = Wire.apply(
            &fleet,
            Wire.envelope(
                seq: 2, event: "update", timestamp: 1_700_000_095,
                alert: ["title": "Overspeed", "body": "van-7 at 142 km/h, over the 130 km/h limit"]), now: clock.now)
        #expect(fleet.alertCount == 1 && fleet.recentAlerts.first?.alert.title == "Overspeed")
        func frame(_ layout: BoardLayout) -> [String] {
            var view = BoardView()
            return FrameRenderer(layout: layout, columns: 120, lines: 12, colours: true)
                .render(fleet, view: &view, header: BoardHeader(source: "t"), now: clock.now)
        }
        let fresh = try #require(frame(.compact).first { $0.contains("van-7 ") && !$0.contains("alerts:") })
        #expect(fresh.contains("\u{1B}[7m5s Overspeed"), "\(fresh)")
        #expect(frame(.compact)[3].contains("alerts: 5s van-7: Overspeed"))
        #expect(frame(.expanded).joined().contains("! Overspeed: van-7 at 142 km/h, over the 130 km/h limit (5s ago)"))
        clock.advance(by: 60)
        let old = try #require(frame(.compact).first { $0.contains("van-7 ") && !$0.contains("alerts:") })
        #expect(!old.contains("\u{1B}[7m") && old.contains("1m Overspeed"))
        var empty = Fleet()
        _ = Wire.apply(&empty, Wire.envelope())
        var view = BoardView()
        let none = FrameRenderer(layout: .compact, columns: 120, lines: 8, colours: false)
            .render(empty, view: &view, header: BoardHeader(source: "t"), now: clock.now)
        #expect(none[3].hasPrefix("alerts: none since the board started"))
    }
}
