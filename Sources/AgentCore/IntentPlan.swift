import FoundationEssentials
import LiveActivity
import MyelineWire

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
    /// Apply the command's changes (destination, status, relevance, alert) to this activity.
    case update(String)
    /// Publish the status and this activity (if any) again.
    case report(String?)
    /// Refuse, for this reason.
    case refuse(String)

    /// The plan for `command` when `running` (oldest first) are the device's running activities
    /// and `ended` its ended ones not yet dismissed.
    ///
    /// A command names its activity with `activity`, or means the newest running one. A `start`
    /// answers with the running activity unless `new` asks for another (and is refused when it
    /// carries attributes, a status or a relevance score, which the answer would drop); `new` is
    /// refused on other intents. Pause and resume of a trip already in that state are carried out (they change nothing).
    /// The changes a command carries are checked as the configuration checks its keys
    /// (``problem(with:)``); an `update` of an ended activity is refused.
    public init(_ command: Command, running: [String], ended: [String] = []) {
        if command.new && command.intent != .start {
            self = .refuse("\"new\" applies to start only, not to \(command.intent.rawValue)")
            return
        }
        if let problem = Self.problem(with: command) {
            self = .refuse(problem)
            return
        }
        if let named = command.activity, command.intent == .update, ended.contains(named) {
            self = .refuse("activity \"\(named)\" has ended: an update cannot change it")
            return
        }
        if let named = command.activity, command.intent != .start, !running.contains(named) {
            self = .refuse("no running activity \"\(named)\" on this device")
            return
        }
        let target = command.activity ?? running.last
        switch command.intent {
        case .start:
            // The running activity a start answers with, if it does not start one.
            let answer: String?
            if let named = command.activity, running.contains(named) {
                answer = named
            } else {
                answer = command.new ? nil : running.last
            }
            let carriesChanges = command.attributes != nil || command.status != nil || command.relevanceScore != nil
            switch (answer, carriesChanges) {
            case (let running?, true):
                // Answering with the running one would drop what the start carries.
                self = .refuse(
                    "activity \"\(running)\" is running: a start does not change it; send update, or start with new")
            case (let running?, false): self = .answer(activity: running)
            case (nil, _): self = .start(id: command.activity)
            }
        case .report:
            self = .report(target)
        case .stop, .pause, .resume, .update:
            guard let target else {
                self = .refuse("no activity is running; start one first")
                return
            }
            self =
                switch command.intent {
                case .stop: .stop(target)
                case .pause: .pause(target)
                case .update: .update(target)
                default: .resume(target)
                }
        }
    }

    /// The relevance scores a command may set: those of `device.priority`, -1,000,000...1,000,000.
    public static let relevanceRange: ClosedRange<Double> = -1e6...1e6

    /// Why the changes `command` carries cannot be carried out, as the configuration would say it
    /// of its keys; nil when they can. Each change belongs to an intent (`attributes` to `start`,
    /// `destination` and `alert` to `update`, `status` and `relevance-score` to both), no text is
    /// empty, the relevance score is in ``relevanceRange``, and an `update` changes something.
    public static func problem(with command: Command) -> String? {
        let intent = command.intent
        let misplaced: [(String, Bool, Set<Command.Intent>)] = [
            ("attributes", command.attributes != nil, [.start]),
            ("destination", command.destination != nil, [.update]),
            ("alert", command.alert != nil, [.update]),
            ("status", command.status != nil, [.start, .update]),
            ("relevance-score", command.relevanceScore != nil, [.start, .update]),
        ]
        for (key, given, intents) in misplaced where given && !intents.contains(intent) {
            let names = intents.map(\.rawValue).sorted().joined(separator: " and ")
            return "\"\(key)\" applies to \(names) only, not to \(intent.rawValue)"
        }
        let texts: [(String, String?)] = [
            ("attributes.name", command.attributes?.name), ("attributes.vehicle", command.attributes?.vehicle),
            ("attributes.driver", command.attributes?.driver),
            ("attributes.destination.name", command.attributes?.destination?.name),
            ("destination.name", command.destination?.name), ("status", command.status),
            ("alert.title", command.alert?.title), ("alert.body", command.alert?.body),
        ]
        if let (key, _) = texts.first(where: { $0.1?.allSatisfy(\.isWhitespace) == true }) {
            return "\"\(key)\" is empty: give a value or leave the key out"
        }
        if let score = command.relevanceScore, !relevanceRange.contains(score) {
            return "\"relevance-score\" \(score) is outside -1000000...1000000"
        }
        if intent == .update, command.destination == nil, command.status == nil, command.relevanceScore == nil,
            command.alert == nil
        {
            return "an update needs a change: give destination, status, relevance-score or alert"
        }
        return nil
    }
}
