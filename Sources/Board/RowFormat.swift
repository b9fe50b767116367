import Foundation
import LiveActivity

/// How a row's values are written on the board: units for people, fixed widths, `-` when unknown.
public enum RowFormat {
    /// What the iOS app's lock-screen view says when there is no position.
    public static let noLocation = "No Location Available"

    /// `52.52001, 13.40495` (degrees, 5 decimals), or "No Location Available".
    public static func location(_ content: LocationActivityAttributes.ContentState) -> String {
        guard let latitude = content.latitude, let longitude = content.longitude else { return noLocation }
        return "\(fixed(latitude, 5)), \(fixed(longitude, 5))"
    }

    /// What a value no receiver reports is shown as (a speed of 1e308 m/s, a date 1e18 s away): the
    /// contract allows any finite number, the board does not print it raw.
    public static let implausible = "?"
    /// The fastest speed shown, m/s (2,000 km/h); faster is ``implausible``.
    public static let plausibleSpeed = 2000 / 3.6
    /// The longest distance shown, metres (100,000 km); longer is ``implausible``.
    public static let plausibleDistance = 1e8
    /// The longest span shown, seconds (100 years); longer is ``implausible``.
    public static let plausibleSpan = 100 * 365.25 * 86_400

    /// Speed in km/h, whole: `42`.
    public static func speed(_ metresPerSecond: Double?) -> String {
        guard let metresPerSecond else { return "-" }
        guard metresPerSecond.isFinite, metresPerSecond <= plausibleSpeed else { return implausible }
        return String(whole((metresPerSecond * 3.6).rounded()))
    }

    /// Course in whole degrees true: `87°`.
    public static func course(_ degrees: Double?) -> String {
        degrees.map { "\(whole($0.rounded()) % 360)°" } ?? "-"
    }

    /// `3D/9` (fix and satellites), `2D`, or `-` without a fix.
    public static func fix(_ content: LocationActivityAttributes.ContentState) -> String {
        let mode: String
        switch content.fix {
        case .noFix: return "-"
        case .fix2D: mode = "2D"
        case .fix3D: mode = "3D"
        }
        return content.satellites.map { "\(mode)/\($0)" } ?? mode
    }

    /// A length in metres: `850m`, `12.3km`, `1234km`.
    public static func distance(_ metres: Double?) -> String {
        guard let metres else { return "-" }
        guard metres.isFinite, metres <= plausibleDistance else { return implausible }
        if metres < 1000 { return "\(whole(metres.rounded()))m" }
        if metres < 100_000 { return "\(fixed(metres / 1000, 1))km" }
        return "\(whole((metres / 1000).rounded()))km"
    }

    /// A duration in seconds as `h:mm:ss`.
    public static func elapsed(_ seconds: Double) -> String {
        guard seconds <= plausibleSpan else { return implausible }
        let total = whole(max(0, seconds).rounded(.down))
        let (hours, minutes, rest) = (total / 3600, total / 60 % 60, total % 60)
        return "\(hours):\(twoDigits(minutes)):\(twoDigits(rest))"
    }

    /// How long ago, in the largest unit: `3s`, `12m`, `2h`, `5d`, `3y`; a date in the future by
    /// less than the clock tolerance (``DeviceHealth/clockTolerance``) is `0s`, by more, or over 100
    /// years ago, ``implausible`` (the device's clock is off: its health says by how much).
    public static func age(since date: Date?, now: Date) -> String {
        guard let date else { return "-" }
        let age = now.timeIntervalSince(date)
        guard age >= -DeviceHealth.clockTolerance, age <= plausibleSpan else { return implausible }
        return compact(max(0, age))
    }

    /// How far ahead: `+12m`, `+2h`, or `due` when past.
    public static func eta(_ date: Date?, now: Date) -> String {
        guard let date else { return "-" }
        let ahead = date.timeIntervalSince(now)
        guard ahead <= plausibleSpan else { return implausible }
        return ahead <= 0 ? "due" : "+" + compact(ahead)
    }

    /// `status: Out for delivery`: a row's status text (``ActivityRow/statusText``) made safe for a
    /// terminal, or nil when there is none or it is blank.
    public static func status(_ row: ActivityRow) -> String? {
        guard let text = row.statusText, !text.allSatisfy(\.isWhitespace) else { return nil }
        return "status: " + TerminalText.sanitized(text)
    }

    /// A share 0...1 as `45%`.
    public static func progress(_ share: Double?) -> String {
        share.map { "\(whole(($0 * 100).rounded()))%" } ?? "-"
    }

    /// A span of time in at most two units: `45s`, `12m`, `1h57m`, `3d`, `55y`, or ``implausible``
    /// beyond 100 years.
    public static func span(_ seconds: Double) -> String {
        guard seconds.isFinite, seconds <= plausibleSpan else { return implausible }
        let total = whole(max(0, seconds).rounded(.down))
        if total >= 3600, total < 86_400, total % 3600 >= 60 { return "\(total / 3600)h\(total / 60 % 60)m" }
        return compact(Double(total))
    }

    /// An integer with thousands separators: `10,000`.
    public static func count(_ value: Int) -> String {
        let digits = String(value.magnitude)
        var result = ""
        for (index, digit) in digits.enumerated() {
            if index > 0, (digits.count - index) % 3 == 0 { result.append(",") }
            result.append(digit)
        }
        return (value < 0 ? "-" : "") + result
    }

    private static func compact(_ seconds: Double) -> String {
        let seconds = whole(seconds.rounded(.down))
        if seconds < 60 { return "\(seconds)s" }
        if seconds < 3600 { return "\(seconds / 60)m" }
        if seconds < 86_400 { return "\(seconds / 3600)h" }
        if seconds < 31_557_600 { return "\(seconds / 86_400)d" }
        return "\(seconds / 31_557_600)y"
    }

    /// The largest magnitude shown; the wire allows any finite number (a speed of 1e308 m/s, a date
    /// 1e300 s away), which as an `Int` would trap.
    static let largestShown = 1e15

    /// A whole number as an `Int`, clamped to ±``largestShown`` (NaN as 0).
    private static func whole(_ value: Double) -> Int {
        value.isNaN ? 0 : Int(min(max(value, -largestShown), largestShown))
    }

    private static func twoDigits(_ value: Int) -> String {
        value < 10 ? "0\(value)" : "\(value)"
    }

    /// `value` with exactly `decimals` decimals, without locale or exponent.
    static func fixed(_ value: Double, _ decimals: Int) -> String {
        guard value.isFinite else { return "-" }
        let scale = pow(10, Double(decimals))
        let scaled = Int64(min(abs(value) * scale, largestShown).rounded())
        let integer = scaled / Int64(scale)
        let fraction = String(scaled % Int64(scale))
        let padded = String(repeating: "0", count: decimals - fraction.count) + fraction
        let sign = value < 0 && scaled != 0 ? "-" : ""
        return decimals == 0 ? "\(sign)\(integer)" : "\(sign)\(integer).\(padded)"
    }
}
