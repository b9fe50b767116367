import Foundation

/// How the board orders its rows; `s` cycles through them.
public enum SortOrder: String, CaseIterable, Hashable, Sendable {
    /// Relevance score, highest first, then device and activity (the default).
    case relevance
    /// Device, then activity.
    case device
    /// State (offline, stale, paused, active, ended), then relevance.
    case state
    /// Most recently received first.
    case recent

    /// The next order in the cycle.
    public var next: SortOrder {
        let all = Self.allCases
        return all[(all.firstIndex(of: self)! + 1) % all.count]
    }
}

/// What the person at the board chose: the order, the device filter and the scroll position.
///
/// It keeps the ordered, filtered keys and computes them again only when the fleet's order, the sort
/// or the filter changed (or on every frame for the time-dependent `state` order): never per message.
public struct BoardView: Sendable {
    /// The row order.
    public var sort: SortOrder = .relevance {
        didSet { invalidate() }
    }
    /// Only devices whose id contains this text are shown; empty shows all.
    public var filter: String = "" {
        didSet { invalidate() }
    }
    /// Whether keys are being typed into the filter (after `/`).
    public var isEditingFilter = false
    /// The index of the first row shown, in the ordered, filtered rows.
    public var offset = 0

    private var cachedKeys: [ActivityKey] = []
    private var cachedRevision = -1

    /// Creates the default view: by relevance, no filter, at the top.
    public init(sort: SortOrder = .relevance, filter: String = "") {
        self.sort = sort
        self.filter = filter
    }

    private mutating func invalidate() {
        cachedRevision = -1
        offset = 0
    }

    /// The rows to show, in order; computed again only when something they depend on changed.
    public mutating func orderedKeys(_ fleet: Fleet, now: Date) -> [ActivityKey] {
        let revision: Int =
            switch sort {
            case .relevance, .device: fleet.orderRevision
            case .recent: fleet.revision
            case .state: -2
            }
        if revision == cachedRevision, revision >= 0 { return cachedKeys }
        cachedKeys = Self.order(fleet, sort: sort, filter: filter, now: now)
        cachedRevision = revision
        return cachedKeys
    }

    /// Orders and filters the fleet's rows; visits every row.
    public static func order(_ fleet: Fleet, sort: SortOrder, filter: String, now: Date) -> [ActivityKey] {
        let needle = filter.lowercased()
        var rows = fleet.rows.values.filter { needle.isEmpty || $0.key.device.rawValue.contains(needle) }
        switch sort {
        case .relevance:
            rows.sort { ($0.relevance, $1.key) > ($1.relevance, $0.key) }
        case .device:
            rows.sort { $0.key < $1.key }
        case .recent:
            rows.sort { ($0.receivedAt, $1.key) > ($1.receivedAt, $0.key) }
        case .state:
            let ranks = rows.map { rank(fleet.state(of: $0, at: now)) }
            return zip(rows, ranks).sorted { a, b in
                (a.1, b.0.relevance, a.0.key) < (b.1, a.0.relevance, b.0.key)
            }.map(\.0.key)
        }
        return rows.map(\.key)
    }

    private static func rank(_ state: RowState) -> Int {
        switch state {
        case .offline: 0
        case .stale: 1
        case .paused: 2
        case .active: 3
        case .ended: 4
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
        case .character("/"):
            isEditingFilter = true
            filter = ""
        case .escape: filter = ""
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
