import MyelineConfiguration
import FoundationEssentials
import LiveActivity
import MQTT
import MyelineWire

/// What an intent subcommand prints and its exit status.
struct IntentOutput: Equatable {
    /// The exit status when the agent did what was asked.
    static let success: Int32 = 0
    /// The exit status when the agent refused (its reason on standard error).
    static let refused: Int32 = 1
    /// The exit status when no answer came: the broker was unreachable or the agent silent.
    static let noAnswer: Int32 = 3

    /// Standard output: the answer, one line each (or the payloads with `--json`); empty or ending with a newline.
    var standardOutput = ""
    /// Standard error: why the command failed; empty or ending with a newline.
    var standardError = ""
    /// The exit status.
    var status: Int32
}

extension IntentOutcome {
    /// The output of this outcome.
    ///
    /// - Parameters:
    ///   - device: the device commanded.
    ///   - broker: the broker, as messages name it.
    ///   - timeout: the time waited, seconds.
    ///   - json: whether to print the payloads received instead of readable lines.
    func output(device: DeviceID, broker: BrokerAddress, timeout: Double, json: Bool) -> IntentOutput {
        let waited = "within \(ConfigurationFormat.number(timeout)) s"
        switch self {
        case .answered(let answer):
            return answer.output(device: device, json: json)
        case .unreachable(let error?):
            return IntentOutput(
                standardError: "Error: cannot reach the broker \(broker) \(waited): \(error)\n",
                status: IntentOutput.noAnswer)
        case .unreachable(nil):
            return IntentOutput(
                standardError: "Error: cannot reach the broker \(broker) \(waited)\n", status: IntentOutput.noAnswer)
        case .refusedByBroker(let error):
            return IntentOutput(
                standardError: "Error: the broker \(broker) refused the command: \(error)\n",
                status: IntentOutput.noAnswer)
        case .unacknowledged:
            return IntentOutput(
                standardError: "Error: the broker \(broker) did not acknowledge the command \(waited)\n",
                status: IntentOutput.noAnswer)
        case .noAnswer(let ignoredResults, let invalidPayloads):
            var ignored: [String] = []
            if ignoredResults > 0 { ignored.append("\(ignoredResults) result(s) of other commands") }
            if invalidPayloads > 0 { ignored.append("\(invalidPayloads) invalid payload(s)") }
            let note = ignored.isEmpty ? "" : "; ignored \(ignored.joined(separator: " and "))"
            return IntentOutput(
                standardError: "Error: no answer from \(device) \(waited): is its agent running?\(note)\n",
                status: IntentOutput.noAnswer)
        }
    }
}

extension IntentAnswer {
    /// The output of the answer: the result, then for a report the status and the activity.
    func output(device: DeviceID, json: Bool) -> IntentOutput {
        // A result answers the command that was sent; it names no intent when the agent could not
        // read the command's (an agent older than the intent), or for an intent results do not name.
        let intent = result.intent?.rawValue ?? sent?.rawValue ?? "the command"
        var lines: [String]
        if json {
            lines = [payload, report?.status?.payload, report?.envelope?.payload].compactMap { $0 }.map {
                String(decoding: $0, as: UTF8.self)
            }
        } else {
            let activity = result.activity.map { " (activity \($0))" } ?? ""
            lines = result.ok ? ["\(device): \(intent) ok\(activity)"] : []
            if let report { lines += report.lines }
        }
        let text = lines.map { $0 + "\n" }.joined()
        guard let error = result.error else { return IntentOutput(standardOutput: text, status: IntentOutput.success) }
        return IntentOutput(
            standardOutput: text, standardError: "Error: \(device) refused \(intent): \(error)\n",
            status: IntentOutput.refused)
    }
}

extension IntentAnswer.Report {
    /// The status and the activity, one readable line each.
    var lines: [String] {
        var lines = [status.map { "status: \($0.line)" } ?? "status: none received"]
        if let activityID {
            lines.append("activity \(activityID): \(envelope?.line ?? "none received")")
        }
        return lines
    }
}

extension ReportedStatus {
    /// Such as `online since 2023-11-14T22:13:20Z, version 0.1.0`.
    var line: String {
        var parts = [message.state.rawValue]
        if let since = message.since { parts[0] += " since \(IntentOutput.time(since))" }
        if let reason = message.reason { parts.append(reason.rawValue) }
        parts.append("version \(message.version)")
        return parts.joined(separator: ", ")
    }
}

extension ReportedEnvelope {
    /// Such as `update 12 at 2023-11-14T22:14:20Z, 52.520008 13.404954, 3d fix, 1234 m in 600 s`.
    var line: String {
        var parts = ["\(header.event.rawValue) \(header.seq)"]
        guard let location else { return parts[0] + " (\(header.attributesType))" }
        parts[0] += " at \(IntentOutput.time(location.timestamp))"
        let state = location.content.state
        if let latitude = state.latitude, let longitude = state.longitude {
            parts.append("\(latitude) \(longitude)")
        } else {
            parts.append("no location")
        }
        if state.fix != .noFix { parts.append("\(state.fix.rawValue) fix") }
        parts.append(
            "\(ConfigurationFormat.number(state.distance.rounded())) m in \(ConfigurationFormat.number(state.elapsed.rounded())) s"
        )
        if state.paused { parts.append("paused") }
        if let staleDate = location.content.staleDate { parts.append("stale at \(IntentOutput.time(staleDate))") }
        return parts.joined(separator: ", ")
    }
}

extension IntentOutput {
    /// A date in UTC, ISO 8601, such as `2023-11-14T22:13:20Z`.
    static func time(_ date: Date) -> String { date.formatted(.iso8601) }
}
