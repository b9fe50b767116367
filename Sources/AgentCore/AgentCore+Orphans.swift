import Foundation
import LiveActivity

extension AgentCore {
    /// A retained message on one of this device's activity topics: one the agent does not know
    /// is an orphan (its state was lost, or another process published it), ended and cleared.
    /// Not while another agent uses this device id: the activity is most likely its own, and
    /// ending it would make the two undo each other's activities.
    mutating func reconcile(activityID: String, payload: [UInt8], now: Date, into batch: inout Batch) {
        guard !payload.isEmpty, !conflict.isDetected, !trips.contains(where: { $0.id == activityID }),
            pendingClears[activityID] == nil, !finished.contains(activityID)
        else { return }
        finished.insert(activityID)
        let envelope = try? WireCodec.decode(ActivityEnvelope<Attributes>.self, from: Data(payload))
        batch.log(
            .warning, "Ending and clearing an activity this agent does not know",
            [
                "myeline.activity": activityID,
                "myeline.reason": envelope == nil ? "its retained message does not decode" : "no saved state",
            ])
        if let envelope, envelope.header.event != .end {
            batch.envelopes.append(.envelope(envelope.ended(at: now), expiry: nil))
        }
        batch.envelopes.append(.clear(activityID: activityID))
    }

    /// An activity's retained envelope is cleared: it is over, and its record, if it has one, goes.
    mutating func forget(_ activityID: String, into batch: inout Batch) {
        trips.removeAll { $0.id == activityID }
        pendingClears[activityID] = nil
        finished.insert(activityID)
        if records.remove(activityID) != nil { batch.actions.append(.removeState(activityID: activityID)) }
    }
}
