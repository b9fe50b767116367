import Foundation
import LiveActivity
import Locking
import Logging
import MQTT
import Testing

@testable import MyelineAgentKit

/// What counts as a second agent with this device id, and what does not.
struct DeviceConflictTests {
    static let start = Date(timeIntervalSince1970: 1_700_000_000)

    /// Counts how many times the detector fired.
    final class Fired: Sendable {
        let count = Locked(0)
    }

    /// A detector for instance `mine` of device `twin`, started at `start`.
    static func make() throws -> (DeviceConflict, Fired) {
        let fired = Fired()
        let conflict = DeviceConflict(
            device: try DeviceID("twin"), instance: "mine", startedAt: start, clientID: "myeline-twin",
            logger: Logger(label: "test")
        ) { fired.count.withLock { $0 += 1 } }
        return (conflict, fired)
    }

    static func online(_ instance: String?, secondsAfterStart: Double) throws -> StatusMessage {
        .online(device: try DeviceID("twin"), since: start + secondsAfterStart, instance: instance)
    }

    @Test func anotherInstanceOnlineAfterTheStartIsAConflict() throws {
        let (conflict, fired) = try Self.make()
        conflict.observe(.connected(sessionPresent: false))
        conflict.observe(try Self.online("other", secondsAfterStart: 5), retained: false)
        #expect(conflict.isDetected)
        conflict.observe(try Self.online("third", secondsAfterStart: 9), retained: false)
        #expect(fired.count.withLock { $0 } == 1)
    }

    @Test func atALaterConnectionEvenARetainedOneCounts() throws {
        let (conflict, _) = try Self.make()
        conflict.observe(.connected(sessionPresent: false))
        conflict.observe(.disconnected(MQTTError(.connectionLost, "lost")))
        conflict.observe(.connected(sessionPresent: true))
        conflict.observe(try Self.online("other", secondsAfterStart: 5), retained: true)
        #expect(conflict.isDetected)
    }

    @Test(
        arguments: [
            // What an earlier run of this agent left retained, seen at the first connection.
            (instance: "earlier", seconds: 5.0, retained: true, connections: 1),
            // A status from before this process started.
            (instance: "earlier", seconds: -60.0, retained: false, connections: 2),
            // This process's own status, and one from an agent without instance ids.
            (instance: "mine", seconds: 5.0, retained: false, connections: 2),
            (instance: nil, seconds: 5.0, retained: false, connections: 2),
        ] as [(instance: String?, seconds: Double, retained: Bool, connections: Int)])
    func theseAreNotAConflict(instance: String?, seconds: Double, retained: Bool, connections: Int) throws {
        let (conflict, fired) = try Self.make()
        for _ in 0..<connections { conflict.observe(.connected(sessionPresent: false)) }
        conflict.observe(try Self.online(instance, secondsAfterStart: seconds), retained: retained)
        #expect(!conflict.isDetected)
        #expect(fired.count.withLock { $0 } == 0)
    }

    @Test func anOfflineStatusOfAnotherInstanceIsNotAConflict() throws {
        let (conflict, _) = try Self.make()
        conflict.observe(.connected(sessionPresent: false))
        conflict.observe(.connected(sessionPresent: false))
        conflict.observe(
            .offline(device: try DeviceID("twin"), since: Self.start + 5, instance: "other"), retained: false)
        #expect(!conflict.isDetected)
    }

    @Test func theBrokersSessionTakenOverIsAConflict() throws {
        let (conflict, fired) = try Self.make()
        conflict.observe(.connected(sessionPresent: false))
        conflict.observe(.disconnected(MQTTError(.connectionLost, "lost")))
        #expect(!conflict.isDetected)
        conflict.observe(.disconnected(MQTTError(.sessionTakenOver, "taken over")))
        #expect(conflict.isDetected)
        #expect(fired.count.withLock { $0 } == 1)
    }
}
