import AsyncSupport
import Foundation
import Glibc
import Locking

/// Debian's Chromium, headless, driven over its DevTools protocol on a pipe (`--remote-debugging-pipe`:
/// no port at all), for tests that read a real page's DOM and take screenshots. Started in a
/// private profile directory, stopped by its PID.
public final class HeadlessBrowser: Sendable {
    private let process: TestProcess
    private let input: Int32
    private let state = Locked(State())

    private struct State {
        var nextID = 0
        var waiters: [Int: CheckedContinuation<Data, any Error>] = [:]
        var ended = false
    }

    /// One open page (a target with its own session).
    public struct Page: Sendable {
        let browser: HeadlessBrowser
        let session: String

        /// Evaluates `expression` in the page; its value as JSON (`JSON.stringify` of it), awaiting a
        /// promise.
        public func evaluate(_ expression: String) async throws -> String {
            let result = try await browser.send(
                "Runtime.evaluate",
                [
                    "expression": "Promise.resolve(\(expression)).then((v) => JSON.stringify(v ?? null))",
                    "awaitPromise": true, "returnByValue": true,
                ], session: session)
            guard let object = try JSONSerialization.jsonObject(with: result) as? [String: Any],
                let value = object["result"] as? [String: Any]
            else { throw TestSupportError("Runtime.evaluate answered \(String(decoding: result, as: UTF8.self))") }
            if let exception = object["exceptionDetails"] {
                throw TestSupportError("the page threw: \(exception)")
            }
            return value["value"] as? String ?? "null"
        }

        /// Waits until `condition` (a JavaScript expression) is true in the page, checking it each
        /// time the DOM changes and every 50 ms (its ages move with time), for at most `timeout`.
        public func waitUntil(_ condition: String, timeout: Duration = .seconds(30)) async throws {
            // The page gives up by itself: a protocol command cannot be cancelled from here.
            let milliseconds = Int((timeout.inSeconds * 1000).rounded())
            let script = """
                new Promise((resolve) => { const limit = Date.now() + \(milliseconds); const check = () => { \
                try { if (\(condition)) { resolve(true); return; } } catch (e) {} \
                if (Date.now() > limit) { resolve(false); return; } setTimeout(check, 50); }; check(); })
                """
            guard try await evaluate(script) == "true" else {
                let dom = (try? await evaluate("document.body ? document.body.outerHTML.slice(0, 4000) : ''")) ?? "?"
                throw TestSupportError(
                    "timed out after \(timeout) waiting for the page to show \(condition); the page: \(dom)")
            }
        }

        /// Saves a PNG screenshot of the page to `path`.
        public func screenshot(to path: String) async throws {
            let result = try await browser.send("Page.captureScreenshot", ["format": "png"], session: session)
            guard let object = try JSONSerialization.jsonObject(with: result) as? [String: Any],
                let base64 = object["data"] as? String, let png = Data(base64Encoded: base64)
            else { throw TestSupportError("Page.captureScreenshot gave no image") }
            try png.write(to: URL(fileURLWithPath: path))
        }
    }

    private init(process: TestProcess, input: Int32, output: Int32) {
        self.process = process
        self.input = input
        startReader(output)
    }

    /// Runs `body` with a headless Chromium of `width` × `height` pixels, stopped however it ends.
    public static func with<R>(
        width: Int = 1280, height: Int = 800, _ body: (HeadlessBrowser) async throws -> R
    ) async throws -> R {
        let chromium = try executablePath("chromium", package: "chromium")
        return try await withTemporaryDirectory { directory in
            // Two FIFOs for the protocol's pipe: Chromium reads commands on its fd 3 and writes
            // answers on its fd 4.
            let commands = "\(directory)/commands"
            let answers = "\(directory)/answers"
            guard mkfifo(commands, 0o600) == 0, mkfifo(answers, 0o600) == 0 else {
                throw TestSupportError("mkfifo: \(String(cString: strerror(errno)))")
            }
            let arguments = [
                "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
                "--no-default-browser-check", "--disable-background-networking", "--disable-extensions",
                "--user-data-dir=\(directory)/profile", "--window-size=\(width),\(height)",
                "--remote-debugging-pipe", "about:blank",
            ]
            let script = "exec \"$0\" \"$@\" 3<\(commands) 4>\(answers)"
            let process = try TestProcess(
                name: "chromium", executable: "/bin/sh", arguments: ["-c", script, chromium] + arguments)
            // Opening a FIFO waits for its other end: the shell opens them in this order.
            let (input, output) = await withCheckedContinuation { continuation in
                DedicatedThread.start(name: "chromium-pipes") {
                    let input = Glibc.open(commands, O_WRONLY)
                    let output = Glibc.open(answers, O_RDONLY)
                    continuation.resume(returning: (input, output))
                }
            }
            guard input >= 0, output >= 0 else {
                process.signal(SIGKILL)
                throw TestSupportError("cannot open Chromium's pipe: \(String(cString: strerror(errno)))")
            }
            let browser = HeadlessBrowser(process: process, input: input, output: output)
            defer {
                close(input)
                process.signal(SIGKILL)
            }
            let result = try await body(browser)
            _ = try? await browser.send("Browser.close", [:])
            _ = try? await withDeadline(.seconds(10), what: "Chromium to exit") { try await process.waitForExit() }
            return result
        }
    }

