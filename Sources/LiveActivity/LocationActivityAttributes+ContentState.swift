import FoundationEssentials

extension LocationActivityAttributes {
    /// The changing part of a location activity: the latest position and the trip so far.
    ///
    /// As in the iOS app, nil latitude and longitude mean "no location yet" or "no location any
    /// more"; on the wire they are then absent. Latitude and longitude are present together or not at all.
    public struct ContentState: Codable, Hashable, Sendable {
        /// The wire keys, declared (not synthesized) so that `init(json:at:)` reads the same ones.
        package enum CodingKeys: String, CodingKey {
            case latitude, longitude, altitude, speed, course, horizontalAccuracy, fix, satellites, fixTime
            case distance, elapsed, paused, progress, eta, destination, status
        }

        /// Latitude in degrees (WGS 84), -90...90; nil when there is no location.
        public var latitude: Double?
        /// Longitude in degrees (WGS 84), -180...180; nil when there is no location.
        public var longitude: Double?
        /// Altitude above mean sea level in metres, if known.
        public var altitude: Double?
        /// Speed over ground in metres per second, at least 0, if known.
        public var speed: Double?
        /// Course over ground in degrees true, 0...360, if known.
        public var course: Double?
        /// Horizontal accuracy (error radius) in metres, at least 0, if known.
        public var horizontalAccuracy: Double?
        /// The kind of satellite fix.
        public var fix: FixMode
        /// How many satellites were used, at least 0, if known.
        public var satellites: Int?
        /// When the position was fixed, UTC, if known.
        public var fixTime: Date?
        /// Distance travelled on this trip in metres, at least 0.
        public var distance: Double
        /// Time travelled on this trip in seconds, pauses excluded, at least 0.
        public var elapsed: Double
        /// Whether the trip is paused.
        public var paused: Bool
        /// How much of the way to the destination is done, 0...1; nil without a destination.
        public var progress: Double?
        /// Estimated time of arrival at the destination, UTC, if known.
        public var eta: Date?
        /// The destination now, when a push update changed it from the attributes' one; progress
        /// and ``eta`` count toward it. Nil: the attributes' destination, if any.
        public var destination: LocationActivityAttributes.Destination?
        /// A status text set from afar (a `start` or `update` command), such as `Out for
        /// delivery`; nil when none was set.
        public var status: String?

        /// Creates a content state; with no arguments it is the "no location" state (fix `none`).
        /// Values are checked when encoded.
        public init(
            latitude: Double? = nil, longitude: Double? = nil, altitude: Double? = nil, speed: Double? = nil,
            course: Double? = nil, horizontalAccuracy: Double? = nil, fix: FixMode = .noFix, satellites: Int? = nil,
            fixTime: Date? = nil, distance: Double = 0, elapsed: Double = 0, paused: Bool = false,
            progress: Double? = nil, eta: Date? = nil, destination: LocationActivityAttributes.Destination? = nil,
            status: String? = nil
        ) {
            self.latitude = latitude
            self.longitude = longitude
            self.altitude = altitude
            self.speed = speed
            self.course = course
            self.horizontalAccuracy = horizontalAccuracy
            self.fix = fix
            self.satellites = satellites
            self.fixTime = fixTime
            self.distance = distance
            self.elapsed = elapsed
            self.paused = paused
            self.progress = progress
            self.eta = eta
            self.destination = destination
            self.status = status
        }

        /// Decodes and checks a content state.
        ///
        /// - Throws: `DecodingError` naming the key: a missing key (`fix`, `distance`, `elapsed`
        ///   and `paused` are required; `longitude` with `latitude` and the reverse), or a value
        ///   out of range.
        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            latitude = try container.decodeIfPresent(.latitude, .latitude)
            longitude = try container.decodeIfPresent(.longitude, .longitude)
            switch (latitude, longitude) {
            case (_?, nil): throw container.missing(.longitude)
            case (nil, _?): throw container.missing(.latitude)
            default: break
            }
            altitude = try container.decodeIfPresent(Double.self, forKey: .altitude)
            speed = try container.decodeIfPresent(.speed, .atLeast(0))
            course = try container.decodeIfPresent(.course, .course)
            horizontalAccuracy = try container.decodeIfPresent(.horizontalAccuracy, .atLeast(0))
            fix = try container.decode(FixMode.self, forKey: .fix)
            satellites = try container.decodeIfPresent(.satellites, .atLeast(0))
            fixTime = try container.decodeIfPresent(Date.self, forKey: .fixTime)
            distance = try container.decode(.distance, .atLeast(0))
            elapsed = try container.decode(.elapsed, .atLeast(0))
            paused = try container.decode(Bool.self, forKey: .paused)
            progress = try container.decodeIfPresent(.progress, .within(0...1))
            eta = try container.decodeIfPresent(Date.self, forKey: .eta)
            destination = try container.decodeIfPresent(
                LocationActivityAttributes.Destination.self, forKey: .destination)
            status = try container.decodeIfPresent(String.self, forKey: .status)
        }
    }
}
