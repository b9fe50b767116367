import FoundationEssentials
import LiveActivity
import MyelineWire
import MQTT

/// One intent's round trip to a device's agent, as a pure state machine: ``IntentClient`` feeds it
/// the MQTT client's events and performs the actions it returns.
///
/// The command is sent once, after the first connection, and only after the subscription to the
/// result topic is in place, so the answer cannot be missed. Results for other commands and
/// payloads that break their schema are ignored and counted. For `report`, the status and the
/// activity envelopes are collected as well, and the exchange ends once it has the result, the
/// status and the envelope of the activity the result names as the agent republished them (not
/// retained: the broker's retained copies, which arrive first on subscribing, are what the agent
/// published before), or at the deadline with what it has.
struct IntentExchange {
    /// What happened.
    enum Event {
        /// The client connected (again).
        case connected
        /// A connection attempt failed.
        case connectionFailed(MQTTError)
        /// The broker acknowledged the command (PUBACK).
        case sent
        /// The broker refused the subscription or the command.
        case sendFailed(MQTTError)
        /// A message arrived on one of ``filters``.
        case message(MQTTMessage)
        /// The timeout passed.
        case timedOut
    }

    /// What the shell does next.
    enum Action: Equatable {
        /// Nothing: wait for the next event.
        case wait
        /// Subscribe to ``filters``, then publish the command at QoS 1 and report `.sent`.
        case send
        /// Log a message that was not the answer.
        case ignore(IgnoredMessage)
        /// Stop: this is the outcome.
        case finish(IntentOutcome)
    }

    /// A message that was not the answer.
    enum IgnoredMessage: Equatable {
        /// A valid result of another command (another sender's).
        case otherCommand(id: String)
        /// A payload that breaks its schema.
        case invalid(topic: String, problem: String)
    }

    private enum Phase {
        case connecting(lastError: MQTTError?)
        case sending
        case awaitingResult
        case awaitingReport(CommandResult, payload: [UInt8])
        case finished
    }

    /// The command sent.
    let command: Command
    private let device: DeviceID
    private let topics: TopicTree
    private var phase = Phase.connecting(lastError: nil)
    private var ignoredResults = 0
    private var invalidPayloads = 0
    private var status: Collected<ReportedStatus>?
    private var envelopes: [String: Collected<ReportedEnvelope>] = [:]

    /// A status or envelope, and whether it came as the agent published it now rather than as
    /// the broker's retained copy.
    private struct Collected<Value> {
        var value: Value
        var fresh: Bool
    }

    /// Creates the exchange of `command` with `device`'s agent under `topics`.
    init(command: Command, device: DeviceID, topics: TopicTree) {
        self.command = command
        self.device = device
        self.topics = topics
    }

    /// Whether the exchange also collects the device's status and activity (`report`).
    private var reports: Bool { command.intent == .report }

    /// The topic the command is published to, `PREFIX/DEVICE/cmd`.
    var commandTopic: String { topics.command(device: device) }

    /// The filters to subscribe to before sending: the result topic and, for `report`, the status
    /// and the device's activities (`PREFIX/DEVICE/activities/+`).
    var filters: [String] {
        guard reports else { return [topics.commandResult(device: device)] }
        // `+` in place of an activity id: the filter for every activity of this device.
        return [
            topics.commandResult(device: device), topics.status(device: device),
            topics.activity(device: device, activityID: "+"),
        ]
    }

