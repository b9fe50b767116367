import Foundation
import LiveActivity

/// How the board orders its rows; `s` cycles through them.
public enum SortOrder: String, CaseIterable, Hashable, Sendable {
    /// Relevance score, highest first, then device and activity (the default); device rows last.
    case relevance
    /// Device, then activity.
    case device
    /// State (offline, stale, paused, active, idle, ended), then relevance.
    case state
    /// Most recently received first.
    case recent
    /// What needs attention first: offline devices, then unhealthy ones, then by state.
    case attention

    /// The next order in the cycle.
    public var next: SortOrder { cycled }
}

/// Which rows the board shows besides the text filter; `f` cycles through them.
public enum RowFilter: String, CaseIterable, Hashable, Sendable {
    /// Every row.
    case all
    /// The rows of offline devices.
    case offline
    /// The rows of devices with a health issue (``DeviceHealth``) or offline.
    case unhealthy

    /// The next filter in the cycle.
    public var next: RowFilter { cycled }
}

/// What the person at the board chose: the layout, the order, the filters and the scroll position.
///
/// It keeps the ordered, filtered entries and computes them again only when the fleet's order, the
/// sort or the filter changed (or on every frame for the time- and health-dependent orders and
/// filters): never per message.
public struct BoardView: Sendable {
    /// The presentation; `l` cycles through them.
    public var layout: BoardLayout
    /// The row order.
    public var sort: SortOrder = .relevance {
        didSet { invalidate() }
    }
    /// Only devices whose id contains this text are shown; empty shows all.
    public var filter: String = "" {
        didSet { invalidate() }
    }
    /// Only offline or unhealthy devices, or all.
    public var rows: RowFilter = .all {
        didSet { invalidate() }
    }
    /// Whether keys are being typed into the filter (after `/`).
    public var isEditingFilter = false
    /// The index of the first row shown, in the ordered, filtered rows.
    public var offset = 0

    private var cachedEntries: [BoardEntry] = []
    private var cachedRevision = -1

    /// Creates the default view: by relevance, no filter, at the top.
    public init(
        layout: BoardLayout = .compact, sort: SortOrder = .relevance, filter: String = "", rows: RowFilter = .all
    ) {
        self.layout = layout
        self.sort = sort
        self.filter = filter
        self.rows = rows
    }

    private mutating func invalidate() {
        cachedRevision = -1
        offset = 0
    }

    /// The rows to show, in order; computed again only when something they depend on changed.
    public mutating func orderedEntries(_ fleet: Fleet, now: Date) -> [BoardEntry] {
        let revision: Int =
            switch (sort, rows) {
            case (.relevance, .all), (.device, .all): fleet.orderRevision
            case (.recent, .all): fleet.revision
            default: -2
            }
        if revision == cachedRevision, revision >= 0 { return cachedEntries }
        cachedEntries = Self.order(fleet, sort: sort, filter: filter, rows: rows, now: now)
        cachedRevision = revision
        return cachedEntries
    }

    /// The activity rows to show, in order (device rows left out).
    public mutating func orderedKeys(_ fleet: Fleet, now: Date) -> [ActivityKey] {
        orderedEntries(fleet, now: now).compactMap { entry in
            if case .activity(let key) = entry { return key }
            return nil
        }
    }

    /// Orders and filters the fleet's entries; visits every row.
    public static func order(
        _ fleet: Fleet, sort: SortOrder, filter: String, rows: RowFilter = .all, now: Date
    ) -> [BoardEntry] {
        let needle = filter.lowercased()
        var health: [DeviceID: Bool] = [:]
        func healthy(_ device: DeviceID) -> Bool {
            if let known = health[device] { return known }
            let value = fleet.health(of: device).isHealthy
            health[device] = value
            return value
        }
        let entries = fleet.entries.filter { entry in
            let device = entry.device
            guard needle.isEmpty || device.rawValue.contains(needle) else { return false }
            switch rows {
            case .all: return true
            case .offline: return fleet.isOffline(device)
            case .unhealthy: return fleet.isOffline(device) || !healthy(device)
            }
        }
        func relevance(_ entry: BoardEntry) -> Double {
            guard case .activity(let key) = entry else { return -.infinity }
            return fleet.rows[key]?.relevance ?? -.infinity
        }
        func received(_ entry: BoardEntry) -> Date {
            guard case .activity(let key) = entry else { return fleet.devices[entry.device]?.lastSeen ?? .distantPast }
            return fleet.rows[key]?.receivedAt ?? .distantPast
        }
        switch sort {
        case .relevance:
            return entries.map { ($0, relevance($0)) }.sorted { ($0.1, $1.0) > ($1.1, $0.0) }.map(\.0)
        case .device:
            return entries.sorted()
        case .recent:
            return entries.map { ($0, received($0)) }.sorted { ($0.1, $1.0) > ($1.1, $0.0) }.map(\.0)
        case .state, .attention:
            let ranked = entries.map { entry -> (BoardEntry, Int, Double) in
                var rank = fleet.state(of: entry, at: now).map(Self.rank) ?? 9
                if sort == .attention {
                    rank += fleet.isOffline(entry.device) ? 0 : healthy(entry.device) ? 20 : 10
                }
                return (entry, rank, relevance(entry))
            }
            return ranked.sorted { a, b in (a.1, b.2, a.0) < (b.1, a.2, b.0) }.map(\.0)
        }
    }

    private static func rank(_ state: RowState) -> Int {
        switch state {
        case .offline: 0
        case .stale: 1
        case .paused: 2
        case .active: 3
        case .idle: 4
        case .ended: 5
        }
    }

    /// What a key press asks of the board's owner.
    public enum Action: Hashable, Sendable {
        /// Nothing beyond a new frame.
        case redraw
        /// Quit.
        case quit
    }

    /// Applies a key press; `pageSize` is how many rows fit on screen, `rowCount` how many there are.
    public mutating func handle(_ key: BoardKey, pageSize: Int, rowCount: Int) -> Action {
        if isEditingFilter {
            switch key {
            case .character(let character): filter.append(character)
            case .backspace: if !filter.isEmpty { filter.removeLast() }
            case .enter: isEditingFilter = false
            case .escape:
                filter = ""
                isEditingFilter = false
            default: break
            }
            return .redraw
        }
        let lastPage = max(0, rowCount - max(1, pageSize))
        switch key {
        case .character("q"), .character("Q"): return .quit
        case .character("s"), .character("S"): sort = sort.next
        case .character("f"), .character("F"): rows = rows.next
        case .character("l"), .character("L"):
            layout = layout.next
            offset = 0
        case .character("/"):
            isEditingFilter = true
            filter = ""
        case .escape:
            filter = ""
            rows = .all
        case .up: offset -= 1
        case .down: offset += 1
        case .pageUp: offset -= max(1, pageSize)
        case .pageDown: offset += max(1, pageSize)
        case .home: offset = 0
        case .end: offset = lastPage
        default: break
        }
        offset = min(max(0, offset), lastPage)
        return .redraw
    }
}
