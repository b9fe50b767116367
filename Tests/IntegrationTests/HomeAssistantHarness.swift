import Foundation
import Locking
import TestSupport
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A real Home Assistant for one test: installed from PyPI by `scripts/homeassistant-env` (a
/// virtual environment in a cache directory outside the repository), started with a minimal
/// configuration in a temporary directory on a free loopback port, its owner created through the
/// onboarding API, and driven and read through its REST API. Stopped by its PID.
final class TestHomeAssistant: Sendable {
    /// The version installed and tested, as docs/integrations.md says.
    static let version = "2025.4.4"

    /// Where Home Assistant answers: `http://127.0.0.1:PORT`.
    let url: String
    let process: TestProcess
    private let token: String

    private init(url: String, process: TestProcess, token: String) {
        self.url = url
        self.process = process
        self.token = token
    }

    /// Installs Home Assistant (or finds it installed) and returns its virtual environment.
    ///
    /// - Throws: `TestSupportError` with the installer's output when it fails (no Python 3.13, no
    ///   PyPI): the test fails rather than skips.
    static func installation() async throws -> String {
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("scripts/homeassistant-env").path
        let bash = try executablePath("bash", package: "bash")
        // A cold install takes about 2 minutes; a warm one returns at once.
        let output = try await runProgram(bash, [script], timeout: .seconds(600))
        // The script's pin and this one (the docs') must agree: its environment is named after it.
        guard let environment = output.split(separator: "\n").last.map(String.init),
            environment.hasSuffix("/homeassistant-\(version)"),
            FileManager.default.isExecutableFile(atPath: "\(environment)/bin/hass")
        else {
            throw TestSupportError(
                "scripts/homeassistant-env did not name an environment of Home Assistant \(version) with bin/hass:\n\(output)"
            )
        }
        return environment
    }

    /// Starts Home Assistant from `environment` with a minimal configuration (metric units, the
    /// REST API, logs at warning but for the bootstrap's readiness line), creates its owner, runs
    /// `body`, and stops it however `body` ends.
    static func with<R>(
        environment: String, isolation: isolated (any Actor)? = #isolation,
        _ body: (TestHomeAssistant) async throws -> R
    ) async throws -> R {
        try await withTemporaryDirectory { directory in
            let port = try freeLoopbackPort()
            let url = "http://127.0.0.1:\(port)"
            let configuration = """
                homeassistant:
                  name: Myeline test
                  latitude: 52.52
                  longitude: 13.40
                  elevation: 34
                  unit_system: metric
                  time_zone: UTC
                  country: DE
                  currency: EUR
                  internal_url: \(url)
                http:
                  server_host: 127.0.0.1
                  server_port: \(port)
                api:
                config:
                logger:
                  default: warning
                  logs:
                    homeassistant.bootstrap: info

                """
            try configuration.write(toFile: "\(directory)/configuration.yaml", atomically: true, encoding: .utf8)
            let process = try TestProcess(
                name: "hass", executable: "\(environment)/bin/hass",
                arguments: [
                    "--config", directory, "--skip-pip", "--log-no-color", "--log-file", "\(directory)/hass.log",
                ])
            do {
                try await process.waitForLine(containing: "Home Assistant initialized", timeout: .seconds(180))
                let token = try await onboard(url: url)
                let result = try await body(TestHomeAssistant(url: url, process: process, token: token))
                await process.stop(grace: .seconds(30))
                return result
            } catch {
                await process.stop(grace: .seconds(30))
                throw error
            }
        }
    }

    /// Creates the owner as the onboarding's first step does, and returns an access token for them.
    private static func onboard(url: String) async throws -> String {
        let client = "\(url)/"
        let user = try await send(
            "POST", "\(url)/api/onboarding/users",
            json: [
                "client_id": client, "name": "Owner", "username": "owner", "password": "myeline-test", "language": "en",
            ])
        guard let code = user["auth_code"] as? String else {
            throw TestSupportError("onboarding gave no auth_code: \(user)")
        }
        let form = "grant_type=authorization_code&code=\(code)&client_id=\(client)"
        let tokens = try await send("POST", "\(url)/auth/token", form: form)
        guard let token = tokens["access_token"] as? String else {
            throw TestSupportError("the token endpoint gave no access_token: \(tokens)")
        }
        return token
    }

    /// One HTTP request; the answer as a JSON object (`["list": [...]]` for an array, `[:]` for no body).
    ///
    /// - Throws: `TestSupportError` for a status other than 2xx, with the body.
    private static func send(
        _ method: String, _ url: String, token: String? = nil, json: [String: Any]? = nil, form: String? = nil
    ) async throws -> [String: Any] {
        var request = URLRequest(url: URL(string: url)!)
        request.httpMethod = method
        request.timeoutInterval = 30
        if let token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        if let json {
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            request.httpBody = try JSONSerialization.data(withJSONObject: json)
        } else if let form {
            request.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
            request.httpBody = Data(form.utf8)
        }
        let (data, response) = try await URLSession.shared.data(for: request)
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        guard (200..<300).contains(status) else {
            throw HTTPError(status: status, body: String(decoding: data, as: UTF8.self), request: "\(method) \(url)")
        }
        guard !data.isEmpty else { return [:] }
        let body = try JSONSerialization.jsonObject(with: data)
        return (body as? [String: Any]) ?? ["list": body]
    }

    /// An answer other than 2xx.
    struct HTTPError: Error, CustomStringConvertible {
        let status: Int
        let body: String
        let request: String
        var description: String { "\(request): HTTP \(status): \(body)" }
    }

    /// Runs a config flow through the REST API as the UI does: starts it for `handler`, answers its
    /// forms with `answers` in order, and requires that it creates an entry.
    func addIntegration(_ handler: String, answers: [[String: Any]]) async throws {
        var step = try await Self.send(
            "POST", "\(url)/api/config/config_entries/flow", token: token, json: ["handler": handler])
        for answer in answers {
            guard step["type"] as? String == "form", let flow = step["flow_id"] as? String else {
                throw TestSupportError("the \(handler) flow did not ask for \(answer): \(step)")
            }
            step = try await Self.send(
                "POST", "\(url)/api/config/config_entries/flow/\(flow)", token: token, json: answer)
        }
        guard step["type"] as? String == "create_entry" else {
            throw TestSupportError("the \(handler) flow did not create an entry: \(step)")
        }
    }

    /// An entity's state as `/api/states/ENTITY` gives it.
    struct State: Sendable, CustomStringConvertible {
        let state: String
        let attributes: [String: Value]

        /// An attribute's value.
        enum Value: Sendable, Equatable {
            case number(Double)
            case string(String)
            case null
            /// A list or an object.
            case other(String)
        }

        func number(_ key: String) -> Double? {
            guard case .number(let value)? = attributes[key] else { return nil }
            return value
        }

        func string(_ key: String) -> String? {
            guard case .string(let value)? = attributes[key] else { return nil }
            return value
        }

        var description: String { "\(state) \(attributes)" }
    }

    /// The state of `entity`, or nil when Home Assistant has no such entity (404).
    func state(_ entity: String) async throws -> State? {
        let body: [String: Any]
        do {
            body = try await Self.send("GET", "\(url)/api/states/\(entity)", token: token)
        } catch let error as HTTPError where error.status == 404 {
            return nil
        }
        let attributes = (body["attributes"] as? [String: Any] ?? [:]).mapValues { value -> State.Value in
            switch value {
            case is NSNull: .null
            // Booleans come as 1 and 0: the test reads none.
            case let number as Double: .number(number)
            case let text as String: .string(text)
            default: .other("\(value)")
            }
        }
        return State(state: body["state"] as? String ?? "", attributes: attributes)
    }

    /// Waits until `entity`'s state (nil: no such entity) satisfies `predicate`, reading it every
    /// 200 ms, and returns it.
    ///
    /// - Throws: `TestSupportError` with the last state read when `timeout` passes.
    @discardableResult
    func waitForState(
        _ entity: String, _ description: String, timeout: Duration = .seconds(60),
        where predicate: @escaping @Sendable (State?) -> Bool
    ) async throws -> State? {
        let last = Locked<State?>(nil)
        do {
            return try await withDeadline(timeout, what: "\(entity): \(description)") {
                while true {
                    let state = try await self.state(entity)
                    last.withLock { $0 = state }
                    if predicate(state) { return state }
                    try await Task.sleep(for: .milliseconds(200))
                }
            }
        } catch let error as TestSupportError {
            let state = last.withLock { $0 }
            throw TestSupportError("\(error); its last state: \(state.map { "\($0)" } ?? "none")")
        }
    }

    /// Renders a template with Home Assistant's `/api/template`.
    func render(_ template: String) async throws -> String {
        var request = URLRequest(url: URL(string: "\(url)/api/template")!)
        request.httpMethod = "POST"
        request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = try JSONSerialization.data(withJSONObject: ["template": template])
        let (data, response) = try await URLSession.shared.data(for: request)
        let text = String(decoding: data, as: UTF8.self)
        guard (response as? HTTPURLResponse)?.statusCode == 200 else {
            throw TestSupportError("POST /api/template \(template): \(text)")
        }
        return text
    }

    /// One WARNING, ERROR or CRITICAL record of Home Assistant's log.
    struct Problem: Sendable, CustomStringConvertible {
        let level: String
        /// The Python logger, such as `homeassistant.components.mqtt.discovery`.
        let logger: String
        let message: String
        var description: String { "\(level) [\(logger)] \(message)" }
    }

    /// Every WARNING, ERROR or CRITICAL record Home Assistant has logged so far, in order (a
    /// traceback's lines after its record left out).
    var problems: [Problem] {
        process.output.split(separator: "\n").compactMap { line -> Problem? in
            // 2026-11-25 22:04:34.652 WARNING (Thread-2 (_thread_main)) [homeassistant.bootstrap] Skipping pip ...
            let parts = line.split(separator: " ", maxSplits: 3)
            guard parts.count == 4, ["WARNING", "ERROR", "CRITICAL"].contains(parts[2]),
                let open = parts[3].range(of: ") ["),
                let close = parts[3].range(of: "] ", range: open.upperBound..<parts[3].endIndex)
            else { return nil }
            return Problem(
                level: String(parts[2]), logger: String(parts[3][open.upperBound..<close.lowerBound]),
                message: String(parts[3][close.upperBound...]))
        }
    }
}
