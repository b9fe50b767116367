import FoundationEssentials

/// The JSON an activity's content takes: keys sorted, slashes unescaped, dates as UNIX epoch seconds
/// (JSON numbers) rounded to milliseconds, absent optionals omitted.
///
/// ActivityKit limits an activity's dynamic data by its size as JSON, so the model owns this
/// encoding: ``ActivityModel/validateSize(of:)`` measures with it, and the wire module's codec
/// writes every payload with it, so that what is measured is what is sent.
package enum ContentJSON {
    /// The encoder of every payload.
    package static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(seconds(date))
        }
        return encoder
    }()

    /// A date's seconds since 1970 as sent: rounded to milliseconds, so that encoding what was decoded
    /// gives the same bytes. Beyond 10^12 s (31,700 years) a `Double` keeps too few digits for that
    /// rounding to be stable, and the seconds are sent as they are.
    package static func seconds(_ date: Date) -> Double {
        let seconds = date.timeIntervalSince1970
        return abs(seconds) < 1e12 ? (seconds * 1000).rounded() / 1000 : seconds
    }

    /// How many bytes `value` takes as JSON; nil when it does not encode.
    package static func size(of value: some Encodable) -> Int? {
        try? encoder.encode(value).count
    }
}
