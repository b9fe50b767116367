import Foundation
import LiveActivity
import MyelineWire

/// The board's model of the fleet: every device (its link, since when, its health) and every
/// activity, as a pure reducer over ``BoardInput``s and the passing of time.
///
/// Applying a message costs the same whatever the fleet's size (hash lookups only); work that visits
/// every row (sorting, counting, expiring ended rows) belongs to a frame or a clock tick, never to a
/// message. Dates are the board's own clock (injected by the caller), except the device's `timestamp`s.
/// It knows nothing of terminals: the renderer, the JSON lines and a map read it alike.
public struct Fleet: Sendable {
    /// How long envelopes with newer `timestamp`s but a `seq` not above the row's must keep coming
    /// before the row takes them anyway (a device whose state was restored from a backup, or one
    /// absurd `seq` retained on the broker), seconds of the board's clock.
    public static let resyncWindow: TimeInterval = 10
    /// The most envelopes a second an agent can publish, for judging a gap in `seq`: a larger gap
    /// than the time between two envelopes allows is a jump, not envelopes that were missed.
    public static let plausibleEnvelopesPerSecond: Double = 1000
    /// The agent's default limit of activities per device (`activity.max-activities`).
    public static let defaultMaximumActivitiesPerDevice = 8
    /// How many recent alerts ``recentAlerts`` keeps.
    public static let recentAlertLimit = 20

    /// The most rows one device may have; envelopes of more activities are rejected and counted.
    public let maximumActivitiesPerDevice: Int
    /// Every activity shown, by key.
    public private(set) var rows: [ActivityKey: ActivityRow] = [:]
    /// Every device seen on its status topic or with an activity, by id.
    public private(set) var devices: [DeviceID: DeviceStatus] = [:]
    /// How many messages were rejected (foreign, invalid, out of place, or over a device's row limit).
    public private(set) var rejectedCount = 0
    /// How many envelopes were dropped because their `seq` was not greater than the one applied.
    public private(set) var outdatedCount = 0
    /// How many envelopes of shown rows never arrived, from the gaps in their `seq`: dropped by the
    /// broker (its queue for a slow subscriber is full), by the board's own buffer, or coalesced by
    /// the agent itself over a slow link (it publishes the latest update only). A gap larger than the
    /// time between the two envelopes allows (``plausibleEnvelopesPerSecond``) is a jump, counted in
    /// ``seqJumpCount`` instead.
    public private(set) var missedCount = 0
    /// How many times a row's `seq` jumped further than its envelopes' times allow.
    public private(set) var seqJumpCount = 0
    /// How many times a row was resynchronised past the `seq` rule (``resyncWindow``).
    public private(set) var resyncCount = 0
    /// How many rows are of an attributes type shown generically (``ActivityRow/Details/generic(_:)``):
    /// the compact layout has a FIELDS column while there are any.
    public private(set) var genericCount = 0
    /// Increases with every change that can alter what the board shows.
    public private(set) var revision = 0
    /// Increases with every change that can alter the order of rows: a row added, removed, or a new
    /// relevance score.
    public private(set) var orderRevision = 0
    /// The devices whose status two agents publish in turn: an agent instance came back online
    /// after another one (a restarted agent never comes back as its old instance).
    public private(set) var duplicatedDevices: Set<DeviceID> = []
    /// The latest alerts, newest first, at most ``recentAlertLimit``.
    public private(set) var recentAlerts: [RecentAlert] = []
    /// Increases with every alert applied: a presenter rings the bell when it grows.
    public private(set) var alertCount = 0
    /// The last few agent instances each device's `online` statuses came from, oldest first.
    private var onlineInstances: [DeviceID: [String]] = [:]
    private var activitiesByDevice: [DeviceID: Set<String>] = [:]
    private var ended: Set<ActivityKey> = []
    /// Since when each row has been receiving envelopes with newer timestamps that the `seq` rule drops.
    private var heldBack: [ActivityKey: Date] = [:]

    /// Creates an empty fleet whose devices may have at most `maximumActivitiesPerDevice` rows each.
    public init(maximumActivitiesPerDevice: Int = defaultMaximumActivitiesPerDevice) {
        self.maximumActivitiesPerDevice = max(1, maximumActivitiesPerDevice)
    }

    /// An alert as the board's recent-alerts line shows it.
    public struct RecentAlert: Hashable, Sendable {
        /// The activity that raised it.
        public var key: ActivityKey
        /// The alert.
        public var alert: AlertConfiguration
        /// When it was raised (``ActivityRow/alertDate``).
        public var date: Date
    }

    /// What applying one input did.
    public enum Change: Hashable, Sendable {
        /// A row was added or updated.
        case updated(ActivityKey)
        /// A row was removed (its retained envelope was cleared).
        case removed(ActivityKey)
        /// A device's status or health changed (its rows may change state).
        case status(DeviceID)
        /// Nothing changed: an envelope with an old `seq`, or clearing an unknown row.
        case unchanged
        /// The input was rejected and counted.
        case rejected(BoardInput.Rejection)
    }

