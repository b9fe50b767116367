import FoundationEssentials

/// Calendar arithmetic in UTC without Foundation's calendars (which are slow and locale-bound).
enum CivilTime {
    /// 9999-12-31T23:59:59Z in seconds since 1970: the last second a four-digit year can name.
    static let latestSecond: TimeInterval = 253_402_300_799

    /// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's days_from_civil).
    static func days(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = (month + 9) % 12
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    /// Whether year-month-day is a real date (day 31 of April is not).
    static func isValid(year: Int, month: Int, day: Int) -> Bool {
        guard (1...12).contains(month), day >= 1 else { return false }
        let lengths = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
        let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
        return day <= lengths[month - 1] + (month == 2 && leap ? 1 : 0)
    }

    /// Milliseconds since 1970 of a date and a time of day.
    static func milliseconds(days: Int, millisecondOfDay: Int) -> Int64 {
        Int64(days) * 86_400_000 + Int64(millisecondOfDay)
    }

    /// The `Date` for milliseconds since 1970: one correctly rounded division, the same `Date` as
    /// ``parseISO8601(_:)`` gives for the same instant.
    static func date(milliseconds: Int64) -> Date {
        Date(timeIntervalSince1970: Double(milliseconds) / 1000)
    }

    /// Parses an ISO 8601 / RFC 3339 date-time such as `2014-12-31T03:07:19.000Z`, with any number of
    /// fraction digits (rounded to the microsecond) and a `Z` or `±hh:mm` offset (none means UTC, as
    /// in GPX 1.0 files). `nil` for anything else.
    static func parseISO8601(_ bytes: UnsafeBufferPointer<UInt8>) -> Date? {
        var index = 0
        func number(_ width: Int) -> Int? {
            guard index + width <= bytes.count else { return nil }
            var value = 0
            for offset in 0..<width {
                let digit = bytes[index + offset] &- UInt8(ascii: "0")
                guard digit < 10 else { return nil }
                value = value * 10 + Int(digit)
            }
            index += width
            return value
        }
        func expect(_ character: Unicode.Scalar) -> Bool {
            guard index < bytes.count, bytes[index] == UInt8(ascii: character) else { return false }
            index += 1
            return true
        }
        guard let year = number(4), expect("-"), let month = number(2), expect("-"), let day = number(2) else {
            return nil
        }
        guard index < bytes.count,
            bytes[index] == UInt8(ascii: "T") || bytes[index] == UInt8(ascii: "t")
                || bytes[index] == UInt8(ascii: " ")
        else { return nil }
        index += 1
        guard let hour = number(2), expect(":"), let minute = number(2), expect(":"), let second = number(2) else {
            return nil
        }
        guard isValid(year: year, month: month, day: day), hour < 24, minute < 60, second <= 60 else { return nil }
        var fraction = 0.0
        if index < bytes.count && (bytes[index] == UInt8(ascii: ".") || bytes[index] == UInt8(ascii: ",")) {
            index += 1
            var scale = 0.1
            var digits = 0
            while index < bytes.count, bytes[index] &- UInt8(ascii: "0") < 10 {
                fraction += Double(bytes[index] &- UInt8(ascii: "0")) * scale
                scale /= 10
                digits += 1
                index += 1
            }
            guard digits > 0 else { return nil }
        }
        var offsetSeconds = 0
        if index < bytes.count {
            if bytes[index] == UInt8(ascii: "Z") || bytes[index] == UInt8(ascii: "z") {
                index += 1
            } else if bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
                let sign = bytes[index] == UInt8(ascii: "-") ? -1 : 1
                index += 1
                guard let hours = number(2) else { return nil }
                _ = expect(":")
                guard let minutes = number(2), hours < 24, minutes < 60 else { return nil }
                offsetSeconds = sign * (hours * 3600 + minutes * 60)
            } else {
                return nil
            }
        }
        guard index == bytes.count else { return nil }
        let days = days(year: year, month: month, day: day)
        let whole = days * 86_400 + hour * 3600 + minute * 60 + second - offsetSeconds
        // One division of an exact integer count of microseconds, so that equal instants parsed
        // from NMEA (milliseconds) and from ISO 8601 give the same `Date`, bit for bit.
        let micros = Int64(whole) * 1_000_000 + Int64((fraction * 1_000_000).rounded())
        return Date(timeIntervalSince1970: Double(micros) / 1_000_000)
    }

    /// Parses an ISO 8601 date-time from a string (see the byte version).
    static func parseISO8601(_ text: String) -> Date? {
        var text = text
        return text.withUTF8 { parseISO8601($0) }
    }
}
