import DirectJSON
import FoundationEssentials
import LiveActivity

extension TrackPoint: WireJSONEncodable {
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
        directJSON(capacity: 320 + activity.utf8.count + device.rawValue.utf8.count)
    }

    /// What the receivers' decode would refuse in this point, as the error it throws (the rules of
    /// ``init(from:)``, key for key, in its order): nil when it would take the point.
    ///
    /// ``WireCodec/encode(_:)`` checks a point written by ``directJSON()`` with it, where any other
    /// payload is decoded again: that decode was more than half of a point's encoding, one a fix
    /// (issue 24). The two agree because the point's JSON gives back its values exactly (the
    /// schema and the device are right by construction, a date is any number);
    /// `TrackPointDirectJSONTests` hold them to the same verdict and message for every point.
    func refusal() -> DecodingError? {
        func check<Value>(_ value: Value?, _ key: CodingKeys, _ rule: ValueRule<Value>) -> DecodingError? {
            guard let value, let problem = rule.problem(value) else { return nil }
            return .dataCorrupted(DecodingError.Context(codingPath: [key], debugDescription: problem))
        }
        return check(activity, .activity, Rule.activity) ?? check(seq, .seq, Rule.seq)
            ?? check(latitude, .latitude, Rule.latitude) ?? check(longitude, .longitude, Rule.longitude)
            ?? check(speed, .speed, Rule.speed) ?? check(course, .course, Rule.course)
            ?? check(horizontalAccuracy, .horizontalAccuracy, Rule.horizontalAccuracy)
            ?? check(satellites, .satellites, Rule.satellites)
    }

    /// The point's keys in the order `.sortedKeys` gives them; an absent optional is no member.
    func writeMembers(to json: inout DirectJSONWriter) {
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
        json.member("time", date: time)
    }
}
