import Foundation
import LiveActivity
import MyelineWire
import MQTT
import Testing

@testable import MyelineAgentKit

/// The intent round trip's state machine, event by event, and what the command line prints for
/// each outcome: no broker, no sockets, no clock.
struct IntentExchangeTests {
    static let device = try! DeviceID("van-7")
    static let topics = TopicTree()
    static let activityID = "3f2b8c1e-0d4a-4e59-9a57-2f1c7b5d9e10"
    static let sent = Date(timeIntervalSince1970: 1_700_000_000)
    static let network = MQTTError(.network, "cannot connect: Connection refused")

    static func exchange(_ intent: Command.Intent, activity: String? = nil) throws -> IntentExchange {
        IntentExchange(
            command: try Command(id: "req-1", intent: intent, activity: activity, timestamp: sent), device: device,
            topics: topics)
    }

    static func message(_ topic: String, _ payload: String) -> IntentExchange.Event {
        .message(MQTTMessage(topic: topic, payload: Array(payload.utf8)))
    }

    static func result(_ exchange: IntentExchange, id: String? = nil, error: String? = nil) throws -> [UInt8] {
        let command = try Command(
            id: id ?? exchange.command.id, intent: exchange.command.intent, timestamp: Self.sent)
        let result =
            if let error {
                CommandResult.failure(for: command, error: error, timestamp: Self.sent)
            } else {
                CommandResult.success(for: command, activity: Self.activityID, timestamp: Self.sent)
            }
        return Array(try WireCodec.encode(result))
    }

    static func resultEvent(_ payload: [UInt8]) -> IntentExchange.Event {
        .message(MQTTMessage(topic: topics.commandResult(device: device), payload: payload))
    }

    static let status =
        #"{"device":"van-7","schema":"myeline.status.v1","since":1700000000,"state":"online","version":"0.1.0"}"#
    static let envelope = """
        {"activity":"\(activityID)","attributes":{"deviceID":"van-7","name":"Van 7"},"attributes-type":"location",\
        "content-state":{"distance":0,"elapsed":0,"fix":"none","paused":false},"device":"van-7","event":"start",\
        "relevance-score":0,"schema":"myeline.activity.v1","seq":1,"stale-date":1700000090,"timestamp":1700000000}
        """

    @Test func sendsOnceAfterTheFirstConnection() throws {
        var exchange = try Self.exchange(.stop)
        #expect(exchange.filters == ["myeline/van-7/cmd/result"])
        #expect(exchange.commandTopic == "myeline/van-7/cmd")
        #expect(exchange.receive(.connectionFailed(Self.network)) == .wait)
        #expect(exchange.receive(.connected) == .send)
        #expect(exchange.receive(.connected) == .wait)
        #expect(exchange.receive(.sent) == .wait)
        #expect(exchange.receive(.timedOut) == .finish(.noAnswer(ignoredResults: 0, invalidPayloads: 0)))
        #expect(exchange.receive(.timedOut) == .wait)
    }

    @Test func theTimeoutSaysHowFarItGot() throws {
        var never = try Self.exchange(.stop)
        #expect(never.receive(.timedOut) == .finish(.unreachable(nil)))

        var failing = try Self.exchange(.stop)
        _ = failing.receive(.connectionFailed(Self.network))
        #expect(failing.receive(.timedOut) == .finish(.unreachable(Self.network)))

        var unacknowledged = try Self.exchange(.stop)
        _ = unacknowledged.receive(.connected)
        // A lost connection after sending does not matter: the client reconnects and resends.
        #expect(unacknowledged.receive(.connectionFailed(Self.network)) == .wait)
        #expect(unacknowledged.receive(.timedOut) == .finish(.unacknowledged))
    }

    @Test func aRefusedConnectionEndsAtOnce() throws {
        var exchange = try Self.exchange(.start)
        let refused = MQTTError(.connectionRefused, "broker refused the connection: not authorised")
        #expect(exchange.receive(.connectionFailed(refused)) == .finish(.unreachable(refused)))
    }

    @Test func aBrokerRefusalEndsAtOnce() throws {
        var exchange = try Self.exchange(.start)
        _ = exchange.receive(.connected)
        let refused = MQTTError(.subscriptionRefused, "broker refused the subscription: not authorized")
        #expect(exchange.receive(.sendFailed(refused)) == .finish(.refusedByBroker(refused)))
    }

