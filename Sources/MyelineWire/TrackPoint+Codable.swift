import FoundationEssentials
import LiveActivity

extension TrackPoint {
    enum CodingKeys: String, CodingKey {
        case schema, device, activity, seq, time, latitude, longitude, altitude, speed, course, horizontalAccuracy, fix
        case satellites
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
            activity: try container.decode(.activity, .activityID),
            seq: try container.decode(.seq, .within(Myeline.sequenceRange)),
            time: try container.decode(Date.self, forKey: .time),
            latitude: try container.decode(.latitude, .latitude),
            longitude: try container.decode(.longitude, .longitude),
            altitude: try container.decodeIfPresent(Double.self, forKey: .altitude),
            speed: try container.decodeIfPresent(.speed, .atLeast(0)),
            course: try container.decodeIfPresent(.course, .course),
            horizontalAccuracy: try container.decodeIfPresent(.horizontalAccuracy, .atLeast(0)),
            fix: try container.decodeIfPresent(FixMode.self, forKey: .fix),
            satellites: try container.decodeIfPresent(.satellites, .atLeast(0)))
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
