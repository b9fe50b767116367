import Board
import Foundation
import LiveActivity
import MyelineWire
import TestSupport
import Testing

/// The reducer: ordering by `seq`, local staleness, dismissal, clearing and presence, as tables.
struct FleetTests {
    /// Envelopes of one activity arriving in some order: which `seq` ends up applied, how many are
    /// dropped as outdated, and how many never arrived (gaps in `seq` after the first one shown).
    @Test(arguments: [
        ([1, 2, 3], 3, 0, 0),
        ([1, 3, 2], 3, 1, 1),
        ([2, 2, 2], 2, 2, 0),
        ([5, 1, 4, 6], 6, 2, 0),
        ([3, 1], 3, 1, 0),
        ([1, 4, 10], 10, 0, 7),
        ([7, 9, 8, 12], 12, 1, 3),
    ])
    func onlyAGreaterSeqIsApplied(order: [Int], applied: Int, dropped: Int, missed: Int) {
        var fleet = Fleet()
        for seq in order {
            _ = Wire.apply(
                &fleet,
                Wire.envelope(seq: seq, event: seq == 1 ? "start" : "update", content: ["distance": Double(seq)]))
        }
        let row = fleet.rows[ActivityKey(device: try! DeviceID("van-7"), activity: "a1")]
        #expect(row?.seq == applied)
        #expect(row?.content?.distance == Double(applied))
        #expect(fleet.outdatedCount == dropped)
        #expect(fleet.missedCount == missed)
    }

    /// The state shown, from the stale date against the board's clock, the pause, the end and the device's status.
    @Test(arguments: [
        // stale date (seconds from now), paused, event, device offline -> state
        (nil as Double?, false, "update", false, RowState.active),
        (1, false, "update", false, .active),
        (0, false, "update", false, .stale),
        (-1, false, "update", false, .stale),
        (nil, true, "update", false, .paused),
        (-1, true, "update", false, .stale),
        (10, false, "update", true, .offline),
        (-10, false, "update", true, .offline),
        (-10, false, "end", true, .ended),
        (nil, false, "end", false, .ended),
    ])
    func stateFromTheLocalClock(staleIn: Double?, paused: Bool, event: String, offline: Bool, expected: RowState) {
        let clock = ManualWallClock(now: Wire.now)
        var fleet = Fleet()
        let stale = staleIn.map { clock.now.timeIntervalSince1970 + $0 }
        _ = Wire.apply(
            &fleet, Wire.envelope(seq: 2, event: event, stale: stale, content: ["paused": paused]), now: clock.now)
        if offline {
            fleet.apply(
                Wire.decoder.decode(topic: Wire.statusTopic(), payload: Wire.status(state: "offline")), now: clock.now)
        }
        let row = fleet.rows.values.first!
        #expect(fleet.state(of: row, at: clock.now) == expected)
    }

    /// A tracker that died without a will still turns stale as the board's clock passes its stale date.
    @Test func aSilentTrackerTurnsStaleAsTimePasses() {
        let clock = ManualWallClock(now: Wire.now)
        var fleet = Fleet()
        _ = Wire.apply(&fleet, Wire.envelope(stale: Wire.now.timeIntervalSince1970 + 30), now: clock.now)
        let row = fleet.rows.values.first!
        #expect(fleet.state(of: row, at: clock.now) == .active)
        clock.advance(by: 29.999)
        #expect(fleet.state(of: row, at: clock.now) == .active)
        clock.advance(by: 0.001)
        #expect(fleet.state(of: row, at: clock.now) == .stale)
        #expect(fleet.counts(at: clock.now) == [.stale: 1])
    }

    /// A later update with a later or no stale date makes the row fresh again.
    @Test func anUpdateMakesAStaleRowFresh() {
        var fleet = Fleet()
        _ = Wire.apply(&fleet, Wire.envelope(seq: 1, stale: 1_700_000_050))
        #expect(fleet.counts(at: Wire.now) == [.stale: 1])
        _ = Wire.apply(&fleet, Wire.envelope(seq: 2, event: "update"))
        #expect(fleet.counts(at: Wire.now) == [.active: 1])
    }

