import Foundation
import LiveActivity
import Locking
import Testing
import TestSupport

/// Failure 2 of the agent-core issue: a silent receiver (gpsd up and answering, the receiver
/// sending nothing) was not noticed: nothing was published for a minute, then the heartbeat
/// republished the minute-old fix as a current position.
@Suite(.timeLimit(.minutes(2)))
struct AgentSourceSilenceIntegrationTests {
    @Test func aReceiverThatFallsSilentDropsThePositionAndNoHeartbeatShowsTheOldOne() async throws {
        try await QuietReceiverServer.with(fixes: 4) { server in
            try await AgentHarness.scenario { broker, observer, state in
                let agent = try AgentHarness.agent(
                    broker, state: state, [],
                    environment: [
                        "MYELINE_UPDATES_MIN_DISTANCE": "0", "MYELINE_UPDATES_MIN_INTERVAL": "0",
                        "MYELINE_UPDATES_HEARTBEAT": "3",
                    ], source: "gpsd://127.0.0.1:\(server.port)")
                defer { agent.signal(SIGKILL) }
                let located: @Sendable (AgentHarness.Message) -> Bool = { message in
                    message.isEnvelope && !message.payload.isEmpty && message.payload.contains("\"latitude\"")
                }
                try await observer.waitForLine(timeout: .seconds(30), description: "a position") { line in
                    AgentHarness.Message(line[...]).map(located) ?? false
                }
                let unlocated: @Sendable (AgentHarness.Message) -> Bool = { message in
                    message.isEnvelope && !message.payload.isEmpty && !message.payload.contains("\"latitude\"")
                }
                // Envelopes without a position before the first fix (the start's).
                let before = AgentHarness.messages(observer).prefix { !located($0) }.filter(unlocated).count
                // The receiver's last fix, then silence: 1 Hz, so the position goes 1 + 5 s later,
                // and heartbeats every 3 s afterwards.
                try await observer.waitForLine(
                    occurrence: before + 3, timeout: .seconds(30),
                    description: "content without a position, then two heartbeats"
                ) { line in AgentHarness.Message(line[...]).map(unlocated) ?? false }
                let envelopes = try AgentHarness.envelopes(AgentHarness.messages(observer))
                let lastLocated = try #require(envelopes.lastIndex { $0.content.state.latitude != nil })
                // None after the silence shows the old position as current.
                #expect(envelopes.count - lastLocated - 1 >= 3)
                #expect(envelopes[(lastLocated + 1)...].allSatisfy { $0.content.state.latitude == nil })
                #expect(agent.output.contains("said nothing for too long"))
                // gpsd itself was never given up: the connection stayed, as it answered.
                #expect(server.connections == 1)
            }
        }
    }
}

/// A gpsd whose receiver falls silent: it greets, answers `?WATCH` with DEVICES, WATCH and
/// `fixes` TPVs a second apart (times of now), then sends nothing more, but answers every
/// `?VERSION;` probe, as gpsd does for a receiver that stopped talking.
final class QuietReceiverServer: Sendable {
    let port: Int
    private let listener: Int32
    private let fixes: Int
    private let count = Locked(0)

    private init(listener: Int32, port: Int, fixes: Int) {
        self.listener = listener
        self.port = port
        self.fixes = fixes
    }

    /// How many connections were accepted.
    var connections: Int { count.withLock { $0 } }

    static func with<R>(fixes: Int, _ body: (QuietReceiverServer) async throws -> R) async throws -> R {
        let (fd, port) = try listenOnLoopback(backlog: 16)
        let server = QuietReceiverServer(listener: fd, port: port, fixes: fixes)
        Thread { server.acceptLoop() }.start()
        defer { shutdown(fd, Int32(SHUT_RDWR)) }
        return try await body(server)
    }

    private static let version =
        #"{"class":"VERSION","release":"3.22","rev":"3.22","proto_major":3,"proto_minor":14}"#

    private func acceptLoop() {
        while true {
            let client = accept(listener, nil, nil)
            guard client >= 0 else { return }
            count.withLock { $0 += 1 }
            Self.send(Self.version, to: client)
            Thread { self.serve(client) }.start()
        }
    }

    private static func send(_ line: String, to client: Int32) {
        let text = line + "\r\n"
        _ = text.withCString { Foundation.send(client, $0, strlen($0), Int32(MSG_NOSIGNAL)) }
    }

    private func serve(_ client: Int32) {
        defer { close(client) }
        var buffer = [UInt8](repeating: 0, count: 4096)
        var pending = ""
        while true {
            let count = read(client, &buffer, buffer.count)
            guard count > 0 else { return }
            pending += String(decoding: buffer[..<count], as: UTF8.self)
            while let end = pending.firstIndex(where: { $0 == ";" || $0 == "\n" }) {
                let command = String(pending[...end]).trimmingCharacters(in: .whitespacesAndNewlines)
                pending = String(pending[pending.index(after: end)...])
                if command.hasPrefix("?WATCH") {
                    Thread { self.watch(client) }.start()
                } else if command.hasPrefix("?VERSION") {
                    Self.send(Self.version, to: client)
                }
            }
        }
    }

    /// The receiver's last reports, then silence.
    private func watch(_ client: Int32) {
        let device = "/dev/ttyACM0"
        Self.send(
            #"{"class":"DEVICES","devices":[{"class":"DEVICE","path":"\#(device)","driver":"NMEA0183","activated":"2026-01-01T00:00:00.000Z","native":0,"bps":9600}]}"#,
            to: client)
        Self.send(#"{"class":"WATCH","enable":true,"json":true,"nmea":false,"raw":0,"scaled":false}"#, to: client)
        for index in 0..<fixes {
            let time = Date().formatted(.iso8601.year().month().day().time(includingFractionalSeconds: true))
            let latitude = 52.52 + Double(index) * 0.0005
            Self.send(
                #"{"class":"TPV","device":"\#(device)","mode":3,"time":"\#(time)","lat":\#(latitude),"lon":13.40,"alt":34.5,"epx":3.1,"epy":3.4,"speed":5.5,"track":12.0}"#,
                to: client)
            // The receiver's cadence: a fix a second.
            Thread.sleep(forTimeInterval: 1)
        }
    }
}
