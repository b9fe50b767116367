import AgentStore
import Foundation
import LiveActivity
import MyelineWire
import Location
import Logging
import Testing
import TestSupport
import Tracking

/// `myeline-agent run`, the built binary, against a private broker, as an independent subscriber
/// (`mosquitto_sub` on `myeline/#`) sees it: presence, the activity's lifecycle and its track.
@Suite(.tags(.integration), .timeLimit(.minutes(2)))
struct AgentRunIntegrationTests {
    /// A real NMEA capture of a moving receiver (gpsd's regression logs).
    static let capture = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("LocationTests/Data/gpsd-logs/nmea-rtk.log").path

    /// One message as `mosquitto_sub -F 'MSG|%r|%t|%l|%p'` prints it.
    struct Message {
        var topic: String
        var payload: String

        init?(_ line: Substring) {
            let parts = line.split(separator: "|", maxSplits: 4, omittingEmptySubsequences: false).map(String.init)
            guard parts.count == 5, parts[0] == "MSG" else { return nil }
            (topic, payload) = (parts[2], parts[4])
        }

        var data: Data { Data(payload.utf8) }
    }

    @Test func fileReplayRunsTheWholeLifecycleAndExitsByItself() async throws {
        try await TestBroker.with { broker in
            guard case .unix(let socket) = broker.address.transport else {
                Issue.record("the default test broker listens on a unix socket")
                return
            }
            let subscriber = try ContractIntegrationTests.mosquittoSub([
                "--unix", socket, "-t", "myeline/#", "-q", "1", "-d", "-F", "MSG|%r|%t|%l|%p",
            ])
            // Stopped however the test ends, also when an expectation throws.
            defer { subscriber.signal(SIGKILL) }
            try await subscriber.waitForLine(containing: "SUBACK")
            let started = Date()
            try await withTemporaryDirectory { state in
                // Without a minimum distance or interval every batch of fixes is an update, even
                // in a replay that lasts a fraction of a second.
                let agent = try TestProcess(
                    name: "myeline-agent", executable: try builtProductPath("myeline-agent"),
                    arguments: [
                        "run", "--device", "van-7", "--broker", "\(broker.address)", "--source", Self.capture,
                        "--speed", "max", "--state-dir", state, "--end-on-exit",
                    ],
                    environment: ProcessInfo.processInfo.environment.merging([
                        "MYELINE_UPDATES_MIN_DISTANCE": "0", "MYELINE_UPDATES_MIN_INTERVAL": "0",
                    ]) { $1 })
                defer { agent.signal(SIGKILL) }
                #expect(
                    try await withDeadline(.seconds(60), what: "the agent to exit", process: agent) {
                        try await agent.waitForExit()
                    } == 0)
                // The ended and cleared activity is not kept for a resume.
                #expect(try Self.savedActivities(in: state).isEmpty)
            }
            let ended = Date()
            _ = try await subscriber.waitForLine(containing: "\"state\":\"offline\"")
            await subscriber.stop()

            let messages = subscriber.output.split(separator: "\n").compactMap(Message.init)
            let status = try messages.filter { $0.topic == "myeline/van-7/status" }.map {
                try WireCodec.decode(StatusMessage.self, from: $0.data)
            }
            #expect(status.map(\.state) == [.online, .offline])
            #expect(status.last?.reason == .shutdown)
            #expect(status.first?.since != nil)

            let activityMessages = messages.filter { $0.topic.hasPrefix("myeline/van-7/activities/") }
            let envelopeMessages = activityMessages.filter { !$0.topic.hasSuffix("/track") }
            let trackMessages = activityMessages.filter { $0.topic.hasSuffix("/track") }
            try #require(envelopeMessages.count >= 3, "start, updates, end, clear:\n\(subscriber.output)")
            let cleared = try #require(envelopeMessages.last)
            #expect(cleared.payload.isEmpty)
            let envelopes = try envelopeMessages.dropLast().map {
                try WireCodec.decode(ActivityEnvelope<LocationActivityAttributes>.self, from: $0.data)
            }
            let activityID = try #require(envelopes.first?.header.activity)
            #expect(envelopeMessages.allSatisfy { $0.topic == "myeline/van-7/activities/\(activityID)" })
            #expect(envelopes.map(\.header.seq) == Array(1...envelopes.count))
            #expect(envelopes.first?.header.event == .start)
            #expect(envelopes.first?.content.state.latitude == nil)
            #expect(envelopes.last?.header.event == .end)
            #expect(envelopes.last?.content.state.latitude == nil)
            #expect(envelopes.last?.dismissalDate != nil)
            let updates = envelopes.dropFirst().dropLast()
            #expect(!updates.isEmpty)
            for update in updates {
                #expect(update.header.event == .update)
                let state = update.content.state
                #expect((state.latitude.map { (-90...90).contains($0) }) == true)
                #expect((state.longitude.map { (-180...180).contains($0) }) == true)
            }

            // Every fix the tracker accepts from the capture, in order, with its own track seq,
            // stamped with the time it was replayed (a replay runs live, in the present).
            let expected = try await Self.acceptedFixes()
            #expect(expected.count > 1)
            let points = try trackMessages.map { try WireCodec.decode(TrackPoint.self, from: $0.data) }
            #expect(points.count == expected.count)
            #expect(points.map(\.seq) == (0..<points.count).map { $0 + 1 })
            #expect(points.allSatisfy { $0.activity == activityID && $0.device.rawValue == "van-7" })
            for (point, fix) in zip(points, expected) {
                #expect(point.latitude == fix.latitude && point.longitude == fix.longitude)
            }
            #expect(points.allSatisfy { (started...ended).contains($0.time) })
            #expect(zip(points, points.dropFirst()).allSatisfy { $0.time <= $1.time })
            // The stale date follows the fixes, so it is in the present too.
            #expect(updates.allSatisfy { ($0.content.staleDate ?? .distantPast) > started })
        }
    }

    @Test func sigtermPublishesOfflineAndExitsZero() async throws {
        try await TestBroker.with { broker in
            guard case .unix(let socket) = broker.address.transport else {
                Issue.record("the default test broker listens on a unix socket")
                return
            }
            let subscriber = try ContractIntegrationTests.mosquittoSub([
                "--unix", socket, "-t", "myeline/#", "-q", "1", "-d", "-F", "MSG|%r|%t|%l|%p",
            ])
            // Stopped however the test ends, also when an expectation throws.
            defer { subscriber.signal(SIGKILL) }
            try await subscriber.waitForLine(containing: "SUBACK")
            let saved = try await withTemporaryDirectory {
                (state: String) -> PersistedActivity<LocationActivityAttributes>? in
                // At the recorded pace, in a loop: the replay never ends by itself.
                let agent = try TestProcess(
                    name: "myeline-agent", executable: try builtProductPath("myeline-agent"),
                    arguments: [
                        "run", "--device", "van-7", "--broker", "\(broker.address)", "--source", Self.capture,
                        "--speed", "1", "--loop", "--state-dir", state,
                    ])
                defer { agent.signal(SIGKILL) }
                _ = try await subscriber.waitForLine(containing: "/track|")
                agent.signal(SIGTERM)
                #expect(
                    try await withDeadline(.seconds(30), what: "the agent to exit", process: agent) {
                        try await agent.waitForExit()
                    } == 0)
                return try Self.savedActivities(in: state).first
            }
            let line = try await subscriber.waitForLine(containing: "\"state\":\"offline\"")
            let offline = try WireCodec.decode(
                StatusMessage.self, from: try #require(Message(line[...])).data)
            #expect(offline.reason == .shutdown)
            await subscriber.stop()
            // Without --end-on-exit the activity is kept: no end envelope, no clearing message.
            #expect(!subscriber.output.contains("\"event\":\"end\""))
            // The kept activity is saved with its sequences, for the resume after a restart.
            let messages = subscriber.output.split(separator: "\n").compactMap(Message.init)
            let envelopes = try messages.filter { !$0.topic.hasSuffix("/track") && $0.topic.contains("/activities/") }
                .map { try WireCodec.decode(ActivityEnvelope<LocationActivityAttributes>.self, from: $0.data) }
            let points = try messages.filter { $0.topic.hasSuffix("/track") }.map {
                try WireCodec.decode(TrackPoint.self, from: $0.data)
            }
            let record = try #require(saved)
            #expect(record.activityID == envelopes.last?.header.activity)
            #expect(record.lastSeq == envelopes.last?.header.seq)
            #expect(record.trackSeq >= (points.last?.seq ?? 0))
            #expect(record.attributes.deviceID.rawValue == "van-7")
        }
    }

    @Test func trackPointsTakenOfflineAreDeliveredInOrderAfterARestart() async throws {
        try await TestBroker.with { broker in
            guard case .unix(let socket) = broker.address.transport else {
                Issue.record("the default test broker listens on a unix socket")
                return
            }
            try await withTemporaryDirectory { state in
                let arguments = [
                    "run", "--device", "van-7", "--broker", "\(broker.address)", "--source", Self.capture,
                    "--speed", "max", "--state-dir", state,
                ]
                // The whole replay while the broker is down: every point goes to the outbox on disk.
                await broker.stop()
                let offline = try TestProcess(
                    name: "myeline-agent", executable: try builtProductPath("myeline-agent"), arguments: arguments)
                defer { offline.signal(SIGKILL) }
                #expect(
                    try await withDeadline(.seconds(30), what: "the offline agent to exit", process: offline) {
                        try await offline.waitForExit()
                    } == 0)

                try await broker.start()
                let subscriber = try ContractIntegrationTests.mosquittoSub([
                    "--unix", socket, "-t", "myeline/#", "-q", "1", "-d", "-F", "MSG|%r|%t|%l|%p",
                ])
                defer { subscriber.signal(SIGKILL) }
                try await subscriber.waitForLine(containing: "SUBACK")
                let online = try TestProcess(
                    name: "myeline-agent", executable: try builtProductPath("myeline-agent"),
                    arguments: arguments + ["--end-on-exit"])
                defer { online.signal(SIGKILL) }
                #expect(
                    try await withDeadline(.seconds(60), what: "the agent to exit", process: online) {
                        try await online.waitForExit()
                    } == 0)
                _ = try await subscriber.waitForLine(containing: "\"state\":\"offline\"")
                await subscriber.stop()

                let messages = subscriber.output.split(separator: "\n").compactMap(Message.init)
                let points = try messages.filter { $0.topic.hasSuffix("/track") }.map {
                    try WireCodec.decode(TrackPoint.self, from: $0.data)
                }
                // The second run resumed the first run's activity (kept without --end-on-exit):
                // one activity, first the offline run's points, all of them and in order, then
                // the second run's, whose seqs continue.
                try #require(Set(points.map(\.activity)).count == 1, "one activity's track:\n\(subscriber.output)")
                let expected = try await Self.acceptedFixes()
                #expect(points.map(\.seq) == (0..<(2 * expected.count)).map { $0 + 1 })
                #expect(points.map(\.latitude) == (expected + expected).map(\.latitude))
                let envelopes = try messages.filter { $0.topic.hasPrefix("myeline/van-7/activities/") }
                    .filter { !$0.topic.hasSuffix("/track") && !$0.payload.isEmpty }
                    .map { try WireCodec.decode(ActivityEnvelope<LocationActivityAttributes>.self, from: $0.data) }
                #expect(envelopes.first?.header.event == .update)
                #expect(envelopes.last?.header.event == .end)
                #expect(zip(envelopes, envelopes.dropFirst()).allSatisfy { $0.header.seq < $1.header.seq })
            }
        }
    }

    /// The activities saved in an agent's state directory.
    /// The activities the agent with state directory `state` (and the harness's spool in it) left,
    /// as its next start reads them: the spool's exact records after a crash or SIGKILL (the
    /// machine did not stop), the journal's after a clean exit (which removes the spool).
    static func savedActivities(in state: String) throws -> [PersistedActivity<LocationActivityAttributes>] {
        let spool = state + "/spool/activities"
        let directory = FileManager.default.fileExists(atPath: spool) ? spool : state + "/activities"
        return try ActivityStateStore<LocationActivityAttributes>.loadAll(
            directory: directory, logger: Logger(label: "test"))
    }

    /// The fixes the tracker accepts from the capture, replayed as the agent does (recorded times).
    static func acceptedFixes() async throws -> [LocationFix] {
        let source = try FileSource(path: capture, options: FileSource.Options(pacing: .asFastAsPossible))
        var tracker: Tracker?
        var fixes: [LocationFix] = []
        for try await update in source.updates {
            let now = update.time ?? tracker?.lastFixTime ?? Date()
            if tracker == nil {
                tracker = Tracker(
                    attributes: LocationActivityAttributes(deviceID: try DeviceID("van-7"), name: "van-7"),
                    policy: TrackingPolicy(), now: now)
                _ = tracker?.start(now: now)
            }
            if let fix = tracker?.receive(update, now: now).trackFix { fixes.append(fix) }
        }
        return fixes
    }
}
