import Foundation
import MQTT
import Testing

struct ConfigurationTests {
    static let broker = BrokerAddress(.tcp(host: "broker.example", port: 1_884))

    @Test func defaultsAreMQTT5WithThirtySecondKeepAlive() throws {
        let configuration = MQTTConfiguration(broker: Self.broker, clientID: "van-7")
        #expect(configuration.protocolVersion == .v5)
        #expect(configuration.keepAlive == .seconds(30))
        #expect(configuration.reconnect == ReconnectBackoff())
        try configuration.validate()
    }

    @Test(arguments: [
        (MQTTConfiguration(broker: broker, clientID: ""), "invalid client id \"\""),
        (MQTTConfiguration(broker: broker, clientID: "a", keepAlive: .seconds(2)), "use 5 to 65535 seconds"),
        (
            MQTTConfiguration(broker: broker, clientID: "a", tls: MQTTTLSConfiguration(caFile: "/ca.pem")),
            "use mqtts:// to connect with TLS"
        ),
        (
            MQTTConfiguration(
                broker: BrokerAddress(.unix(path: "/run/b.sock")), clientID: "a",
                tls: MQTTTLSConfiguration(caFile: "/ca.pem")),
            "TLS needs an mqtts:// broker URL"
        ),
        (
            MQTTConfiguration(
                broker: broker, clientID: "a",
                reconnect: ReconnectBackoff(initialDelay: .seconds(10), maximumDelay: .seconds(1))),
            "the first must be positive and not above the maximum"
        ),
        (
            MQTTConfiguration(broker: broker, clientID: "a", reconnect: ReconnectBackoff(jitter: 2)),
            "invalid reconnect jitter 2.0"
        ),
        (
            MQTTConfiguration(broker: broker, clientID: "a", will: MQTTMessage(topic: "fleet/#", payload: [])),
            "invalid topic \"fleet/#\""
        ),
        (
            MQTTConfiguration(broker: broker, clientID: "a", subscriptionBufferSize: 0),
            "invalid subscription buffer size 0"
        ),
    ])
    func invalidValuesAreNamed(configuration: MQTTConfiguration, expected: String) {
        let error = #expect(throws: MQTTError.self) { try configuration.validate() }
        #expect(error?.message.contains(expected) == true, "\(String(describing: error))")
    }

    @Test func passwordFromAnEnvironmentVariable() throws {
        let source = PasswordSource.environment("MYELINE_MQTT_PASSWORD")
        #expect(try source.load(environment: ["MYELINE_MQTT_PASSWORD": "s3cret"]) == "s3cret")
        let error = #expect(throws: MQTTError.self) { try source.load(environment: [:]) }
        #expect(
            error?.message
                == "the password variable MYELINE_MQTT_PASSWORD is not set or empty: export it, or use a password file")
    }

    @Test func passwordFromTheFirstLineOfAFile() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("myeline-pw-\(UUID())").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        try "correct horse\r\nignored second line\n".write(toFile: path, atomically: true, encoding: .utf8)
        #expect(try PasswordSource.file(path).load(environment: [:]) == "correct horse")

        try "\n".write(toFile: path, atomically: true, encoding: .utf8)
        let empty = #expect(throws: MQTTError.self) { try PasswordSource.file(path).load(environment: [:]) }
        #expect(empty?.message == "the password file \(path) is empty: write the password on its first line")
    }

    @Test func unreadablePasswordFileIsNamedWithTheReason() {
        let error = #expect(throws: MQTTError.self) {
            try PasswordSource.file("/nonexistent/myeline/password").load(environment: [:])
        }
        #expect(error?.code == .invalidConfiguration)
        #expect(
            error?.message
                == "cannot read the password file /nonexistent/myeline/password: No such file or directory; create it readable by this user (mode 0600)"
        )
    }

    @Test func credentialsNeverPrintThePassword() {
        let credentials = MQTTCredentials(username: "van-7", password: "s3cret")
        #expect("\(credentials)" == "username van-7, password ********")
        #expect(!String(reflecting: credentials).contains("s3cret"))
        var dumped = ""
        dump(credentials, to: &dumped)
        #expect(!dumped.contains("s3cret"), "\(dumped)")
    }

    @Test(arguments: [
        ("myeline/+/status", "myeline/van-7/status", true),
        ("myeline/+/activities/+", "myeline/van-7/activities/a1", true),
        ("myeline/+/activities/+", "myeline/van-7/activities/a1/track", false),
        ("myeline/#", "myeline/van-7/cmd/result", true),
        ("myeline/#", "other/van-7", false),
    ])
    func topicMatching(filter: String, topic: String, matches: Bool) throws {
        try MQTTTopic.validate(filter: filter)
        #expect(MQTTTopic.matches(filter: filter, topic: topic) == matches)
    }

    @Test(arguments: ["", "a/#/b", "a+/b", "a/b#"])
    func invalidFiltersAreRejected(filter: String) {
        let error = #expect(throws: MQTTError.self) { try MQTTTopic.validate(filter: filter) }
        #expect(error?.code == .invalidTopic)
    }
}
