import Foundation
import TestSupport
import Testing

/// The Python example of docs/consuming.md, run as it is against a real broker and agent, so that
/// the page stays true.
@Suite(.tags(.integration), .timeLimit(.minutes(2)))
struct ConsumingIntegrationTests {
    static let example = "docs/examples/fleet-watch.py"

    @Test func thePythonExamplePrintsTheAgentsActivity() async throws {
        // paho-mqtt 1.6 (Debian 12) cannot use unix sockets: a free loopback port.
        try await TestBroker.with(listener: .tcp) { broker in
            guard case .tcp(let host, let port) = broker.address.transport else {
                throw TestSupportError("expected a TCP broker")
            }
            try await withTemporaryDirectory { state in
                let agent = try AgentHarness.agent(broker, state: state)
                defer { agent.signal(SIGKILL) }
                let python = try executablePath("python3", package: "python3-paho-mqtt")
                let watcher = try TestProcess(
                    name: "fleet-watch.py", executable: python,
                    arguments: [DeploymentFiles.path(Self.example), "--host", host, "--port", "\(port)"])
                defer { watcher.signal(SIGKILL) }
                try await watcher.waitForLine(containing: "van-7 online")
                // An update with a position, as the page shows it.
                let update = try await watcher.waitForLine(
                    timeout: .seconds(30), description: "an update with a position"
                ) {
                    $0.range(
                        of:
                            #"^van-7 [0-9a-f-]{36} update seq [0-9]+: -?[0-9]+\.[0-9]{5},-?[0-9]+\.[0-9]{5}, [0-9]+ m$"#,
                        options: .regularExpression) != nil
                }
                #expect(update.hasPrefix("van-7 "))
            }
        }
    }

    /// Finding 10: a foreign status (no `state`) crashed it with KeyError, deep nesting with
    /// RecursionError, against its own comment; and it could not reach a broker on a unix socket.
    /// Now it skips whatever is not Myeline's, says how many on Ctrl-C, and takes `--unix`.
    @Test func theExampleSurvivesForeignMessagesOnAUnixSocket() async throws {
        try await TestBroker.with { broker in
            guard case .unix(let path) = broker.address.transport else { throw TestSupportError("expected a socket") }
            let python = try executablePath("python3", package: "python3-paho-mqtt")
            let watcher = try TestProcess(
                name: "fleet-watch.py", executable: python,
                arguments: [DeploymentFiles.path(Self.example), "--unix", path])
            defer { watcher.signal(SIGKILL) }
            let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
            let hostile: [(String, String)] = [
                ("myeline/van-7/status", #"{"schema":"myeline.status.v1","device":"van-7","mood":"fine"}"#),
                ("myeline/van-7/status", #"{"schema":"other.v1","device":"van-7","state":"online"}"#),
                ("myeline/van-7/status", deep),
                ("myeline/van-7/status", #"{"schema":"myeline.status.v1","device":"van-7","state":7}"#),
                ("myeline/van-8/status", #"{"schema":"myeline.status.v1","device":"van-7","state":"online"}"#),
                ("myeline/VAN/status", #"{"schema":"myeline.status.v1","device":"VAN","state":"online"}"#),
                ("myeline/van-7/activities/a1", "not json"),
                ("myeline/van-7/activities/a1", #"{"schema":"myeline.activity.v1","device":"van-7"}"#),
                ("myeline/van-7/activities/a1", #"[1,2,3]"#),
                (
                    "myeline/van-7/activities/a1",
                    #"{"schema":"myeline.activity.v1","device":"van-7","activity":"a1","event":"update","seq":2,"content-state":{"distance":"far"}}"#
                ),
                ("myeline/van-7/status", #"{"schema":"myeline.status.v1","device":"van-7","state":"online"}"#),
            ]
            // Published once the watcher has subscribed: its own first line comes from a retained status.
            try await AggregatorIntegrationTests.publish(
                [
                    (
                        "myeline/ready/status",
                        Array(#"{"schema":"myeline.status.v1","device":"ready","state":"online"}"#.utf8)
                    )
                ],
                to: broker)
            try await watcher.waitForLine(containing: "ready online")
            try await AggregatorIntegrationTests.publish(
                hostile.map { ($0.0, Array($0.1.utf8)) }, to: broker, retain: false)
            try await watcher.waitForLine(containing: "van-7 online")
            // An envelope of a type the script does not know is shown as it is, not skipped.
            let pin =
                #"{"schema":"myeline.activity.v1","device":"van-7","activity":"pin-1","attributes-type":"com.example.pin","#
                + #""attributes":{"label":"bay 3"},"event":"update","seq":2,"timestamp":1700000030,"relevance-score":0,"#
                + #""content-state":{"note":"two pallets waiting","count":2}}"#
            try await AggregatorIntegrationTests.publish(
                [("myeline/van-7/activities/pin-1", Array(pin.utf8))], to: broker, retain: false)
            try await watcher.waitForLine(
                containing: #"van-7 pin-1 update seq 2: com.example.pin count=2, note="two pallets waiting""#)
            watcher.signal(SIGINT)
            _ = try await watcher.waitForExit()
            #expect(watcher.output.contains("10 messages skipped: not Myeline's"), "\(watcher.output)")
            #expect(!watcher.output.contains("Traceback"), "\(watcher.output)")
        }
    }

    @Test func thePageShowsTheExampleAsItIs() throws {
        let page = try DeploymentFiles.text("docs/consuming.md")
        let script = try DeploymentFiles.text(Self.example)
        #expect(page.contains("```python\n\(script)```"), "docs/consuming.md must quote \(Self.example) in full")
    }
}