    /// Applies one input received at `now` (the board's clock); `superseded` envelopes of its topic
    /// arrived before it and were replaced unread (``Mailbox``): a gap in `seq` they explain is not missed.
    @discardableResult
    public mutating func apply(_ input: BoardInput, now: Date, superseded: Int = 0) -> Change {
        switch input {
        case .envelope(let envelope):
            let row = ActivityRow(envelope, receivedAt: now)
            noteSeen(row, now: now)
            return upsert(row, now: now, superseded: superseded)
        case .genericEnvelope(let envelope):
            let row = ActivityRow(envelope, receivedAt: now)
            noteSeen(row, now: now)
            return upsert(row, now: now, superseded: superseded)
        case .ownTracksLocation(var row):
            row.receivedAt = now
            noteSeen(row, now: now)
            let change = upsert(row, now: now, superseded: 0)
            // A location after the lwt: the device is back.
            if change != .unchanged, isOffline(row.key.device) {
                devices[row.key.device]?.state = .online
                devices[row.key.device]?.since = row.timestamp
                devices[row.key.device]?.reason = nil
            }
            return change
        case .activityCleared(let key):
            guard remove(key) else { return .unchanged }
            return .removed(key)
        case .status(let status):
            return applyStatus(status, now: now)
        case .statusCleared(let device):
            onlineInstances[device] = nil
            duplicatedDevices.remove(device)
            guard devices[device] != nil else { return .unchanged }
            if activitiesByDevice[device] == nil {
                devices[device] = nil
                orderRevision += 1
            } else {
                devices[device]?.state = nil
                devices[device]?.since = nil
                devices[device]?.reason = nil
            }
            revision += 1
            return .status(device)
        case .rejected(let rejection):
            rejectedCount += 1
            revision += 1
            return .rejected(rejection)
        }
    }

    private mutating func applyStatus(_ status: StatusMessage, now: Date) -> Change {
        if status.state == .online, let instance = status.instance {
            noteOnline(instance, of: status.device)
        }
        let known = devices[status.device]
        var device = known ?? DeviceStatus()
        if let old = known, old.state == status.state, status.since == nil, status.state == .offline {
            // A repeated will keeps the time the device was first seen offline.
            return .unchanged
        }
        device.state = status.state
        device.since = status.since ?? now
        device.reason = status.reason?.rawValue
        device.version = status.version
        device.instance = status.instance ?? device.instance
        if status.state == .online {
            device.dropped = status.dropped
            device.storageError = status.storageError
            device.clockOffset = status.clockOffset
            device.powerLosses = status.powerLosses
        }
        if let since = status.since { device.noteSeen(since, now: now) }
        guard device != known else { return .unchanged }
        if known == nil { orderRevision += 1 }
        devices[status.device] = device
        revision += 1
        return .status(status.device)
    }

