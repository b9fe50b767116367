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

    /// Speed in km/h, whole: `42`.
    public static func speed(_ metresPerSecond: Double?) -> String {
        metresPerSecond.map { String(whole(($0 * 3.6).rounded())) } ?? "-"
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
        guard let metres, metres.isFinite else { return "-" }
        if metres < 1000 { return "\(whole(metres.rounded()))m" }
        if metres < 100_000 { return "\(fixed(metres / 1000, 1))km" }
        return "\(whole((metres / 1000).rounded()))km"
    }

    /// A duration in seconds as `h:mm:ss`.
    public static func elapsed(_ seconds: Double) -> String {
        let total = whole(max(0, seconds).rounded(.down))
        let (hours, minutes, rest) = (total / 3600, total / 60 % 60, total % 60)
        return "\(hours):\(twoDigits(minutes)):\(twoDigits(rest))"
    }

    /// How long ago, in the largest unit: `3s`, `12m`, `2h`, `5d`; a future date is `0s`.
    public static func age(since date: Date?, now: Date) -> String {
        guard let date else { return "-" }
        return compact(max(0, now.timeIntervalSince(date)))
    }

    /// How far ahead: `+12m`, `+2h`, or `due` when past.
    public static func eta(_ date: Date?, now: Date) -> String {
        guard let date else { return "-" }
        let ahead = date.timeIntervalSince(now)
        return ahead <= 0 ? "due" : "+" + compact(ahead)
    }

    /// A share 0...1 as `45%`.
    public static func progress(_ share: Double?) -> String {
        share.map { "\(whole(($0 * 100).rounded()))%" } ?? "-"
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
        return "\(seconds / 86_400)d"
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
