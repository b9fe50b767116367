import Foundation
import LiveActivity

/// The board's state of the fleet: a pure reducer over ``BoardInput``s and the passing of time.
///
/// Applying a message costs the same whatever the fleet's size (hash lookups only); work that visits
/// every row (sorting, counting, expiring ended rows) belongs to a frame or a clock tick, never to a
/// message. Dates are the board's own clock (injected by the caller), except the device's `timestamp`s.
public struct Fleet: Sendable {
    /// Every activity shown, by key.
    public private(set) var rows: [ActivityKey: ActivityRow] = [:]
    /// Every device's latest status, by device.
    public private(set) var devices: [DeviceID: DeviceStatus] = [:]
    /// How many messages were rejected (foreign, invalid or out of place).
    public private(set) var rejectedCount = 0
    /// How many envelopes were dropped because their `seq` was not greater than the one applied.
    public private(set) var outdatedCount = 0
    /// How many envelopes of shown rows never arrived, from the gaps in their `seq`: dropped by the
    /// broker (its queue for a slow subscriber is full), by the board's own buffer, or coalesced by
    /// the agent itself over a slow link (it publishes the latest update only).
    public private(set) var missedCount = 0
    /// Increases with every change that can alter what the board shows.
    public private(set) var revision = 0
    /// Increases with every change that can alter the order of rows: a row added, removed, or a new
    /// relevance score.
    public private(set) var orderRevision = 0
    /// The devices whose status two agents publish in turn: an agent instance came back online
    /// after another one (a restarted agent never comes back as its old instance).
    public private(set) var duplicatedDevices: Set<DeviceID> = []
    /// The last few agent instances each device's `online` statuses came from, oldest first.
    private var onlineInstances: [DeviceID: [String]] = [:]
    private var activitiesByDevice: [DeviceID: Set<String>] = [:]
    private var ended: Set<ActivityKey> = []

    /// Creates an empty fleet.
    public init() {}

    /// What applying one input did.
    public enum Change: Hashable, Sendable {
        /// A row was added or updated.
        case updated(ActivityKey)
        /// A row was removed (its retained envelope was cleared).
        case removed(ActivityKey)
        /// A device's status changed (its rows may change state).
        case status(DeviceID)
        /// Nothing changed: an envelope with an old `seq`, or clearing an unknown row.
        case unchanged
        /// The input was rejected and counted.
        case rejected(BoardInput.Rejection)
    }

    /// Applies one input received at `now` (the board's clock).
    @discardableResult
    public mutating func apply(_ input: BoardInput, now: Date) -> Change {
        switch input {
        case .envelope(let envelope):
            let row = ActivityRow(envelope, receivedAt: now)
            let previous = rows[row.key]?.seq
            let change = upsert(row)
            // A gap in an activity's seq: envelopes this board never saw (OwnTracks rows have no seq of their own).
            if change != .unchanged, let previous { missedCount += row.seq - previous - 1 }
            return change
        case .ownTracksLocation(var row):
            row.receivedAt = now
            let change = upsert(row)
            // A location after the lwt: the device is back.
            if change != .unchanged, isOffline(row.key.device) {
                devices[row.key.device] = DeviceStatus(state: .online, since: row.timestamp, reason: nil)
            }
            return change
        case .activityCleared(let key):
            guard remove(key) else { return .unchanged }
            return .removed(key)
        case .status(let status):
            if status.state == .online, let instance = status.instance {
                noteOnline(instance, of: status.device)
            }
            let since = status.since ?? now
            let new = DeviceStatus(state: status.state, since: since, reason: status.reason?.rawValue)
            if let old = devices[status.device], old.state == new.state, status.since == nil {
                // A repeated will keeps the time the device was first seen offline.
                return .unchanged
            }
            devices[status.device] = new
            revision += 1
            return .status(status.device)
        case .statusCleared(let device):
            onlineInstances[device] = nil
            duplicatedDevices.remove(device)
            guard devices.removeValue(forKey: device) != nil else { return .unchanged }
            revision += 1
            return .status(device)
        case .rejected(let rejection):
            rejectedCount += 1
            revision += 1
            return .rejected(rejection)
        }
    }

    /// A warning naming the devices two agents share, nil when there is none.
    public var duplicationWarning: String? {
        guard !duplicatedDevices.isEmpty else { return nil }
        let names = duplicatedDevices.map(\.rawValue).sorted()
        let shown = names.prefix(3).joined(separator: ", ") + (names.count > 3 ? " and \(names.count - 3) more" : "")
        return "two agents use the device id \(shown): give each tracker its own device.id"
    }

    /// Remembers that `instance` published `device`'s `online`; at most four instances a device.
    private mutating func noteOnline(_ instance: String, of device: DeviceID) {
        var seen = onlineInstances[device] ?? []
        guard seen.last != instance else { return }
        if seen.contains(instance) { duplicatedDevices.insert(device) }
        seen.append(instance)
        onlineInstances[device] = Array(seen.suffix(4))
    }

    /// Removes the ended rows whose `dismissal-date` is at or before `now`, as a receiver may.
    ///
    /// Visits only the ended rows. - Returns: the keys removed.
    @discardableResult
    public mutating func removeDismissed(now: Date) -> [ActivityKey] {
        let due = ended.filter { key in rows[key].flatMap(\.dismissalDate).map { $0 <= now } ?? true }
        for key in due { remove(key) }
        return due.sorted()
    }

    /// Whether `device`'s status says it is offline.
    public func isOffline(_ device: DeviceID) -> Bool {
        devices[device]?.state == .offline
    }

    /// The state of a row at `now`.
    public func state(of row: ActivityRow, at now: Date) -> RowState {
        row.state(at: now, deviceOffline: isOffline(row.key.device))
    }

    /// The keys of a device's activities.
    public func activities(of device: DeviceID) -> [ActivityKey] {
        (activitiesByDevice[device] ?? []).sorted().map { ActivityKey(device: device, activity: $0) }
    }

    /// How many rows are in each state at `now`; visits every row, so call it once per frame.
    public func counts(at now: Date) -> [RowState: Int] {
        var counts: [RowState: Int] = [:]
        for row in rows.values { counts[state(of: row, at: now), default: 0] += 1 }
        return counts
    }

    /// Adds or replaces a row, unless it is not newer (by `seq`) than the one shown.
    private mutating func upsert(_ new: ActivityRow) -> Change {
        let key = new.key
        var row = new
        if let old = rows[key] {
            guard row.seq > old.seq else {
                outdatedCount += 1
                return .unchanged
            }
            row.lastAlert = row.lastAlert ?? old.lastAlert
            if row.relevance != old.relevance { orderRevision += 1 }
        } else {
            activitiesByDevice[key.device, default: []].insert(key.activity)
            orderRevision += 1
        }
        rows[key] = row
        if row.event == .end { ended.insert(key) } else { ended.remove(key) }
        revision += 1
        return .updated(key)
    }

    @discardableResult
    private mutating func remove(_ key: ActivityKey) -> Bool {
        guard rows.removeValue(forKey: key) != nil else { return false }
        ended.remove(key)
        activitiesByDevice[key.device]?.remove(key.activity)
        if activitiesByDevice[key.device]?.isEmpty == true { activitiesByDevice[key.device] = nil }
        revision += 1
        orderRevision += 1
        return true
    }
}
