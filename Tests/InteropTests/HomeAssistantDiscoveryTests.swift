import Foundation
import Interop
import Testing

/// Home Assistant's discovery messages, byte for byte.
@Suite("Home Assistant discovery")
struct HomeAssistantDiscoveryTests {
    let discovery = HomeAssistantDiscovery(
        prefix: "homeassistant", deviceID: "van.7", name: "Van 7", statusTopic: "myeline/van.7/status",
        softwareVersion: "1.2.3")

    @Test("the node id keeps only the characters Home Assistant allows")
    func nodeID() {
        #expect(discovery.nodeID == "van_7")
        #expect(
            discovery.retainedTopics == [
                "homeassistant/device_tracker/van_7/tracker/config", "homeassistant/sensor/van_7/speed/config",
                "homeassistant/sensor/van_7/satellites/config", "homeassistant/device_tracker/van_7/tracker/attributes",
            ])
    }

    @Test("the three configs are golden")
    func goldenConfigs() {
        let device =
            #""device":{"identifiers":["myeline_van_7"],"manufacturer":"Myeline","model":"myeline-agent","name":"Van 7","sw_version":"1.2.3"}"#
        let availability =
            #""availability_template":"{{ value_json.state }}","availability_topic":"myeline/van.7/status""#
        let payloads = discovery.configs.map { String(decoding: $0.payload, as: UTF8.self) }
        #expect(discovery.configs.map(\.topic) == Array(discovery.retainedTopics.prefix(3)))
        #expect(
            payloads == [
                #"{\#(availability),\#(device),"json_attributes_topic":"homeassistant/device_tracker/van_7/tracker/attributes","name":null,"payload_available":"online","payload_not_available":"offline","source_type":"gps","unique_id":"myeline_van_7_tracker"}"#,
                #"{\#(availability),\#(device),"device_class":"speed","name":"Speed","payload_available":"online","payload_not_available":"offline","state_class":"measurement","state_topic":"homeassistant/device_tracker/van_7/tracker/attributes","unique_id":"myeline_van_7_speed","unit_of_measurement":"m/s","value_template":"{{ value_json.speed }}"}"#,
                #"{\#(availability),\#(device),"icon":"mdi:satellite-variant","name":"Satellites","payload_available":"online","payload_not_available":"offline","state_class":"measurement","state_topic":"homeassistant/device_tracker/van_7/tracker/attributes","unique_id":"myeline_van_7_satellites","value_template":"{{ value_json.satellites }}"}"#,
            ])
    }

    @Test("the attributes are golden, unknown readings null and an unknown accuracy left out")
    func goldenAttributes() {
        let full = HomeAssistantDiscovery.attributes(
            latitude: 52.520008, longitude: 13.404954, accuracy: 4.2, altitude: 34.4, speed: 12.5, course: 271.6,
            satellites: 9)
        #expect(
            String(decoding: full, as: UTF8.self)
                == #"{"altitude":34.4,"course":271.6,"gps_accuracy":4.2,"latitude":52.520008,"longitude":13.404954,"satellites":9,"speed":12.5}"#
        )
        let bare = HomeAssistantDiscovery.attributes(
            latitude: 1, longitude: 2, accuracy: .nan, altitude: nil, speed: .infinity, course: nil, satellites: nil)
        #expect(
            String(decoding: bare, as: UTF8.self)
                == #"{"altitude":null,"course":null,"latitude":1,"longitude":2,"satellites":null,"speed":null}"#)
    }
}
