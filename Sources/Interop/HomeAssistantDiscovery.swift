/// Home Assistant's MQTT discovery for one tracker: a `device_tracker` that puts it on the map and
/// two sensors (speed and satellites), all grouped under one device, available while the tracker's
/// Myeline status says `online`.
///
/// Each entity has a retained config on `PREFIX/COMPONENT/NODE/OBJECT/config`; the tracker's
/// readings go, retained, to one JSON attributes topic (``attributesTopic``) that the tracker reads
/// as `json_attributes_topic` (`latitude`, `longitude`, `gps_accuracy`) and the sensors read with a
/// `value_template`. Removing the entities is an empty retained message on each config topic.
public struct HomeAssistantDiscovery: Hashable, Sendable {
    /// Home Assistant's discovery prefix; `homeassistant` by default.
    public var prefix: String
    /// The node id: the device id with every character outside a-z, A-Z, 0-9, `_`, `-` as `_`.
    public let nodeID: String
    /// The device's display name.
    public var name: String
    /// The Myeline status topic (`PREFIX/DEVICE/status`): its JSON `state` is the availability.
    public var statusTopic: String
    /// The agent's version, shown in the device block; nil leaves it out.
    public var softwareVersion: String?

    /// The discovery of the device `deviceID` (a Myeline device id) named `name`.
    public init(prefix: String, deviceID: String, name: String, statusTopic: String, softwareVersion: String? = nil) {
        self.prefix = prefix
        self.nodeID = String(
            deviceID.unicodeScalars.map { scalar in
                scalar.isASCII && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || scalar == "-")
                    ? Character(scalar) : "_"
            })
        self.name = name
        self.statusTopic = statusTopic
        self.softwareVersion = softwareVersion
    }

    /// The entities' object ids, with their component.
    static let entities = [("device_tracker", "tracker"), ("sensor", "speed"), ("sensor", "satellites")]

    /// Where the tracker's readings go: `PREFIX/device_tracker/NODE/tracker/attributes`.
    public var attributesTopic: String { "\(prefix)/device_tracker/\(nodeID)/tracker/attributes" }

    /// Every config topic, in a fixed order: tracker, speed, satellites.
    public var configTopics: [String] {
        Self.entities.map { "\(prefix)/\($0.0)/\(nodeID)/\($0.1)/config" }
    }

    /// Every retained topic this discovery publishes: the configs and the attributes.
    public var retainedTopics: [String] { configTopics + [attributesTopic] }

    /// The config messages (retained), in ``configTopics``' order.
    public var configs: [(topic: String, payload: [UInt8])] {
        let device = Device(
            identifiers: ["myeline_\(nodeID)"], name: name, manufacturer: "Myeline", model: "myeline-agent",
            softwareVersion: softwareVersion)
        let availability = (statusTopic, "{{ value_json.state }}")
        let tracker = Config(
            name: nil, uniqueID: "myeline_\(nodeID)_tracker", device: device, availability: availability,
            jsonAttributesTopic: attributesTopic, sourceType: "gps")
        let speed = Config(
            name: "Speed", uniqueID: "myeline_\(nodeID)_speed", device: device, availability: availability,
            stateTopic: attributesTopic, valueTemplate: "{{ value_json.speed }}", unit: "m/s", deviceClass: "speed",
            stateClass: "measurement")
        let satellites = Config(
            name: "Satellites", uniqueID: "myeline_\(nodeID)_satellites", device: device, availability: availability,
            stateTopic: attributesTopic, valueTemplate: "{{ value_json.satellites }}", stateClass: "measurement",
            icon: "mdi:satellite-variant")
        return zip(configTopics, [tracker, speed, satellites]).map { ($0, InteropJSON.encode($1)) }
    }

    /// The attributes message (retained) of one fix: `latitude`, `longitude` (degrees),
    /// `gps_accuracy` (metres, left out when unknown), and `speed` (m/s), `altitude` (metres),
    /// `course` (degrees true) and `satellites`, written as `null` when unknown so the sensors show
    /// "unknown" rather than a stale value. Non-finite optional readings are unknown too.
    public static func attributes(
        latitude: Double, longitude: Double, accuracy: Double?, altitude: Double?, speed: Double?, course: Double?,
        satellites: Int?
    ) -> [UInt8] {
        func finite(_ value: Double?) -> Double? { value.flatMap { $0.isFinite ? $0 : nil } }
        return InteropJSON.encode(
            Attributes(
                latitude: latitude, longitude: longitude, accuracy: finite(accuracy), altitude: finite(altitude),
                speed: finite(speed), course: finite(course), satellites: satellites))
    }

    private struct Attributes: Encodable {
        var latitude: Double
        var longitude: Double
        var accuracy: Double?
        var altitude: Double?
        var speed: Double?
        var course: Double?
        var satellites: Int?

        enum CodingKeys: String, CodingKey {
            case latitude, longitude, altitude, speed, course, satellites
            case accuracy = "gps_accuracy"
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(latitude, forKey: .latitude)
            try container.encode(longitude, forKey: .longitude)
            try container.encodeIfPresent(accuracy, forKey: .accuracy)
            try container.encode(altitude, forKey: .altitude)
            try container.encode(speed, forKey: .speed)
            try container.encode(course, forKey: .course)
            try container.encode(satellites, forKey: .satellites)
        }
    }

    private struct Device: Encodable {
        var identifiers: [String]
        var name: String
        var manufacturer: String
        var model: String
        var softwareVersion: String?

        enum CodingKeys: String, CodingKey {
            case identifiers, name, manufacturer, model
            case softwareVersion = "sw_version"
        }
    }

    private struct Config: Encodable {
        var name: String?
        var uniqueID: String
        var device: Device
        var availabilityTopic: String
        var availabilityTemplate: String
        var payloadAvailable = "online"
        var payloadNotAvailable = "offline"
        var jsonAttributesTopic: String?
        var sourceType: String?
        var stateTopic: String?
        var valueTemplate: String?
        var unit: String?
        var deviceClass: String?
        var stateClass: String?
        var icon: String?

        init(
            name: String?, uniqueID: String, device: Device, availability: (topic: String, template: String),
            jsonAttributesTopic: String? = nil, sourceType: String? = nil, stateTopic: String? = nil,
            valueTemplate: String? = nil, unit: String? = nil, deviceClass: String? = nil, stateClass: String? = nil,
            icon: String? = nil
        ) {
            self.name = name
            self.uniqueID = uniqueID
            self.device = device
            self.availabilityTopic = availability.topic
            self.availabilityTemplate = availability.template
            self.jsonAttributesTopic = jsonAttributesTopic
            self.sourceType = sourceType
            self.stateTopic = stateTopic
            self.valueTemplate = valueTemplate
            self.unit = unit
            self.deviceClass = deviceClass
            self.stateClass = stateClass
            self.icon = icon
        }

        enum CodingKeys: String, CodingKey {
            case name, device, icon
            case uniqueID = "unique_id"
            case availabilityTopic = "availability_topic"
            case availabilityTemplate = "availability_template"
            case payloadAvailable = "payload_available"
            case payloadNotAvailable = "payload_not_available"
            case jsonAttributesTopic = "json_attributes_topic"
            case sourceType = "source_type"
            case stateTopic = "state_topic"
            case valueTemplate = "value_template"
            case unit = "unit_of_measurement"
            case deviceClass = "device_class"
            case stateClass = "state_class"
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            // `"name": null` names the tracker after its device, as Home Assistant recommends for
            // a device's main entity.
            try container.encode(name, forKey: .name)
            try container.encode(uniqueID, forKey: .uniqueID)
            try container.encode(device, forKey: .device)
            try container.encode(availabilityTopic, forKey: .availabilityTopic)
            try container.encode(availabilityTemplate, forKey: .availabilityTemplate)
            try container.encode(payloadAvailable, forKey: .payloadAvailable)
            try container.encode(payloadNotAvailable, forKey: .payloadNotAvailable)
            try container.encodeIfPresent(jsonAttributesTopic, forKey: .jsonAttributesTopic)
            try container.encodeIfPresent(sourceType, forKey: .sourceType)
            try container.encodeIfPresent(stateTopic, forKey: .stateTopic)
            try container.encodeIfPresent(valueTemplate, forKey: .valueTemplate)
            try container.encodeIfPresent(unit, forKey: .unit)
            try container.encodeIfPresent(deviceClass, forKey: .deviceClass)
            try container.encodeIfPresent(stateClass, forKey: .stateClass)
            try container.encodeIfPresent(icon, forKey: .icon)
        }
    }
}
