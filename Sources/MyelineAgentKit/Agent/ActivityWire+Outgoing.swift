import AgentCore
import LiveActivity
import MyelineWire

extension ActivityWire {
    /// The message of one of the core's outgoing messages.
    ///
    /// - Throws: `ActivityError` `.invalidPayload` when it cannot be encoded as receivers accept it.
    func message(for outgoing: AgentCore.Outgoing) throws(ActivityError) -> WireMessage {
        switch outgoing {
        case .envelope(let envelope, let expiry): try message(for: envelope, expiry: expiry)
        case .clear(let activityID): clear(activityID: activityID)
        case .status(let status): try message(for: status)
        case .reply(let result): try message(for: result)
        }
    }
}
