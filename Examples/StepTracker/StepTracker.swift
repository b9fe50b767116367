// The step tracker seed on Linux: a goal, steps, distance, floors, elapsed time, pause and resume,
// about one update a second, and the end at the goal. The steps are derived from a GPX walk
// replayed from its file (a stride of 0.75 m; a floor per 3 m climbed; paused while standing still).
import ArgumentParser
import Foundation
import LiveActivity
import LiveActivityMQTT
import Location
import Logging
import MQTT
import Tracking

/// A walk's activity: its goal in steps.
struct StepAttributes: ActivityAttributes {
    /// A type of this example's own, named with a reversed domain name (docs/topics.md).
    static let typeName = "com.example.steps"

    struct ContentState: Codable, Hashable, Sendable {
        var steps: Int
        /// Metres walked.
        var distance: Double
        var floors: Int
        /// Seconds walked, pauses excluded.
        var elapsedSeconds: Double
        var isPaused: Bool
    }

    var name: String
    var goal: Int
}

/// The pedometer: turns fixes into the walk's totals, a pure value.
struct Pedometer {
    static let stride = 0.75, floorHeight = 3.0, standingSpeed = 0.3, standingTime = 20.0

    var state = StepAttributes.ContentState(steps: 0, distance: 0, floors: 0, elapsedSeconds: 0, isPaused: false)
    private var last: LocationFix?
    private var climbed = 0.0
    private var stillSince: Date?

    /// Takes a fix: distance and climb from the previous one, paused after `standingTime` s still.
    mutating func add(_ fix: LocationFix) {
        defer { last = fix }
        guard let last else { return }
        let metres = Coordinate(last).distance(to: Coordinate(fix))
        let seconds = max(0, fix.time.timeIntervalSince(last.time))
        if seconds > 0, metres / seconds < Self.standingSpeed {
            stillSince = stillSince ?? last.time
            state.isPaused = fix.time.timeIntervalSince(stillSince ?? fix.time) >= Self.standingTime
        } else {
            stillSince = nil
            state.isPaused = false
        }
        guard !state.isPaused else { return }
        state.elapsedSeconds += seconds
        state.distance += metres
        state.steps = Int(state.distance / Self.stride)
        if let from = last.altitude, let to = fix.altitude, to > from { climbed += to - from }
        state.floors = Int(climbed / Self.floorHeight)
    }
}

@main
struct StepTracker: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "example-steps", abstract: "A walk's step count as a Live Activity, ending at its goal.")

    @Option(help: "The broker, such as mqtt://localhost.") var broker: String
    @Option(help: "This device's id, such as phone-1.") var device: String
    @Option(help: "The walk: a GPX track with times (or any recording Location reads).") var file: String
    @Option(help: "The goal in steps.") var goal = 10_000
    @Option(help: "How many times faster than recorded to replay the walk.") var speed = 1.0

    func run() async throws {
        let device = try DeviceID(device)
        let center = ActivityCenter(clock: SystemWallClock())
        let walk = try FileSource(path: file, options: .init(pacing: .scaled(speed))).updates
        let mqtt = MQTTConfiguration(broker: try BrokerAddress(parsing: broker), clientID: "example-steps-\(device)")
        try await ActivityPublisher.withPublisher(
            configuration: mqtt, device: device, center: center, logger: Logger(label: "example-steps")
        ) { _ in
            var pedometer = Pedometer()
            let activity = try center.request(
                attributes: StepAttributes(name: "Walk", goal: goal),
                content: ActivityContent(state: pedometer.state, staleDate: nil))
            var published: Date?
            for try await fix in walk.compactMap(\.fix) {
                pedometer.add(fix)
                // About one update a second of the walk, and every pause and resume.
                let changed = pedometer.state.isPaused != activity.content.state.isPaused
                guard changed || published.map({ fix.time.timeIntervalSince($0) >= 1 }) ?? true else { continue }
                published = fix.time
                if pedometer.state.steps >= goal {
                    try activity.end(ActivityContent(state: pedometer.state, staleDate: nil), dismissalPolicy: .default)
                    print(
                        "goal of \(goal) steps reached: \(pedometer.state.steps) steps, \(pedometer.state.floors) floors"
                    )
                    return
                }
                try activity.update(ActivityContent(state: pedometer.state, staleDate: nil))
            }
            try activity.end(nil, dismissalPolicy: .default)
            print("walk ended before the goal: \(pedometer.state.steps) of \(goal) steps")
        }
    }
}
