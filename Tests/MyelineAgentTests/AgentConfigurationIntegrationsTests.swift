import MyelineConfiguration
import Testing

@testable import MyelineAgentKit

/// The `owntracks.*` and `homeassistant.*` keys: defaults that follow the device, the environment
/// variables, and mistakes that name their key.
struct AgentConfigurationIntegrationsTests {
    @Test func theDefaultsAreOffAndFollowTheDevice() async throws {
        let configuration = try await AgentConfigurationTests.load(flags: ["device.id": "van-7"]).configuration
        #expect(!configuration.ownTracks.enabled)
        #expect(configuration.ownTracks.topic.location == "owntracks/myeline/van-7")
        #expect(configuration.ownTracks.trackerID == "n7")
        #expect(!configuration.homeAssistant.enabled)
        #expect(configuration.homeAssistant.prefix == "homeassistant")
    }

    @Test func theEnvironmentAndTheFileSetThem() async throws {
        let yaml = "owntracks:\n  enabled: true\n  device: car\nhomeassistant:\n  prefix: ha/discovery\n"
        let environment = [
            "MYELINE_OWNTRACKS_USER": "Fleet One", "MYELINE_OWNTRACKS_TID": "C1",
            "MYELINE_HOMEASSISTANT_ENABLED": "true",
        ]
        let configuration = try await AgentConfigurationTests.load(
            flags: ["device.id": "van-7"], yaml: yaml, environment: environment
        ).configuration
        #expect(configuration.ownTracks.enabled)
        #expect(configuration.ownTracks.topic.command == "owntracks/Fleet One/car/cmd")
        #expect(configuration.ownTracks.trackerID == "C1")
        #expect(configuration.homeAssistant.enabled)
        #expect(configuration.homeAssistant.prefix == "ha/discovery")
    }

    @Test func withoutATidItIsTheDevicesLastTwoCharacters() async throws {
        let configuration = try await AgentConfigurationTests.load(
            flags: ["device.id": "van-7"], yaml: "owntracks:\n  device: truck42\n"
        ).configuration
        #expect(configuration.ownTracks.trackerID == "42")
    }

    static let invalidValues: [AgentConfigurationTests.Invalid] = [
        .init(yaml: "owntracks:\n  enabled: yes please\n", key: "owntracks.enabled", message: "true or false"),
        .init(yaml: "owntracks:\n  user: a/b\n", key: "owntracks.user", message: "not a topic level"),
        .init(
            environment: ["MYELINE_OWNTRACKS_DEVICE": "#"], key: "owntracks.device", message: "without '/', '+', '#'"),
        .init(yaml: "owntracks:\n  tid: ABC\n", key: "owntracks.tid", message: "1 or 2 characters"),
        .init(yaml: "homeassistant:\n  prefix: ha/+\n", key: "homeassistant.prefix", message: "not a topic prefix"),
        .init(yaml: "homeassistant:\n  prefix: ha//x\n", key: "homeassistant.prefix", message: "empty levels"),
    ]

    @Test(arguments: invalidValues)
    func invalidValuesNameTheirKey(_ invalid: AgentConfigurationTests.Invalid) async throws {
        let error = await #expect(throws: ConfigurationError.self) {
            try await AgentConfigurationTests.load(
                flags: ["device.id": "van-7"], yaml: invalid.yaml, environment: invalid.environment)
        }
        #expect(error?.key == invalid.key)
        #expect(error?.description.contains(invalid.message) == true, "\(error?.description ?? "")")
    }
}
