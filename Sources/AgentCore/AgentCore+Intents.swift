import FoundationEssentials
import Logging
import LiveActivity
import MyelineWire
import Tracking

extension AgentCore {
    /// Carries out a command (``IntentPlan``) and replies; what it changed is saved and published
    /// before the reply.
    mutating func execute(_ command: Command, now: Date, into batch: inout Batch) {
        let plan = IntentPlan(
            command, running: activities.filter(\.isRunning).map(\.id),
            ended: activities.filter { !$0.isRunning }.map(\.id) + pendingClears.keys.sorted())
        let result: CommandResult
        switch plan {
        case .start(let id):
            do throws(ActivityError) {
                let started = try start(id: id, command: command, now: now, into: &batch)
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
            if let index = activities.firstIndex(where: { $0.id == activity }) {
                let output =
                    plan == .pause(activity)
                    ? activities[index].tracker.pause(now: now) : activities[index].tracker.resume(now: now)
                collect(output, at: index, into: &batch)
                activities[index].unsaved = true
                activities[index].milestone = true
            }
            result = .success(for: command, activity: activity, timestamp: now)
        case .update(let activity):
            result = update(activity, with: command, now: now, into: &batch)
        case .report(let activity):
            // The status again, as it stands: `since` stays the connection's.
            publishOnline(now: now, into: &batch)
            if let activity, let index = activities.firstIndex(where: { $0.id == activity }) {
                activities[index].pending = RunningActivity.Pending(
                    content: activities[index].tracker.content(now: now))
                activities[index].unsaved = true
            }
            result = .success(for: command, activity: activity, timestamp: now)
        case .refuse(let reason):
            result = .failure(for: command, error: reason, timestamp: now)
        }
        flush(now: now, into: &batch)
        batch.log(
            .info, result.ok ? "agent.command.done" : "agent.command.refused",
            result.ok ? "Command carried out" : "Command refused",
            [
                "myeline.command": command.id, "myeline.intent": command.intent.rawValue,
                "myeline.activity": result.activity ?? "-", "myeline.reason": result.error ?? "-",
            ])
        batch.actions.append(.publish(.reply(result)))
    }

    /// Applies an `update` command's changes to a running activity (a push update): its
    /// destination, status text and relevance score from now on, published with the command's
    /// alert; refused, changing nothing, when the content would be over 4 KiB.
    private mutating func update(_ activity: String, with command: Command, now: Date, into batch: inout Batch)
        -> CommandResult
    {
        guard let index = activities.firstIndex(where: { $0.id == activity }) else {
            return .failure(for: command, error: "no running activity \"\(activity)\" on this device", timestamp: now)
        }
        var tracker = activities[index].tracker
        let changes = Tracker.Remote(
            destination: command.destination, status: command.status, relevanceScore: command.relevanceScore)
        var output = tracker.change(changes, alerting: command.alert != nil, now: now)
        do throws(ActivityError) {
            try ActivityModel<Attributes>.validateSize(of: tracker.content(now: now).state)
        } catch {
            return .failure(for: command, error: error.message, activity: activity, timestamp: now)
        }
        activities[index].tracker = tracker
        if let alert = command.alert { output.alert = alert }
        collect(output, at: index, into: &batch)
        activities[index].unsaved = true
        activities[index].milestone = true
        return .success(for: command, activity: activity, timestamp: now)
    }
}
