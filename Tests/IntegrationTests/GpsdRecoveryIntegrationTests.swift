import AsyncSupport
import Foundation
import Location
import Locking
import TestSupport
import Testing

/// The gpsd source when gpsd dies, goes silent, or has no fix for minutes.
@Suite(.tags(.integration), .timeLimit(.minutes(2)))
struct GpsdRecoveryIntegrationTests {
    static let quickRetry = Backoff(initialDelay: .milliseconds(50), maximumDelay: .milliseconds(400), jitter: 0.4)

    /// The bytes of a real log, split before the first RMC at or after `fraction` of its length.
    static func halves(of log: String, at fraction: Double) throws -> ([UInt8], [UInt8]) {
        let bytes = Array(try Data(contentsOf: GpsdReplayIntegrationTests.logDirectory.appendingPathComponent(log)))
        var cut = Int(Double(bytes.count) * fraction)
        while cut + 6 < bytes.count,
            !(bytes[cut] == UInt8(ascii: "$") && bytes[(cut + 3)..<(cut + 6)].elementsEqual("RMC".utf8))
        {
            cut += 1
        }
        return (Array(bytes[..<cut]), Array(bytes[cut...]))
    }

    @Test func recoversWhenGpsdIsKilledAndRestarted() async throws {
        let (first, second) = try Self.halves(of: "nmea-rtk.log", at: 0.5)
        try await TestGpsd.with { gpsd in
            let source = try GpsdSource(
                configuration: GpsdConfiguration(
                    host: "127.0.0.1", port: gpsd.port, reconnect: Self.quickRetry,
                    gate: FixGate.Configuration(weekRolloverPivot: nil), bufferSize: 10_000))
            let recorder = UpdateRecorder()
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { for try await update in source.updates { await recorder.record(update) } }
                // A first part of the log, until the source has its fixes.
                try await gpsd.feed(first)
                try await recorder.wait("fixes of the first part") { $0.filter { $0.fix != nil }.count >= 20 }
                let beforeKill = await recorder.fixCount
                // gpsd crashes: the source says the location is unavailable...
                await gpsd.kill()
                try await recorder.wait("a source-unavailable update") {
                    $0.contains { $0.status == .sourceUnavailable }
                }
                // ...and comes back by itself when gpsd is back, watching again.
                try await gpsd.start()
                try await gpsd.feed(second + GpsdReplayIntegrationTests.sentinelSentences)
                try await recorder.wait("the sentinel after the restart") {
                    $0.last.map(GpsdReplayIntegrationTests.isSentinel) ?? false
                }
                group.cancelAll()
                let updates = await recorder.updates
                let unavailable = updates.firstIndex { $0.status == .sourceUnavailable }!
                #expect(updates[..<unavailable].contains { $0.fix != nil })
                #expect(updates[unavailable...].filter { $0.fix != nil }.count > 10)
                #expect(beforeKill > 10)
                #expect(source.statistics.connections >= 2)
                #expect(source.statistics.disconnections >= 1)
            }
        }
    }

    @Test(arguments: [false, true])
    func reconnectsWhenGpsdSaysNothing(greets: Bool) async throws {
        try await SilentServer.with(greeting: greets) { server in
            let source = try GpsdSource(
                configuration: GpsdConfiguration(
                    host: "127.0.0.1", port: server.port, silenceTimeout: .milliseconds(600), reconnect: Self.quickRetry
                ))
            let recorder = UpdateRecorder()
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { for try await update in source.updates { await recorder.record(update) } }
                // Each connection sends WATCH; the silence is detected and the source connects again.
                try await server.waitForConnections(3)
                try await recorder.wait("a source-unavailable update") {
                    $0.contains { $0.status == .sourceUnavailable }
                }
                group.cancelAll()
            }
            #expect(source.statistics.silentTimeouts >= 2)
            #expect(server.commands.filter { $0.hasPrefix("?WATCH={\"enable\":true,\"json\":true}") }.count >= 2)
            // A greeted connection is probed before it is given up.
            #expect(server.commands.contains("?VERSION;") == greets)
            #expect(await recorder.updates.allSatisfy { $0.fix == nil })
        }
    }

    @Test func aHostThatCannotBeResolvedIsReportedAndRetriedOnTheGivenLoop() async throws {
        let loop = EventLoop(name: "test-gpsd-loop")
        defer { loop.shutdown() }
        let source = try GpsdSource(
            configuration: GpsdConfiguration(host: "no-such-host.invalid", reconnect: Self.quickRetry), loop: loop)
        let onLoop = Locked<[Bool]>([])
        let recorder = UpdateRecorder()
        try await withThrowingTaskGroup(of: Void.self) { group in
            // The consumer prefers the loop, as the agent's feeder does: each update reaches it there.
            group.addTask(executorPreference: loop) {
                for try await update in source.updates {
                    onLoop.withLock { $0.append(loop.isCurrent) }
                    await recorder.record(update)
                }
            }
            try await recorder.wait("a source-unavailable update") { $0.contains { $0.status == .sourceUnavailable } }
            group.cancelAll()
        }
        #expect(await recorder.updates.allSatisfy { $0.status == .sourceUnavailable })
        #expect(source.statistics.disconnections >= 1)
        #expect(onLoop.withLock { $0 }.allSatisfy { $0 })
        // The loop still runs work after the source has ended on it.
        #expect(await loop.run { loop.isCurrent })
    }

    @Test func receiverWithoutAFixForMinutes() async throws {
        let log = NoFixLog.minutes(5)
        try await TestGpsd.with { gpsd in
            let source = try GpsdSource(
                configuration: GpsdConfiguration(
                    host: "127.0.0.1", port: gpsd.port, reconnect: Self.quickRetry, bufferSize: 10_000))
            let recorder = UpdateRecorder()
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { for try await update in source.updates { await recorder.record(update) } }
                try await gpsd.feed(log + GpsdReplayIntegrationTests.sentinelSentences)
                try await recorder.wait("the sentinel") { $0.last.map(GpsdReplayIntegrationTests.isSentinel) ?? false }
                group.cancelAll()
            }
            let all = await recorder.updates
            let updates = all.prefix { !GpsdReplayIntegrationTests.isSentinel($0) }
            #expect(updates.count >= 1)
            #expect(updates.allSatisfy { $0.fix == nil && $0.status == .noFix }, "\(updates.map(\.status))")
            #expect(source.statistics.totalDropped == 0)
        }
    }
}

