import Foundation
import TestSupport
import Testing

/// The Python example of docs/consuming.md, run as it is against a real broker and agent, so that
/// the page stays true.
@Suite(.timeLimit(.minutes(2)))
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

    @Test func thePageShowsTheExampleAsItIs() throws {
        let page = try DeploymentFiles.text("docs/consuming.md")
        let script = try DeploymentFiles.text(Self.example)
        #expect(page.contains("```python\n\(script)```"), "docs/consuming.md must quote \(Self.example) in full")
    }
}
