/// The attributes of a location-tracking activity (`attributes-type` `location`), the Linux
/// counterpart of the iOS app's `LocationActivityAttributes`, with trip details added.
///
/// Attributes are fixed for the life of the activity; the position and trip progress are in
/// ``ContentState``.
public struct LocationActivityAttributes: ActivityAttributes {
    /// The wire name of this type, `location`.
    public static let typeName = "location"

    /// Where the trip is going.
    public struct Destination: Codable, Hashable, Sendable {
        /// A display name, such as `Depot North`.
        public var name: String
        /// Latitude in degrees (WGS 84), -90...90.
        public var latitude: Double
        /// Longitude in degrees (WGS 84), -180...180.
        public var longitude: Double

        /// The wire keys, declared (not synthesized) so that `init(json:at:)` reads the same ones.
        package enum CodingKeys: String, CodingKey {
            case name, latitude, longitude
        }

        /// Creates a destination; the coordinates are checked when encoded.
        public init(name: String, latitude: Double, longitude: Double) {
            self.name = name
            self.latitude = latitude
            self.longitude = longitude
        }

        /// Decodes and checks a destination.
        ///
        /// - Throws: `DecodingError` naming the key: a missing key or a coordinate out of range.
        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            name = try container.decode(String.self, forKey: .name)
            latitude = try container.decode(.latitude, .latitude)
            longitude = try container.decode(.longitude, .longitude)
        }
    }

    /// The wire keys, declared (not synthesized) so that `init(json:at:)` reads the same ones.
    package enum CodingKeys: String, CodingKey {
        case deviceID, name, vehicle, driver, destination
    }

    /// The device that tracks itself (`deviceID`); the same as the envelope's `device`.
    public var deviceID: DeviceID
    /// A display name for the tracked device (`name`), such as `Van 7`.
    public var name: String
    /// The vehicle (`vehicle`), such as a registration plate, if any.
    public var vehicle: String?
    /// The driver's name (`driver`), if any.
    public var driver: String?
    /// The trip's destination (`destination`), if any; ``ContentState/progress`` needs one.
    public var destination: Destination?

    /// Creates the attributes of a location activity.
    public init(
        deviceID: DeviceID, name: String, vehicle: String? = nil, driver: String? = nil,
        destination: Destination? = nil
    ) {
        self.deviceID = deviceID
        self.name = name
        self.vehicle = vehicle
        self.driver = driver
        self.destination = destination
    }
}