/// A receiver without a fix: `minutes` of real no-fix sentences (from rx210.log, a u-blox 8 before
/// its first fix), one epoch a second, with times and checksums made anew.
enum NoFixLog {
    static func minutes(_ minutes: Int) -> [UInt8] {
        var text = ""
        for second in 0..<(minutes * 60) {
            let time = String(format: "%02d%02d%02d.00", 18, 40 + second / 60 % 20, second % 60)
            for body in [
                "GNRMC,\(time),V,,,,,,,030416,,,N", "GNGGA,\(time),,,,,0,04,28.92,,,,,,",
                "GNGSA,A,1,31,21,,,,,,,,,,,53.49,28.92,45.00",
            ] {
                let checksum = body.utf8.reduce(UInt8(0), ^)
                text += "$\(body)*\(String(format: "%02X", checksum))\r\n"
            }
        }
        return Array(text.utf8)
    }
}

/// Collects a source's updates and lets a test wait for a condition on them.
actor UpdateRecorder {
    private(set) var updates: [LocationUpdate] = []
    private var waiters: [(condition: ([LocationUpdate]) -> Bool, continuation: CheckedContinuation<Void, Never>)] = []

    var fixCount: Int { updates.filter { $0.fix != nil }.count }

    func record(_ update: LocationUpdate) {
        updates.append(update)
        var remaining: [(condition: ([LocationUpdate]) -> Bool, continuation: CheckedContinuation<Void, Never>)] = []
        for waiter in waiters {
            if waiter.condition(updates) { waiter.continuation.resume() } else { remaining.append(waiter) }
        }
        waiters = remaining
    }

    private func suspend(until condition: @escaping @Sendable ([LocationUpdate]) -> Bool) async {
        if condition(updates) { return }
        await withCheckedContinuation { waiters.append((condition, $0)) }
    }

    /// Waits (at most `timeout`) until the updates so far satisfy `condition`.
    nonisolated func wait(
        _ what: String, timeout: Duration = .seconds(30), _ condition: @escaping @Sendable ([LocationUpdate]) -> Bool
    ) async throws {
        try await withDeadline(timeout, what: what) { await self.suspend(until: condition) }
    }
}

