import Foundation
import LiveActivity

extension AgentCore {
    /// Carries out a command (``IntentPlan``) and replies; what it changed is saved and published
    /// before the reply.
    mutating func execute(_ command: Command, now: Date, into batch: inout Batch) {
        let plan = IntentPlan(command, running: trips.filter(\.isRunning).map(\.id))
        let result: CommandResult
        switch plan {
        case .start(let id):
            do throws(ActivityError) {
                let started = try start(id: id, now: now, into: &batch)
                result = .success(for: command, activity: started, timestamp: now)
            } catch {
                result = .failure(for: command, error: error.message, timestamp: now)
            }
        case .answer(let activity):
            result = .success(for: command, activity: activity, timestamp: now)
        case .stop(let activity):
            stop(activity, now: now, into: &batch)
            result = .success(for: command, activity: activity, timestamp: now)
        case .pause(let activity), .resume(let activity):
            if let index = trips.firstIndex(where: { $0.id == activity }) {
                let output =
                    plan == .pause(activity)
                    ? trips[index].tracker.pause(now: now) : trips[index].tracker.resume(now: now)
                collect(output, at: index, into: &batch)
                trips[index].unsaved = true
                trips[index].milestone = true
            }
            result = .success(for: command, activity: activity, timestamp: now)
        case .report(let activity):
            // The status again, as it stands: `since` stays the connection's.
            publishOnline(now: now, into: &batch)
            if let activity, let index = trips.firstIndex(where: { $0.id == activity }) {
                trips[index].pending = Trip.Pending(content: trips[index].tracker.content(now: now))
                trips[index].unsaved = true
            }
            result = .success(for: command, activity: activity, timestamp: now)
        case .refuse(let reason):
            result = .failure(for: command, error: reason, timestamp: now)
        }
        flush(now: now, into: &batch)
        batch.log(
            .info, result.ok ? "Command carried out" : "Command refused",
            [
                "myeline.command": command.id, "myeline.intent": command.intent.rawValue,
                "myeline.activity": result.activity ?? "-", "myeline.reason": result.error ?? "-",
            ])
        batch.actions.append(.publish(.reply(result)))
    }
}