    /// Takes an event and returns what to do.
    mutating func receive(_ event: Event) -> Action {
        switch (phase, event) {
        case (.finished, _):
            return .wait
        case (.connecting, .connected):
            phase = .sending
            return .send
        case (.connecting, .connectionFailed(let error)):
            phase = .connecting(lastError: error)
            // Retrying will not help until someone fixes the credentials or the certificates.
            return error.needsAttention ? finish(.unreachable(error)) : .wait
        case (_, .sendFailed(let error)):
            return finish(.refusedByBroker(error))
        case (.sending, .sent):
            phase = .awaitingResult
            return .wait
        case (_, .message(let message)):
            return receive(message)
        case (.connecting(let lastError), .timedOut):
            return finish(.unreachable(lastError))
        case (.sending, .timedOut):
            return finish(.unacknowledged)
        case (.awaitingResult, .timedOut):
            return finish(.noAnswer(ignoredResults: ignoredResults, invalidPayloads: invalidPayloads))
        case (.awaitingReport(let result, let payload), .timedOut):
            return finish(answer(result, payload: payload))
        case (_, .connected), (_, .connectionFailed), (_, .sent):
            return .wait
        }
    }

    private mutating func receive(_ message: MQTTMessage) -> Action {
        switch topics.route(message.topic) {
        case .commandResult(let target) where target == device:
            return receiveResult(message)
        case .status(let target) where target == device && reports:
            do {
                let value = ReportedStatus(
                    message: try WireCodec.decode(StatusMessage.self, from: Data(message.payload)),
                    payload: message.payload)
                if status?.fresh != true || !message.retain {
                    status = Collected(value: value, fresh: !message.retain)
                }
            } catch {
                return invalid(message, error)
            }
        case .activity(let target, let activityID) where target == device && reports:
            // An empty message clears a dismissed activity.
            guard !message.payload.isEmpty else {
                envelopes[activityID] = nil
                return .wait
            }
            do {
                let value = try ReportedEnvelope(payload: message.payload)
                if envelopes[activityID]?.fresh != true || !message.retain {
                    envelopes[activityID] = Collected(value: value, fresh: !message.retain)
                }
            } catch {
                return invalid(message, error)
            }
        default:
            return .wait
        }
        guard case .awaitingReport(let result, let payload) = phase else { return .wait }
        return reportIsComplete(result) ? finish(answer(result, payload: payload)) : .wait
    }

    private mutating func receiveResult(_ message: MQTTMessage) -> Action {
        let result: CommandResult
        do {
            result = try WireCodec.decode(CommandResult.self, from: Data(message.payload))
        } catch {
            return invalid(message, error)
        }
        guard result.id == command.id else {
            ignoredResults += 1
            return .ignore(.otherCommand(id: result.id))
        }
        switch phase {
        case .connecting, .sending, .awaitingResult:
            guard reports, result.ok, !reportIsComplete(result) else {
                return finish(answer(result, payload: message.payload))
            }
            phase = .awaitingReport(result, payload: message.payload)
            return .wait
        case .awaitingReport, .finished:
            // QoS 1 may deliver the answer twice.
            return .wait
        }
    }

    private mutating func invalid(_ message: MQTTMessage, _ error: any Error) -> Action {
        invalidPayloads += 1
        return .ignore(.invalid(topic: message.topic, problem: "\(error)"))
    }

    /// The activity a report is about: the one the result names, else the one asked about.
    private func reportedActivity(_ result: CommandResult) -> String? { result.activity ?? command.activity }

    /// Whether the status and the activity's envelope have come as the agent republished them.
    private func reportIsComplete(_ result: CommandResult) -> Bool {
        status?.fresh == true && (reportedActivity(result).map { envelopes[$0]?.fresh == true } ?? true)
    }

    private func answer(_ result: CommandResult, payload: [UInt8]) -> IntentOutcome {
        guard reports, result.ok else {
            return .answered(IntentAnswer(result: result, payload: payload, sent: command.intent))
        }
        let activityID = reportedActivity(result)
        return .answered(
            IntentAnswer(
                result: result, payload: payload,
                report: IntentAnswer.Report(
                    status: status?.value, activityID: activityID,
                    envelope: activityID.flatMap { envelopes[$0]?.value })))
    }

    private mutating func finish(_ outcome: IntentOutcome) -> Action {
        phase = .finished
        return .finish(outcome)
    }
}
