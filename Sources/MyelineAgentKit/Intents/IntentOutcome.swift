import FoundationEssentials
import LiveActivity
import MyelineWire
import MQTT

/// How an intent's round trip to a device's agent ended.
enum IntentOutcome: Equatable {
    /// The agent answered: done or refused (see ``CommandResult/ok``).
    case answered(IntentAnswer)
    /// The client never connected within the timeout; the last connection error, if any.
    case unreachable(MQTTError?)
    /// The broker refused the subscription to the result topic or the command itself (its ACL).
    case refusedByBroker(MQTTError)
    /// Connected, but the broker did not acknowledge the command within the timeout.
    case unacknowledged
    /// The command was delivered but no result with its id came within the timeout.
    case noAnswer(ignoredResults: Int, invalidPayloads: Int)
}

/// The agent's answer to a command: its result and, for `report`, what the device publishes.
struct IntentAnswer: Equatable {
    /// What `report` collected besides the result.
    struct Report: Equatable {
        /// The device's status, nil when none arrived in time.
        var status: ReportedStatus?
        /// The activity the result names (else the one asked about), nil when neither names one.
        var activityID: String?
        /// That activity's envelope, nil when none arrived in time.
        var envelope: ReportedEnvelope?
    }

    /// The result, decoded.
    var result: CommandResult
    /// The result as received: the JSON that `--json` prints.
    var payload: [UInt8]
    /// For a successful `report` only: the status and the activity.
    var report: Report?
    /// The intent sent, for the output when the result names none (`update`'s results do not).
    var sent: Command.Intent?
}

/// A device's status message as received.
struct ReportedStatus: Equatable {
    /// The message, decoded.
    var message: StatusMessage
    /// The message as received.
    var payload: [UInt8]
}

/// An activity envelope as received: its header always, its content when it is a location activity.
struct ReportedEnvelope: Equatable {
    /// The routing keys, valid for any attributes type.
    var header: EnvelopeHeader
    /// The whole envelope, for a location activity.
    var location: ActivityEnvelope<LocationActivityAttributes>?
    /// The envelope as received.
    var payload: [UInt8]

    /// Decodes an envelope.
    ///
    /// - Throws: `ActivityError` `.invalidPayload` when it breaks the activity schema.
    init(payload: [UInt8]) throws(ActivityError) {
        let data = Data(payload)
        header = try WireCodec.decode(EnvelopeHeader.self, from: data)
        location =
            header.attributesType == LocationActivityAttributes.typeName
            ? try WireCodec.decode(ActivityEnvelope<LocationActivityAttributes>.self, from: data) : nil
        self.payload = payload
    }
}
