import FoundationEssentials
import Logging
import LiveActivity
import MyelineWire

extension AgentCore {
    /// The most unknown retained activities one process ends and clears: more than any agent
    /// leaves behind (`activity.max-activities` is at most 64), so that a flood of retained
    /// envelopes under this device's topics (its own credentials in a hostile hand) costs the
    /// agent a bounded number of publishes and a bounded memory.
    public static let maximumOrphans = 64

    /// A retained message on one of this device's activity topics: one the agent does not know
    /// is an orphan (its state was lost, or another process published it), ended and cleared.
    /// Not while another agent uses this device id: the activity is most likely its own, and
    /// ending it would make the two undo each other's activities. Nor an activity of another
    /// attributes type: the agent runs location activities only, and one of another type is a
    /// program's on this device (docs/library.md), not the agent's to end. Past
    /// ``maximumOrphans``, an orphan is only counted (``ignoredOrphans``) and stays on the broker.
    mutating func reconcile(activityID: String, payload: [UInt8], now: Date, into batch: inout Batch) {
        guard !payload.isEmpty, !conflict.isDetected, !activities.contains(where: { $0.id == activityID }),
            pendingClears[activityID] == nil, !finished.contains(activityID)
        else { return }
        if let header = try? WireCodec.decode(EnvelopeHeader.self, from: Data(payload)),
            header.attributesType != Attributes.typeName
        {
            return
        }
        guard orphansEnded < Self.maximumOrphans else {
            ignoredOrphans += 1
            return
        }
        orphansEnded += 1
        finished.insert(activityID)
        let envelope = try? WireCodec.decode(ActivityEnvelope<Attributes>.self, from: Data(payload))
        batch.log(
            .warning, "agent.orphan.cleared", "Ending and clearing an activity this agent does not know",
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
        activities.removeAll { $0.id == activityID }
        pendingClears[activityID] = nil
        finished.insert(activityID)
        if records.remove(activityID) != nil { batch.actions.append(.removeState(activityID: activityID)) }
    }

    /// Logs, once per process, that orphans were left alone past ``maximumOrphans``: at the end
    /// of the first batch that met them, with their count so far.
    mutating func reportIgnoredOrphans(into batch: inout Batch) {
        guard ignoredOrphans > 0, !ignoredOrphansLogged else { return }
        ignoredOrphansLogged = true
        batch.log(
            .warning,
            "agent.orphans.too-many",
            "Too many unknown retained activities on this device's topics: the rest stay on the broker; remove them there (docs/security.md)",
            [
                "myeline.orphans.ended": "\(orphansEnded)", "myeline.orphans.ignored": "\(ignoredOrphans)",
                "myeline.device": settings.device.rawValue,
            ])
    }
}
