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
    /// The node id, also in every `unique_id` and the device's `identifiers`: the device id with
    /// each `.` written as `D` (``nodeID(deviceID:)``), so that no two device ids share one.
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
        self.nodeID = Self.nodeID(deviceID: deviceID)
        self.name = name
        self.statusTopic = statusTopic
        self.softwareVersion = softwareVersion
    }

    /// The node id of a device id, in the characters Home Assistant allows there (`a-z A-Z 0-9 _ -`),
    /// and different for different device ids.
    ///
    /// `a-z`, `0-9`, `_` and `-` stay as they are, and each `.` becomes a capital `D`: `truck.12` is
    /// `truckD12`, `truck_12` stays `truck_12`. A device id is lower-case, so a capital letter in a
    /// node id can only stand for a `.`. Any other character, never in a device id, is written `X`,
    /// its Unicode code in lower-case hexadecimal, `X` (`A` is `X41X`), which keeps the mapping
    /// one-to-one for every string.
    public static func nodeID(deviceID: String) -> String {
        var node = ""
        for scalar in deviceID.unicodeScalars {
            switch scalar {
            case "a"..."z", "0"..."9", "_", "-": node.unicodeScalars.append(scalar)
            case ".": node += "D"
            default: node += "X\(String(scalar.value, radix: 16))X"
            }
        }
        return node
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

    /// A message to publish retained: its topic and its JSON payload.
    public struct Message: Hashable, Sendable {
        /// The topic, one of ``HomeAssistantDiscovery/configTopics``.
        public let topic: String
        /// The config, as JSON.
        public let payload: [UInt8]
    }

    /// The config messages (retained), in ``configTopics``' order.
    public var configs: [Message] {
        let device = Device(
            identifiers: ["myeline_\(nodeID)"], name: name, manufacturer: "Myeline", model: "myeline-agent",
            softwareVersion: softwareVersion)
        let availability = (statusTopic, "{{ value_json.state }}")
        let tracker = Config(
            name: nil, uniqueID: "myeline_\(nodeID)_tracker", device: device, availability: availability,
            jsonAttributesTopic: attributesTopic, sourceType: "gps")
        let speed = Config(
            name: "Speed", uniqueID: "myeline_\(nodeID)_speed", device: device, availability: availability,
            stateTopic: attributesTopic, valueTemplate: Self.speedTemplate, unit: "km/h", deviceClass: "speed",
            stateClass: "measurement")
        let satellites = Config(
            name: "Satellites", uniqueID: "myeline_\(nodeID)_satellites", device: device, availability: availability,
            stateTopic: attributesTopic, valueTemplate: Self.presentOrNone("satellites"), stateClass: "measurement",
            icon: "mdi:satellite-variant")
        return zip(configTopics, [tracker, speed, satellites]).map {
            Message(topic: $0, payload: InteropJSON.encode($1))
        }
    }

    /// The speed sensor's template: the attributes' `speed` (m/s) in km/h, to 0.1. Home Assistant
    /// shows a speed sensor in its unit under the metric system, and converts it to mph under US
    /// customary units; a sensor in m/s would stay in m/s for metric users.
    static let speedTemplate =
        "{{ (value_json.speed * 3.6) | round(1) if value_json.speed is defined else none }}"

    /// A template reading `key` from the attributes, or `none` (the sensor shows "unknown") when the
    /// fix has no such reading: asking for a missing key would make Home Assistant log a warning.
    static func presentOrNone(_ key: String) -> String {
        "{{ value_json.\(key) if value_json.\(key) is defined else none }}"
    }

    /// The attributes message (retained) of one fix: `latitude`, `longitude` (degrees),
    /// `gps_accuracy` (metres, always: see ``HorizontalAccuracy``), and `speed` (m/s), `altitude`
    /// (metres), `course` (degrees true) and `satellites` when known. An unknown reading is left out
    /// (never `null`, which Home Assistant would show as an attribute); the sensors then show
    /// "unknown" rather than a stale value. Non-finite readings are unknown too.
    public static func attributes(
        latitude: Double, longitude: Double, accuracy: HorizontalAccuracy, altitude: Double?, speed: Double?,
        course: Double?, satellites: Int?
    ) -> [UInt8] {
        func finite(_ value: Double?) -> Double? { value.flatMap { $0.isFinite ? $0 : nil } }
        return InteropJSON.encode(
            Attributes(
                latitude: latitude, longitude: longitude, accuracy: accuracy.metres, altitude: finite(altitude),
                speed: finite(speed), course: finite(course), satellites: satellites))
    }

    /// Absent optionals are left out (the synthesized `encodeIfPresent`).
    private struct Attributes: Encodable {
        var latitude: Double
        var longitude: Double
        var accuracy: Double
        var altitude: Double?
        var speed: Double?
        var course: Double?
        var satellites: Int?

        enum CodingKeys: String, CodingKey {
            case latitude, longitude, altitude, speed, course, satellites
            case accuracy = "gps_accuracy"
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
