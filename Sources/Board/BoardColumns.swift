import Foundation

/// The compact layout's columns, in their order on screen, each with how important it is: at a
/// given width the board shows the most important columns that fit and widens the ones that can
/// use more room (names, health, the alert's text).
public enum BoardColumn: String, CaseIterable, Hashable, Sendable {
    /// The device id.
    case device = "DEVICE"
    /// The activity's name.
    case name = "NAME"
    /// The row state, with ↺ when resynchronised.
    case state = "STATE"
    /// How long the device has been in its link state (offline since, online since).
    case since = "SINCE"
    /// Latitude and longitude; the attributes type of an activity of another type.
    case location = "LOCATION"
    /// The content's top-level values of an activity of another attributes type (``GenericActivity``):
    /// shown only while the board has such an activity.
    case fields = "FIELDS"
    /// Speed, km/h.
    case speed = "KM/H"
    /// Course, degrees true.
    case course = "CRS"
    /// Fix kind and satellites.
    case fix = "FIX"
    /// Horizontal accuracy.
    case accuracy = "ACC"
    /// Age of the last fix.
    case age = "AGE"
    /// When the device last reported, ago.
    case seen = "SEEN"
    /// The trip's distance.
    case distance = "DIST"
    /// The trip's time.
    case elapsed = "ELAPSED"
    /// Progress to the destination.
    case progress = "PROG"
    /// Time to the destination.
    case eta = "ETA"
    /// The device's health issues.
    case health = "HEALTH"
    /// The last alert's title and age.
    case alert = "ALERT"

    /// Most important first: which columns stay as the terminal narrows.
    public static let byPriority: [BoardColumn] = [
        .device, .state, .age, .since, .location, .speed, .progress, .eta, .alert, .fields, .health, .name,
        .distance, .elapsed, .seen, .course, .fix, .accuracy,
    ]

    /// How the room left is shared out, in order: each column up to its width, then the alert takes the rest.
    static let widening: [(column: BoardColumn, width: Int)] = [
        (.alert, 20), (.health, 14), (.alert, 24), (.fields, 40), (.health, 20), (.name, 20), (.device, 16),
    ]

    /// The narrowest the column is shown, columns.
    public var minimumWidth: Int {
        switch self {
        case .device: 10
        case .name: 11
        case .state: 8
        case .since, .age, .seen, .eta, .accuracy, .fix: 5
        case .location: 21
        case .fields: 16
        case .speed, .course, .progress: 4
        case .distance: 7
        case .elapsed: 8
        case .health: 10
        case .alert: 10
        }
    }

    /// Whether values are aligned right.
    public var alignsRight: Bool {
        switch self {
        case .since, .speed, .course, .accuracy, .age, .seen, .distance, .elapsed, .progress, .eta: true
        default: false
        }
    }

    /// The columns shown at `width` and their widths, in screen order: the most important ones whose
    /// narrowest widths fit (one space between columns; once the name is in, the columns after it
    /// must also leave the alert 20 columns and the health 14), then the room left shared out to the
    /// columns that can widen (``widening``), the rest to the alert. FIELDS is a candidate only when
    /// `fields` is true (the board shows an activity of another attributes type).
    public static func plan(width: Int, fields: Bool = false) -> [(column: BoardColumn, width: Int)] {
        var chosen: Set<BoardColumn> = []
        var used = -1
        var reserve = 0
        for column in byPriority where fields || column != .fields {
            guard used + 1 + column.minimumWidth + reserve <= width else { break }
            chosen.insert(column)
            used += 1 + column.minimumWidth
            if column == .name { reserve = 14 }
        }
        var widths = Dictionary(uniqueKeysWithValues: chosen.map { ($0, $0.minimumWidth) })
        var room = max(0, width - used)
        for (column, target) in widening where chosen.contains(column) {
            let extra = min(room, max(0, target - widths[column]!))
            widths[column]! += extra
            room -= extra
        }
        if chosen.contains(.alert) { widths[.alert]! += room }
        return allCases.filter(chosen.contains).map { ($0, widths[$0]!) }
    }
}