/// A TCP server that accepts connections and never answers (or only greets like gpsd, then
/// falls silent): a hung gpsd, or a half-open connection. With `receiverFixes`, a gpsd whose
/// receiver falls silent instead: it answers `?WATCH` with DEVICES, WATCH and that many TPVs a
/// second apart (times of now), then sends nothing more, but answers every `?VERSION;` probe,
/// as gpsd does for a receiver that stopped talking.
final class SilentServer: Sendable {
    let port: Int
    private let listener: Int32
    private let state = Locked<
        (connections: Int, commands: [String], waiters: [(Int, CheckedContinuation<Void, Never>)])
    >((0, [], []))
    private let greeting: Bool
    private let receiverFixes: Int?

    private init(listener: Int32, port: Int, greeting: Bool, receiverFixes: Int?) {
        self.listener = listener
        self.port = port
        self.greeting = greeting
        self.receiverFixes = receiverFixes
    }

    var commands: [String] { state.withLock { $0.commands } }

    /// How many connections were accepted.
    var connections: Int { state.withLock { $0.connections } }

    static func with<R>(
        greeting: Bool, receiverFixes: Int? = nil, _ body: (SilentServer) async throws -> R
    ) async throws -> R {
        let (fd, port) = try listenOnLoopback(backlog: 16)
        let server = SilentServer(listener: fd, port: port, greeting: greeting, receiverFixes: receiverFixes)
        let thread = Thread { server.acceptLoop() }
        thread.start()
        defer { shutdown(fd, Int32(SHUT_RDWR)) }
        return try await body(server)
    }

    /// Waits until `count` connections have been accepted (bounded by the caller's deadline).
    func waitForConnections(_ count: Int, timeout: Duration = .seconds(20)) async throws {
        try await withDeadline(timeout, what: "\(count) connections") {
            await withCheckedContinuation { continuation in
                let ready = self.state.withLock { state -> Bool in
                    if state.connections >= count { return true }
                    state.waiters.append((count, continuation))
                    return false
                }
                if ready { continuation.resume() }
            }
        }
    }

    private func acceptLoop() {
        while true {
            let client = accept(listener, nil, nil)
            guard client >= 0 else { return }
            if greeting { Self.send(Self.version, to: client) }
            let thread = Thread { self.readCommands(client) }
            thread.start()
            let ready = state.withLock { state in
                state.connections += 1
                let count = state.connections
                let ready = state.waiters.filter { $0.0 <= count }.map(\.1)
                state.waiters.removeAll { $0.0 <= count }
                return ready
            }
            for continuation in ready { continuation.resume() }
        }
    }

    private static let version =
        #"{"class":"VERSION","release":"3.22","rev":"3.22","proto_major":3,"proto_minor":14}"#

    private static func send(_ line: String, to client: Int32) {
        let text = line + "\r\n"
        _ = text.withCString { Foundation.send(client, $0, strlen($0), Int32(MSG_NOSIGNAL)) }
    }

    /// Records what the client sends; answers only as a silent receiver's gpsd.
    private func readCommands(_ client: Int32) {
        defer { close(client) }
        var buffer = [UInt8](repeating: 0, count: 4096)
        var pending = ""
        while true {
            let count = read(client, &buffer, buffer.count)
            guard count > 0 else { return }
            pending += String(decoding: buffer[..<count], as: UTF8.self)
            while let newline = pending.firstIndex(of: "\n") {
                let command = String(pending[..<newline])
                pending = String(pending[pending.index(after: newline)...])
                state.withLock { $0.commands.append(command) }
                guard let receiverFixes else { continue }
                if command.hasPrefix("?WATCH") {
                    Thread { self.watch(client, fixes: receiverFixes) }.start()
                } else if command.hasPrefix("?VERSION") {
                    Self.send(Self.version, to: client)
                }
            }
        }
    }

    /// The receiver's last reports, then silence.
    private func watch(_ client: Int32, fixes: Int) {
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