    @Test func otherResultsAndInvalidPayloadsAreIgnoredAndCounted() throws {
        var exchange = try Self.exchange(.pause)
        _ = exchange.receive(.connected)
        _ = exchange.receive(.sent)
        #expect(
            exchange.receive(Self.resultEvent(try Self.result(exchange, id: "req-2")))
                == .ignore(.otherCommand(id: "req-2")))
        guard case .ignore(.invalid(let topic, let problem)) = exchange.receive(Self.resultEvent(Array("{}".utf8)))
        else {
            Issue.record("an invalid result is ignored")
            return
        }
        #expect(topic == "myeline/van-7/cmd/result")
        #expect(problem.contains("invalid myeline.command-result.v1 payload"))
        // Another device's result and topics of no interest change nothing.
        #expect(exchange.receive(Self.message("myeline/van-8/cmd/result", "{}")) == .wait)
        #expect(exchange.receive(Self.message("myeline/van-7/status", Self.status)) == .wait)
        #expect(exchange.receive(.timedOut) == .finish(.noAnswer(ignoredResults: 1, invalidPayloads: 1)))
    }

    @Test(arguments: [nil, "the trip is paused already"])
    func theAnswerEndsTheExchange(error: String?) throws {
        var exchange = try Self.exchange(.pause)
        _ = exchange.receive(.connected)
        _ = exchange.receive(.sent)
        let payload = try Self.result(exchange, error: error)
        let expected = IntentAnswer(
            result: try WireCodec.decode(CommandResult.self, from: Data(payload)), payload: payload, sent: .pause)
        #expect(exchange.receive(Self.resultEvent(payload)) == .finish(.answered(expected)))
        // A second delivery (QoS 1) is not a second answer.
        #expect(exchange.receive(Self.resultEvent(payload)) == .wait)
    }

    @Test func reportWaitsForTheStatusAndTheActivityTheResultNames() throws {
        var exchange = try Self.exchange(.report)
        #expect(
            exchange.filters == ["myeline/van-7/cmd/result", "myeline/van-7/status", "myeline/van-7/activities/+"])
        _ = exchange.receive(.connected)
        // Another activity's envelope, then its clearing, are not the one asked about.
        let other = "myeline/van-7/activities/other-trip"
        #expect(
            exchange.receive(
                Self.message(other, Self.envelope.replacingOccurrences(of: Self.activityID, with: "other-trip")))
                == .wait)
        #expect(exchange.receive(Self.message(other, "")) == .wait)
        _ = exchange.receive(.sent)
        let result = try Self.result(exchange)
        #expect(exchange.receive(Self.resultEvent(result)) == .wait)
        #expect(exchange.receive(Self.message("myeline/van-7/status", Self.status)) == .wait)
        let topic = Self.topics.activity(device: Self.device, activityID: Self.activityID)
        guard case .finish(.answered(let answer)) = exchange.receive(Self.message(topic, Self.envelope)) else {
            Issue.record("the envelope completes the report")
            return
        }
        #expect(answer.payload == result)
        #expect(answer.report?.status?.message.state == .online)
        #expect(answer.report?.activityID == Self.activityID)
        #expect(answer.report?.envelope?.header.seq == 1)
        #expect(answer.report?.envelope?.location?.content.state.fix == .noFix)
    }

    /// Failure 5 of the agent-core issue: `report` printed the retained envelope the broker sent on
    /// subscribing (`start 1`), not the one the agent had just republished.
    @Test func reportWaitsForWhatTheAgentRepublishedNotTheRetainedCopies() throws {
        var exchange = try Self.exchange(.report)
        _ = exchange.receive(.connected)
        let topic = Self.topics.activity(device: Self.device, activityID: Self.activityID)
        func retained(_ topic: String, _ payload: String) -> IntentExchange.Event {
            .message(MQTTMessage(topic: topic, payload: Array(payload.utf8), retain: true))
        }
        #expect(exchange.receive(retained("myeline/van-7/status", Self.status)) == .wait)
        #expect(exchange.receive(retained(topic, Self.envelope)) == .wait)
        _ = exchange.receive(.sent)
        #expect(exchange.receive(Self.resultEvent(try Self.result(exchange))) == .wait)
        #expect(exchange.receive(Self.message("myeline/van-7/status", Self.status)) == .wait)
        let republished = Self.envelope.replacingOccurrences(of: "\"seq\":1", with: "\"seq\":2")
            .replacingOccurrences(of: "\"event\":\"start\"", with: "\"event\":\"update\"")
        guard case .finish(.answered(let answer)) = exchange.receive(Self.message(topic, republished)) else {
            Issue.record("the republished envelope completes the report")
            return
        }
        #expect(answer.report?.envelope?.header.seq == 2)
    }

    @Test func reportEndsAtOnceWhenTheRepublishedMessagesCameFirst() throws {
        var exchange = try Self.exchange(.report)
        _ = exchange.receive(.connected)
        _ = exchange.receive(Self.message("myeline/van-7/status", Self.status))
        _ = exchange.receive(
            Self.message(Self.topics.activity(device: Self.device, activityID: Self.activityID), Self.envelope))
        _ = exchange.receive(.sent)
        guard case .finish(.answered(let answer)) = exchange.receive(Self.resultEvent(try Self.result(exchange))) else {
            Issue.record("the result completes the report")
            return
        }
        #expect(answer.report?.envelope != nil)
    }

    @Test func reportAtTheTimeoutHasWhatArrived() throws {
        var exchange = try Self.exchange(.report)
        _ = exchange.receive(.connected)
        _ = exchange.receive(.sent)
        let result = try Self.result(exchange)
        _ = exchange.receive(Self.resultEvent(result))
        #expect(exchange.receive(Self.message("myeline/van-7/status", "{\"state\":\"online\"}")) != .wait)
        guard case .finish(.answered(let answer)) = exchange.receive(.timedOut) else {
            Issue.record("the timeout ends the report with the result")
            return
        }
        let report = try #require(answer.report)
        #expect(report.status == nil && report.envelope == nil && report.activityID == Self.activityID)
        #expect(
            answer.output(device: Self.device, json: false).standardOutput == """
                van-7: report ok (activity \(Self.activityID))
                status: none received
                activity \(Self.activityID): none received

                """)
    }

    @Test func aRefusedReportEndsWithoutWaiting() throws {
        var exchange = try Self.exchange(.report)
        _ = exchange.receive(.connected)
        guard
            case .finish(.answered(let answer)) = exchange.receive(
                Self.resultEvent(try Self.result(exchange, error: "no activity")))
        else {
            Issue.record("a refusal ends the report")
            return
        }
        #expect(answer.report == nil)
    }

    @Test func outputOfEachOutcome() throws {
        let broker = BrokerAddress(.unix(path: "/run/mosquitto.sock"))
        func output(_ outcome: IntentOutcome, json: Bool = false) -> IntentOutput {
            outcome.output(device: Self.device, broker: broker, timeout: 2.5, json: json)
        }
        #expect(
            output(.unreachable(Self.network))
                == IntentOutput(
                    standardError:
                        "Error: cannot reach the broker unix:/run/mosquitto.sock within 2.5 s: cannot connect: Connection refused\n",
                    status: 3))
        #expect(
            output(.unreachable(nil))
                == IntentOutput(
                    standardError: "Error: cannot reach the broker unix:/run/mosquitto.sock within 2.5 s\n", status: 3))
        #expect(
            output(.unacknowledged)
                == IntentOutput(
                    standardError:
                        "Error: the broker unix:/run/mosquitto.sock did not acknowledge the command within 2.5 s\n",
                    status: 3))
        #expect(
            output(.refusedByBroker(MQTTError(.publishRefused, "not authorized")))
                == IntentOutput(
                    standardError: "Error: the broker unix:/run/mosquitto.sock refused the command: not authorized\n",
                    status: 3))
        #expect(
            output(.noAnswer(ignoredResults: 2, invalidPayloads: 1))
                == IntentOutput(
                    standardError:
                        "Error: no answer from van-7 within 2.5 s: is its agent running?; ignored 2 result(s) of other commands and 1 invalid payload(s)\n",
                    status: 3))

        let exchange = try Self.exchange(.start)
        let refusal = try Self.result(exchange, error: "an activity is already running")
        let refused = IntentOutcome.answered(
            IntentAnswer(result: try WireCodec.decode(CommandResult.self, from: Data(refusal)), payload: refusal))
        #expect(
            output(refused)
                == IntentOutput(
                    standardError: "Error: van-7 refused start: an activity is already running\n", status: 1))
        #expect(
            output(refused, json: true)
                == IntentOutput(
                    standardOutput: String(decoding: refusal, as: UTF8.self) + "\n",
                    standardError: "Error: van-7 refused start: an activity is already running\n", status: 1))
    }

    @Test func reportLines() throws {
        let status = ReportedStatus(
            message: .offline(device: Self.device, since: Self.sent, version: "0.1.0"), payload: [])
        #expect(status.line == "offline since 2023-11-14T22:13:20Z, shutdown, version 0.1.0")
        let envelope = try ReportedEnvelope(payload: Array(Self.envelope.utf8))
        #expect(
            envelope.line
                == "start 1 at 2023-11-14T22:13:20Z, no location, 0 m in 0 s, stale at 2023-11-14T22:14:50Z")
        let other = try ReportedEnvelope(
            payload: Array(
                Self.envelope.replacingOccurrences(
                    of: "\"attributes-type\":\"location\"", with: "\"attributes-type\":\"parcel\""
                )
                .utf8))
        #expect(other.location == nil)
        #expect(other.line == "start 1 (parcel)")
    }
}
