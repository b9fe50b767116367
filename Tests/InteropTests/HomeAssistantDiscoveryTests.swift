import Foundation
import Interop
import Testing

/// Home Assistant's discovery messages, byte for byte.
@Suite("Home Assistant discovery")
struct HomeAssistantDiscoveryTests {
    let discovery = HomeAssistantDiscovery(
        prefix: "homeassistant", deviceID: "van.7", name: "Van 7", statusTopic: "myeline/van.7/status",
        softwareVersion: "1.2.3")

    @Test(
        "the node id keeps a-z, 0-9, _ and -, and writes each . as D",
        arguments: [
            ("van-7", "van-7"), ("truck_12", "truck_12"), ("truck.12", "truckD12"), ("a.b.c", "aDbDc"),
            ("Van 7", "X56XanX20X7"), ("é", "Xe9X"),
        ])
    func nodeID(_ deviceID: String, _ nodeID: String) {
        #expect(HomeAssistantDiscovery.nodeID(deviceID: deviceID) == nodeID)
    }

    @Test("two device ids that differ only in . and _ get their own topics, unique ids and identifiers")
    func noCollision() {
        let dot = HomeAssistantDiscovery(
            prefix: "homeassistant", deviceID: "truck.12", name: "Truck", statusTopic: "myeline/truck.12/status")
        let underscore = HomeAssistantDiscovery(
            prefix: "homeassistant", deviceID: "truck_12", name: "Truck", statusTopic: "myeline/truck_12/status")
        #expect(Set(dot.retainedTopics).isDisjoint(with: underscore.retainedTopics))
        let dotConfigs = dot.configs.map { String(decoding: $0.payload, as: UTF8.self) }
        let underscoreConfigs = underscore.configs.map { String(decoding: $0.payload, as: UTF8.self) }
        #expect(dotConfigs[0].contains(#""identifiers":["myeline_truckD12"]"#))
        #expect(dotConfigs[0].contains(#""unique_id":"myeline_truckD12_tracker""#))
        #expect(underscoreConfigs[0].contains(#""identifiers":["myeline_truck_12"]"#))
        #expect(underscoreConfigs[0].contains(#""unique_id":"myeline_truck_12_tracker""#))
    }

    @Test("no two strings share a node id, and every node id is one Home Assistant accepts")
    func oneToOne() throws {
        // Every string of up to 4 characters over the characters that matter: kept ones, the `.`,
        // and those that stand for others in a node id (D, X), or need writing out (a space).
        let alphabet: [Character] = ["a", "1", "_", "-", ".", "D", "X", " "]
        var strings = [""]
        var all: [String] = []
        for _ in 1...4 {
            strings = strings.flatMap { prefix in alphabet.map { prefix + String($0) } }
            all += strings
        }
        let nodeIDs = all.map { HomeAssistantDiscovery.nodeID(deviceID: $0) }
        #expect(Set(nodeIDs).count == all.count)
        let allowed = try Regex("^[a-zA-Z0-9_-]+$")
        #expect(nodeIDs.allSatisfy { $0.wholeMatch(of: allowed) != nil })
    }

    @Test("the three configs are golden")
    func goldenConfigs() {
        let device =
            #""device":{"identifiers":["myeline_vanD7"],"manufacturer":"Myeline","model":"myeline-agent","name":"Van 7","sw_version":"1.2.3"}"#
        let availability =
            #""availability_template":"{{ value_json.state }}","availability_topic":"myeline/van.7/status""#
        let payloads = discovery.configs.map { String(decoding: $0.payload, as: UTF8.self) }
        #expect(
            discovery.retainedTopics == [
                "homeassistant/device_tracker/vanD7/tracker/config", "homeassistant/sensor/vanD7/speed/config",
                "homeassistant/sensor/vanD7/satellites/config", "homeassistant/device_tracker/vanD7/tracker/attributes",
            ])
        #expect(discovery.configs.map(\.topic) == Array(discovery.retainedTopics.prefix(3)))
        #expect(
            payloads == [
                #"{\#(availability),\#(device),"json_attributes_topic":"homeassistant/device_tracker/vanD7/tracker/attributes","name":null,"payload_available":"online","payload_not_available":"offline","source_type":"gps","unique_id":"myeline_vanD7_tracker"}"#,
                #"{\#(availability),\#(device),"device_class":"speed","name":"Speed","payload_available":"online","payload_not_available":"offline","state_class":"measurement","state_topic":"homeassistant/device_tracker/vanD7/tracker/attributes","unique_id":"myeline_vanD7_speed","unit_of_measurement":"km/h","value_template":"{{ (value_json.speed * 3.6) | round(1) if value_json.speed is defined else none }}"}"#,
                #"{\#(availability),\#(device),"icon":"mdi:satellite-variant","name":"Satellites","payload_available":"online","payload_not_available":"offline","state_class":"measurement","state_topic":"homeassistant/device_tracker/vanD7/tracker/attributes","unique_id":"myeline_vanD7_satellites","value_template":"{{ value_json.satellites if value_json.satellites is defined else none }}"}"#,
            ])
    }

    @Test("the attributes are golden; unknown readings are left out, never null, and the accuracy is always there")
    func goldenAttributes() {
        let full = HomeAssistantDiscovery.attributes(
            latitude: 52.520008, longitude: 13.404954, accuracy: HorizontalAccuracy(receiver: 4.2, hdop: 0.9),
            altitude: 34.4, speed: 12.5, course: 271.6, satellites: 9)
        #expect(
            String(decoding: full, as: UTF8.self)
                == #"{"altitude":34.4,"course":271.6,"gps_accuracy":4.2,"latitude":52.520008,"longitude":13.404954,"satellites":9,"speed":12.5}"#
        )
        let bare = HomeAssistantDiscovery.attributes(
            latitude: 1, longitude: 2, accuracy: HorizontalAccuracy(receiver: .nan, hdop: nil), altitude: nil,
            speed: .infinity, course: nil, satellites: nil)
        #expect(String(decoding: bare, as: UTF8.self) == #"{"gps_accuracy":10,"latitude":1,"longitude":2}"#)
    }
}