    /// Ended rows stay until their dismissal date by the board's clock, then go.
    @Test func endedRowsGoAtTheirDismissalDate() {
        let clock = ManualWallClock(now: Wire.now)
        var fleet = Fleet()
        _ = Wire.apply(&fleet, Wire.envelope(seq: 4, event: "end", dismissal: 1_700_000_160), now: clock.now)
        _ = Wire.apply(&fleet, Wire.envelope(activity: "a2", seq: 1), now: clock.now)
        #expect(fleet.removeDismissed(now: clock.now).isEmpty)
        clock.advance(by: 59)
        #expect(fleet.removeDismissed(now: clock.now).isEmpty)
        #expect(fleet.rows.count == 2)
        clock.advance(by: 1)
        #expect(fleet.removeDismissed(now: clock.now) == [ActivityKey(device: try! DeviceID("van-7"), activity: "a1")])
        #expect(fleet.rows.keys.map(\.activity) == ["a2"])
    }

    /// An activity that ends and then gets an update again (a new seq) is no longer ended.
    @Test func anEndedRowThatResumesIsNotDismissed() {
        var fleet = Fleet()
        _ = Wire.apply(&fleet, Wire.envelope(seq: 1, event: "end", dismissal: 1_700_000_000))
        _ = Wire.apply(&fleet, Wire.envelope(seq: 2, event: "update"))
        #expect(fleet.removeDismissed(now: Wire.now).isEmpty)
        #expect(fleet.rows.count == 1)
    }