    /// Opens `url` in a new page and waits until it has loaded.
    public func open(_ url: String) async throws -> Page {
        let created = try await send("Target.createTarget", ["url": url])
        guard let target = (try JSONSerialization.jsonObject(with: created) as? [String: Any])?["targetId"] as? String
        else { throw TestSupportError("Target.createTarget gave no target") }
        let attached = try await send("Target.attachToTarget", ["targetId": target, "flatten": true])
        guard
            let session = (try JSONSerialization.jsonObject(with: attached) as? [String: Any])?["sessionId"] as? String
        else { throw TestSupportError("Target.attachToTarget gave no session") }
        let page = Page(browser: self, session: session)
        // Until the navigation commits, the page is about:blank (or its context is being replaced,
        // which fails an evaluation): ask again until the loaded page answers.
        let deadline = ContinuousClock.now + .seconds(30)
        let loaded = "document.readyState === 'complete' && location.href.startsWith(\(Self.quoted(url)))"
        while await (try? page.evaluate(loaded)) != "true" {
            guard ContinuousClock.now < deadline else { throw TestSupportError("\(url) did not load in 30 s") }
            try await Task.sleep(for: .milliseconds(50))
        }
        return page
    }

    /// `text` as a JavaScript string literal.
    public static func quoted(_ text: String) -> String {
        String(decoding: try! JSONSerialization.data(withJSONObject: [text]), as: UTF8.self).dropFirst().dropLast()
            .description
    }

    /// Sends one protocol command and returns its `result` as JSON.
    func send(_ method: String, _ parameters: [String: Any], session: String? = nil) async throws -> Data {
        let id = state.withLock { state in
            state.nextID += 1
            return state.nextID
        }
        var message: [String: Any] = ["id": id, "method": method, "params": parameters]
        if let session { message["sessionId"] = session }
        var bytes = Array(try JSONSerialization.data(withJSONObject: message))
        bytes.append(0)
        return try await withCheckedThrowingContinuation { continuation in
            let ended = state.withLock { state in
                if !state.ended { state.waiters[id] = continuation }
                return state.ended
            }
            if ended {
                continuation.resume(throwing: TestSupportError("Chromium has exited"))
                return
            }
            var offset = 0
            while offset < bytes.count {
                let written = bytes[offset...].withUnsafeBytes { write(input, $0.baseAddress, $0.count) }
                if written < 0 && errno == EINTR { continue }
                guard written > 0 else {
                    if let waiter = state.withLock({ $0.waiters.removeValue(forKey: id) }) {
                        waiter.resume(throwing: TestSupportError("cannot write to Chromium's pipe"))
                    }
                    return
                }
                offset += written
            }
        }
    }

    /// Reads the answers (NUL-terminated JSON) on a thread of their own, handing each to its waiter.
    private func startReader(_ output: Int32) {
        DedicatedThread.start(name: "chromium-reader") { [self] in
            defer { close(output) }
            var pending: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 1 << 16)
            while true {
                let count = read(output, &buffer, buffer.count)
                if count < 0 && errno == EINTR { continue }
                if count <= 0 { break }
                pending.append(contentsOf: buffer[..<count])
                while let end = pending.firstIndex(of: 0) {
                    deliver(Data(pending[..<end]))
                    pending.removeSubrange(...end)
                }
            }
            let waiters = state.withLock { state in
                state.ended = true
                defer { state.waiters = [:] }
                return Array(state.waiters.values)
            }
            for waiter in waiters { waiter.resume(throwing: TestSupportError("Chromium closed its pipe")) }
        }
    }

    private func deliver(_ message: Data) {
        guard let object = try? JSONSerialization.jsonObject(with: message) as? [String: Any],
            let id = object["id"] as? Int,
            let waiter = state.withLock({ $0.waiters.removeValue(forKey: id) })
        else { return }
        if let error = object["error"] {
            waiter.resume(throwing: TestSupportError("Chromium refused a command: \(error)"))
        } else {
            let result = object["result"] ?? [:]
            waiter.resume(returning: (try? JSONSerialization.data(withJSONObject: result)) ?? Data("{}".utf8))
        }
    }
}
