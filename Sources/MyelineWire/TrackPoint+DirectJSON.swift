import DirectJSON
import FoundationEssentials
import LiveActivity

extension TrackPoint {
    /// The point's JSON as ``WireCodec`` sends it, written without `JSONEncoder`: the same bytes as
    /// ``ContentJSON``'s encoder gives (keys sorted, slashes unescaped, `time` in seconds rounded to
    /// milliseconds, absent optionals omitted, every number in the form `JSONEncoder` writes it).
    /// Nil when a number is not finite: `JSONEncoder` then says why the point cannot be sent.
    ///
    /// The agent encodes one point a fix; through `JSONEncoder` that was 8.6 % of its CPU at 1 Hz
    /// (issue 24: an encoder object tree, a box per key, the keys sorted for each point).
    /// `TrackPointDirectJSONTests` hold it to `JSONEncoder`'s bytes (hostile strings, extreme
    /// numbers, absent fields, and random points); `scripts/bench-micro --filter 'Track point'`
    /// measures both.
    @_spi(Fuzzing)
    public func directJSON() -> [UInt8]? {
        var json = DirectJSONWriter(
            capacity: 320 + activity.utf8.count + device.rawValue.utf8.count, escapingSlashes: false)
        // The keys in the order `.sortedKeys` gives them; an absent optional is no member.
        json.member("activity", string: activity)
        json.member("altitude", number: altitude)
        json.member("course", number: course)
        json.member("device", string: device.rawValue)
        json.member("fix", string: fix?.rawValue)
        json.member("horizontalAccuracy", number: horizontalAccuracy)
        json.member("latitude", number: latitude)
        json.member("longitude", number: longitude)
        json.member("satellites", integer: satellites)
        json.member("schema", string: Self.schema)
        json.member("seq", integer: seq)
        json.member("speed", number: speed)
        json.member("time", number: ContentJSON.seconds(time))
        return json.finish()
    }
}