    /// An empty retained message on the activity topic removes the row; on an unknown one it changes nothing.
    @Test func aClearedRetainedMessageRemovesTheRow() {
        var fleet = Fleet()
        _ = Wire.apply(&fleet, Wire.envelope())
        let revision = fleet.revision
        let key = ActivityKey(device: try! DeviceID("van-7"), activity: "a1")
        #expect(
            fleet.apply(Wire.decoder.decode(topic: Wire.activityTopic(), payload: []), now: Wire.now) == .removed(key))
        #expect(fleet.rows.isEmpty)
        #expect(fleet.revision > revision)
        #expect(fleet.activities(of: key.device).isEmpty)
        #expect(fleet.apply(Wire.decoder.decode(topic: Wire.activityTopic(), payload: []), now: Wire.now) == .unchanged)
        // A new envelope after the clearing is a new row, whatever its seq.
        _ = Wire.apply(&fleet, Wire.envelope(seq: 1))
        #expect(fleet.rows[key]?.seq == 1)
    }

    /// Presence from the status topic: since from the message, or the receiving time for a will.
    @Test func presenceComesFromTheStatusTopic() throws {
        var fleet = Fleet()
        let device = try DeviceID("van-7")
        _ = Wire.apply(&fleet, Wire.envelope())
        fleet.apply(
            Wire.decoder.decode(topic: Wire.statusTopic(), payload: Wire.status(state: "online")), now: Wire.now)
        #expect(fleet.devices[device]?.state == .online)
        #expect(fleet.devices[device]?.since == Date(timeIntervalSince1970: 1_700_000_000))
        fleet.apply(
            Wire.decoder.decode(topic: Wire.statusTopic(), payload: Wire.status(state: "offline", since: nil)),
            now: Wire.now)
        #expect(fleet.devices[device]?.since == Wire.now)
        #expect(fleet.devices[device]?.reason == "connection-lost")
        #expect(fleet.counts(at: Wire.now) == [.offline: 1])
        // The same will again (a reconnecting subscriber) keeps the first time.
        #expect(
            fleet.apply(
                Wire.decoder.decode(topic: Wire.statusTopic(), payload: Wire.status(state: "offline", since: nil)),
                now: Wire.now.addingTimeInterval(5)) == .unchanged)
        #expect(fleet.devices[device]?.since == Wire.now)
        // A cleared status leaves the device with an unknown link while it has activities.
        fleet.apply(Wire.decoder.decode(topic: Wire.statusTopic(), payload: []), now: Wire.now)
        #expect(fleet.devices[device]?.state == nil && fleet.devices[device]?.since == nil)
        #expect(fleet.counts(at: Wire.now) == [.active: 1])
    }

    /// Two agents with one device id publish its `online` in turn; a restarted agent is a new
    /// instance that never comes back as the old one.
    @Test(arguments: [
        (["a:online", "b:online", "a:online"], true),
        (["a:online", "b:online", "b:online", "a:online"], true),
        (["a:online", "a:offline", "b:online", "b:offline", "c:online"], false),
        (["a:online", "b:online"], false),
        // A status without an instance (an agent before it existed) says nothing.
        (["a:online", "-:online", "a:online"], false),
    ])
    func twoInstancesInTurnAreADuplicatedDevice(statuses: [String], duplicated: Bool) throws {
        var fleet = Fleet()
        let device = try DeviceID("van-7")
        for (index, status) in statuses.enumerated() {
            let parts = status.split(separator: ":").map(String.init)
            let (since, instance) = (Date(timeIntervalSince1970: 1_700_000_000 + Double(index)), parts[0])
            let message: StatusMessage =
                parts[1] == "online"
                ? .online(device: device, since: since, instance: instance == "-" ? nil : instance)
                : .offline(device: device, since: since, instance: instance)
            fleet.apply(.status(message), now: Wire.now)
        }
        #expect(fleet.duplicatedDevices == (duplicated ? [device] : []))
        #expect((fleet.duplicationWarning != nil) == duplicated)
        #expect(BoardJSON.device(device, fleet: fleet).contains("\"duplicate\":true") == duplicated)
        fleet.apply(Wire.decoder.decode(topic: Wire.statusTopic(), payload: []), now: Wire.now)
        #expect(fleet.duplicatedDevices.isEmpty)
    }

    /// The last alert stays on the row until another replaces it.
    @Test func theLastAlertStays() {
        var fleet = Fleet()
        _ = Wire.apply(&fleet, Wire.envelope(seq: 1, alert: ["title": "Overspeed", "body": "Van 7 at 140 km/h"]))
        _ = Wire.apply(&fleet, Wire.envelope(seq: 2, event: "update"))
        #expect(fleet.rows.values.first?.lastAlert?.title == "Overspeed")
        _ = Wire.apply(&fleet, Wire.envelope(seq: 3, event: "update", alert: ["title": "Left depot", "body": "b"]))
        #expect(fleet.rows.values.first?.lastAlert?.title == "Left depot")
    }

    /// Only adding, removing or re-scoring a row changes the order; content updates do not.
    @Test func onlyOrderChangesBumpTheOrderRevision() {
        var fleet = Fleet()
        _ = Wire.apply(&fleet, Wire.envelope(seq: 1))
        let order = fleet.orderRevision
        _ = Wire.apply(&fleet, Wire.envelope(seq: 2, event: "update", content: ["distance": 5]))
        #expect(fleet.orderRevision == order)
        _ = Wire.apply(&fleet, Wire.envelope(seq: 3, event: "update", relevance: 7))
        #expect(fleet.orderRevision == order + 1)
    }

    /// Messages that break the contract are counted, never applied.
    @Test(arguments: [
        ("myeline/van-7/activities/a1", Array("{".utf8), "invalid myeline.activity.v1 payload"),
        ("myeline/van-8/activities/a1", Wire.envelope(device: "van-7"), "another device or activity"),
        ("myeline/van-7/activities/a2", Wire.envelope(activity: "a1"), "another device or activity"),
        ("myeline/van-8/status", Wire.status(device: "van-7", state: "online"), "another device's topic"),
        ("myeline/van-7/activities/a1", [UInt8](repeating: 0x20, count: 70_000), "too large"),
        ("myeline/VAN/status", Wire.status(state: "online"), "not a status or activity topic"),
        ("myeline/van-7/activities/a1/track", Wire.envelope(), "not a status or activity topic"),
    ])
    func contractBreachesAreCounted(topic: String, payload: [UInt8], reason: String) {
        var fleet = Fleet()
        let change = fleet.apply(Wire.decoder.decode(topic: topic, payload: payload), now: Wire.now)
        guard case .rejected(let rejection) = change else {
            Issue.record("applied: \(change)")
            return
        }
        #expect(rejection.reason.contains(reason), "\(rejection.reason)")
        #expect(rejection.topic == topic)
        #expect(fleet.rejectedCount == 1)
        #expect(fleet.rows.isEmpty && fleet.devices.isEmpty)
    }
}
