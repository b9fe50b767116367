import FoundationEssentials
import LiveActivity

extension TrackPoint {
    enum CodingKeys: String, CodingKey {
        case schema, device, activity, seq, time, latitude, longitude, altitude, speed, course, horizontalAccuracy, fix
        case satellites
    }

    /// The rule each checked value of a point keeps: the one list that ``init(from:)``,
    /// `init(json:at:)` and ``refusal()`` apply, key for key.
    enum Rule {
        static var activity: ValueRule<String> { .activityID }
        static var seq: ValueRule<Int> { .within(Myeline.sequenceRange) }
        static var latitude: ValueRule<Double> { .latitude }
        static var longitude: ValueRule<Double> { .longitude }
        static var speed: ValueRule<Double> { .atLeast(0) }
        static var course: ValueRule<Double> { .course }
        static var horizontalAccuracy: ValueRule<Double> { .atLeast(0) }
        static var satellites: ValueRule<Int> { .atLeast(0) }
    }

    /// Decodes and checks a track point.
    ///
    /// - Throws: `DecodingError` naming the key: a missing key, another schema, an invalid id, a
    ///   `seq` outside 1...2^53 − 1, or a value out of range.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        try container.check(.schema, .equal(to: Self.schema))
        self.init(
            device: try container.decode(DeviceID.self, forKey: .device),
            activity: try container.decode(.activity, Rule.activity),
            seq: try container.decode(.seq, Rule.seq),
            time: try container.decode(Date.self, forKey: .time),
            latitude: try container.decode(.latitude, Rule.latitude),
            longitude: try container.decode(.longitude, Rule.longitude),
            altitude: try container.decodeIfPresent(Double.self, forKey: .altitude),
            speed: try container.decodeIfPresent(.speed, Rule.speed),
            course: try container.decodeIfPresent(.course, Rule.course),
            horizontalAccuracy: try container.decodeIfPresent(.horizontalAccuracy, Rule.horizontalAccuracy),
            fix: try container.decodeIfPresent(FixMode.self, forKey: .fix),
            satellites: try container.decodeIfPresent(.satellites, Rule.satellites))
    }

    /// Encodes the point; absent optionals are omitted.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(Self.schema, forKey: .schema)
        try container.encode(device, forKey: .device)
        try container.encode(activity, forKey: .activity)
        try container.encode(seq, forKey: .seq)
        try container.encode(time, forKey: .time)
        try container.encode(latitude, forKey: .latitude)
        try container.encode(longitude, forKey: .longitude)
        try container.encodeIfPresent(altitude, forKey: .altitude)
        try container.encodeIfPresent(speed, forKey: .speed)
        try container.encodeIfPresent(course, forKey: .course)
        try container.encodeIfPresent(horizontalAccuracy, forKey: .horizontalAccuracy)
        try container.encodeIfPresent(fix, forKey: .fix)
        try container.encodeIfPresent(satellites, forKey: .satellites)
    }
}