    /// Notes when the device of `row` reported, and how far ahead of the board's clock.
    private mutating func noteSeen(_ row: ActivityRow, now: Date) {
        let known = devices.count
        // In place: one hash lookup for every envelope.
        devices[row.key.device, default: DeviceStatus()].noteEnvelope(at: row.latestTime, now: now)
        if devices.count != known { orderRevision += 1 }
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

    /// The health of `device`: its status's, whether two agents share it, whether a row of it was resynchronised.
    public func health(of device: DeviceID) -> DeviceHealth {
        guard let status = devices[device] else { return DeviceHealth(DeviceStatus()) }
        // Per row of every frame and every `--follow` line: no sorted copy of the device's activities,
        // and no look at them at all while no row was ever resynchronised.
        let resynced =
            resyncCount > 0
            && (activitiesByDevice[device] ?? []).contains {
                rows[ActivityKey(device: device, activity: $0)]?.resyncedAt != nil
            }
        return DeviceHealth(
            status, duplicate: !duplicatedDevices.isEmpty && duplicatedDevices.contains(device), resynced: resynced)
    }

    /// The state of a row at `now`.
    public func state(of row: ActivityRow, at now: Date) -> RowState {
        row.state(at: now, deviceOffline: isOffline(row.key.device))
    }

    /// The state of an entry at `now`: its activity's, or for a device row OFFLINE or IDLE.
    public func state(of entry: BoardEntry, at now: Date) -> RowState? {
        switch entry {
        case .activity(let key): rows[key].map { state(of: $0, at: now) }
        case .device(let device): devices[device] == nil ? nil : isOffline(device) ? .offline : .idle
        }
    }

    /// The keys of a device's activities.
    public func activities(of device: DeviceID) -> [ActivityKey] {
        (activitiesByDevice[device] ?? []).sorted().map { ActivityKey(device: device, activity: $0) }
    }

    /// How many activities `device` has on the board.
    public func activityCount(of device: DeviceID) -> Int {
        activitiesByDevice[device]?.count ?? 0
    }

    /// Every entry: each activity, and each device that has none (its own row). Visits every row.
    public var entries: [BoardEntry] {
        rows.keys.map(BoardEntry.activity)
            + devices.keys.filter { activitiesByDevice[$0] == nil }.map(BoardEntry.device)
    }

    /// How many rows are in each state at `now`; visits every row, so call it once per frame.
    public func counts(at now: Date) -> [RowState: Int] {
        var counts: [RowState: Int] = [:]
        for row in rows.values { counts[state(of: row, at: now), default: 0] += 1 }
        return counts
    }

    /// How many devices there are, offline and unhealthy; visits every device, so call it once per frame.
    public func deviceCounts() -> (devices: Int, offline: Int, unhealthy: Int) {
        var (offline, unhealthy) = (0, 0)
        for device in devices.keys {
            if isOffline(device) { offline += 1 }
            if !health(of: device).isHealthy { unhealthy += 1 }
        }
        return (devices.count, offline, unhealthy)
    }

    /// Adds or replaces a row, unless it is not newer (by `seq`) than the one shown and has not been
    /// held back for ``resyncWindow``.
    private mutating func upsert(_ new: ActivityRow, now: Date, superseded: Int) -> Change {
        let key = new.key
        var row = new
        if let old = rows[key] {
            if row.seq > old.seq {
                if !heldBack.isEmpty { heldBack[key] = nil }
                let gap = row.seq - old.seq - 1
                let allowed = max(
                    1000, row.timestamp.timeIntervalSince(old.timestamp) * Self.plausibleEnvelopesPerSecond)
                if Double(gap) <= allowed { missedCount += max(0, gap - superseded) } else { seqJumpCount += 1 }
                row.resyncedAt = old.resyncedAt
            } else {
                outdatedCount += 1
                // Newer content with an old seq: a restored state directory, or an absurd seq retained
                // earlier. Taken once it has kept coming for the window, so that no row freezes.
                guard row.timestamp > old.timestamp else { return .unchanged }
                let since = heldBack[key] ?? now
                guard now.timeIntervalSince(since) >= Self.resyncWindow else {
                    heldBack[key] = since
                    return .unchanged
                }
                heldBack[key] = nil
                resyncCount += 1
                row.resyncedAt = now
            }
            if row.lastAlert == nil {
                row.lastAlert = old.lastAlert
                row.alertDate = old.alertDate
            }
            if row.relevance != old.relevance { orderRevision += 1 }
            // An activity id taken by another type: rare, and two tag checks for the others.
            if row.isGeneric != old.isGeneric { genericCount += row.isGeneric ? 1 : -1 }
        } else {
            if activityCount(of: key.device) >= maximumActivitiesPerDevice {
                rejectedCount += 1
                revision += 1
                return .rejected(
                    .init(
                        topic: "\(key.device)/activities/\(key.activity)",
                        reason:
                            "device \(key.device) already has \(maximumActivitiesPerDevice) activities on the board "
                            + "(board.max-activities-per-device)"))
            }
            activitiesByDevice[key.device, default: []].insert(key.activity)
            orderRevision += 1
            if row.isGeneric { genericCount += 1 }
        }
        if new.lastAlert != nil, let date = row.alertDate, let alert = row.lastAlert {
            alertCount += 1
            recentAlerts.insert(RecentAlert(key: key, alert: alert, date: date), at: 0)
            if recentAlerts.count > Self.recentAlertLimit { recentAlerts.removeLast() }
        }
        rows[key] = row
        if row.event == .end {
            ended.insert(key)
        } else if !ended.isEmpty {
            ended.remove(key)
        }
        revision += 1
        return .updated(key)
    }

    @discardableResult
    private mutating func remove(_ key: ActivityKey) -> Bool {
        guard let row = rows.removeValue(forKey: key) else { return false }
        if row.isGeneric { genericCount -= 1 }
        ended.remove(key)
        heldBack[key] = nil
        activitiesByDevice[key.device]?.remove(key.activity)
        if activitiesByDevice[key.device]?.isEmpty == true { activitiesByDevice[key.device] = nil }
        revision += 1
        orderRevision += 1
        return true
    }
}

/// One row of the board: an activity, or a device that has none.
public enum BoardEntry: Hashable, Sendable, Comparable {
    /// An activity's row.
    case activity(ActivityKey)
    /// A device's own row: it has no activity on the board.
    case device(DeviceID)

    /// The entry's device.
    public var device: DeviceID {
        switch self {
        case .activity(let key): key.device
        case .device(let device): device
        }
    }

    /// By device, a device's own row before its activities, then by activity.
    public static func < (lhs: BoardEntry, rhs: BoardEntry) -> Bool {
        func parts(_ entry: BoardEntry) -> (String, String) {
            switch entry {
            case .activity(let key): (key.device.rawValue, key.activity)
            case .device(let device): (device.rawValue, "")
            }
        }
        return parts(lhs) < parts(rhs)
    }
}
