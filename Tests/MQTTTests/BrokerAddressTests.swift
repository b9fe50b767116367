import MQTT
import Testing

struct BrokerAddressTests {
    @Test(arguments: [
        ("mqtt://broker.example", BrokerAddress.Transport.tcp(host: "broker.example", port: 1_883)),
        ("mqtt://broker.example:1884", .tcp(host: "broker.example", port: 1_884)),
        ("MQTT://10.0.0.2:2000/", .tcp(host: "10.0.0.2", port: 2_000)),
        ("mqtts://broker.example", .tls(host: "broker.example", port: 8_883)),
        ("mqtts://broker.example:443", .tls(host: "broker.example", port: 443)),
        ("mqtt://[::1]:1999", .tcp(host: "::1", port: 1_999)),
        ("mqtts://[fe80::1%eth0]", .tls(host: "fe80::1%eth0", port: 8_883)),
        ("unix:/run/mosquitto/mqtt.sock", .unix(path: "/run/mosquitto/mqtt.sock")),
        ("unix:///tmp/broker.sock", .unix(path: "/tmp/broker.sock")),
    ])
    func parsesValidURLs(text: String, expected: BrokerAddress.Transport) throws {
        let address = try BrokerAddress(parsing: text)
        #expect(address.transport == expected)
        // The canonical form parses back to the same address.
        #expect(try BrokerAddress(parsing: address.description) == address)
    }

    @Test(arguments: [
        ("broker.example", "no scheme"),
        ("http://broker.example", "unknown scheme \"http\""),
        ("mqtt:broker.example", "expected // after mqtt:"),
        ("mqtt://", "no host"),
        ("mqtt://:1884", "no host"),
        ("mqtt://broker.example:0", "the port \"0\" is not a number from 1 to 65535"),
        ("mqtt://broker.example:65536", "the port \"65536\" is not a number from 1 to 65535"),
        ("mqtt://broker.example:abc", "the port \"abc\" is not a number from 1 to 65535"),
        ("mqtt://broker.example/fleet", "a broker URL has no path, query or fragment"),
        ("mqtt://user:secret@broker.example", "credentials do not belong in the URL"),
        ("mqtt://[::1", "unclosed [ in an IPv6 host"),
        ("mqtt://bro ker", "has characters a host name cannot have"),
        ("unix:relative.sock", "a unix socket needs an absolute path"),
        ("unix:", "a unix socket needs an absolute path"),
    ])
    func rejectsInvalidURLsNamingTheValueAndTheFix(text: String, reason: String) {
        let error = #expect(throws: MQTTError.self) { try BrokerAddress(parsing: text) }
        #expect(error?.code == .invalidConfiguration)
        let message = error?.message ?? ""
        #expect(message.contains("\"\(text)\""), "the message names the URL: \(message)")
        #expect(message.contains(reason), "\(message)")
        #expect(message.contains("use mqtt://host[:port], mqtts://host[:port] or unix:/path/to/socket"))
    }

    @Test func secretsDoNotLeakIntoTheErrorBeyondTheURLTheUserTyped() {
        // The URL is echoed back, so the error says why credentials are refused there.
        let error = #expect(throws: MQTTError.self) { try BrokerAddress(parsing: "mqtt://u:p@host") }
        #expect(error?.message.contains("they would show in ps and logs") == true)
    }
}
