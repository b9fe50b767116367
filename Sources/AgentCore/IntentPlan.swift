import LiveActivity

/// What the agent does for a command, decided from the command and the ids of its running
/// (not ended) activities alone: no I/O, so it is tested as a table.
public enum IntentPlan: Hashable, Sendable {
    /// Start a new activity, with the id the command asked for (nil: a new UUID).
    case start(id: String?)
    /// Nothing to change: answer success, naming this activity (a `start` while one runs).
    case answer(activity: String)
    /// End this activity.
    case stop(String)
    /// Pause this activity's trip.
    case pause(String)
    /// Resume this activity's trip.
    case resume(String)
    /// Publish the status and this activity (if any) again.
    case report(String?)
    /// Refuse, for this reason.
    case refuse(String)

    /// The plan for `command` when `running` (oldest first) are the device's running activities.
    ///
    /// A command names its activity with `activity`, or means the newest running one. A `start`
    /// answers with the running activity unless `new` asks for another; `new` is refused on other
    /// intents. Pause and resume of a trip already in that state are carried out (they change nothing).
    public init(_ command: Command, running: [String]) {
        if command.new && command.intent != .start {
            self = .refuse("\"new\" applies to start only, not to \(command.intent.rawValue)")
            return
        }
        if let named = command.activity, command.intent != .start, !running.contains(named) {
            self = .refuse("no running activity \"\(named)\" on this device")
            return
        }
        let target = command.activity ?? running.last
        switch command.intent {
        case .start:
            if let named = command.activity, running.contains(named) {
                self = .answer(activity: named)
            } else if let newest = running.last, !command.new {
                self = .answer(activity: newest)
            } else {
                self = .start(id: command.activity)
            }
        case .report:
            self = .report(target)
        case .stop, .pause, .resume:
            guard let target else {
                self = .refuse("no activity is running; start one first")
                return
            }
            self =
                switch command.intent {
                case .stop: .stop(target)
                case .pause: .pause(target)
                default: .resume(target)
                }
        }
    }
}
