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
        metresPerSecond.map { String(Int(($0 * 3.6).rounded())) } ?? "-"
    }

    /// Course in whole degrees true: `87°`.
    public static func course(_ degrees: Double?) -> String {
        degrees.map { "\(Int($0.rounded()) % 360)°" } ?? "-"
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
        if metres < 1000 { return "\(Int(metres.rounded()))m" }
        if metres < 100_000 { return "\(fixed(metres / 1000, 1))km" }
        return "\(Int((metres / 1000).rounded()))km"
    }

    /// A duration in seconds as `h:mm:ss`.
    public static func elapsed(_ seconds: Double) -> String {
        let total = Int(max(0, seconds).rounded(.down))
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
        share.map { "\(Int(($0 * 100).rounded()))%" } ?? "-"
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
        let whole = Int(seconds.rounded(.down))
        if whole < 60 { return "\(whole)s" }
        if whole < 3600 { return "\(whole / 60)m" }
        if whole < 86_400 { return "\(whole / 3600)h" }
        return "\(whole / 86_400)d"
    }

    private static func twoDigits(_ value: Int) -> String {
        value < 10 ? "0\(value)" : "\(value)"
    }

    /// `value` with exactly `decimals` decimals, without locale or exponent.
    static func fixed(_ value: Double, _ decimals: Int) -> String {
        guard value.isFinite else { return "-" }
        let scale = pow(10, Double(decimals))
        let scaled = Int64((abs(value) * scale).rounded())
        let integer = scaled / Int64(scale)
        let fraction = String(scaled % Int64(scale))
        let padded = String(repeating: "0", count: decimals - fraction.count) + fraction
        let sign = value < 0 && scaled != 0 ? "-" : ""
        return decimals == 0 ? "\(sign)\(integer)" : "\(sign)\(integer).\(padded)"
    }
}
