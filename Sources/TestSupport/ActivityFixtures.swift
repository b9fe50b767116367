import Foundation
import LiveActivity

/// Sample values shared by the tests of the activity model and the wire: one trip of van 7, dated
/// from epoch 1 700 000 000.
public enum Fixtures {
    /// The start of every test: 2023-11-14 22:13:20 UTC.
    public static let t0 = Date(timeIntervalSince1970: 1_700_000_000)
    /// How error messages say to write device and activity ids.
    public static let idRule = "use 1-64 characters a-z, 0-9, '.', '_' or '-', starting with a letter or digit"
    /// The id of the sample activity.
    public static let activityID = "3f2b8c1e-0d4a-4e59-9a57-2f1c7b5d9e10"

    public static func device() throws -> DeviceID {
        try DeviceID("van-7")
    }

    /// Attributes with every optional field set.
    public static func attributes() throws -> LocationActivityAttributes {
        LocationActivityAttributes(
            deviceID: try device(), name: "Van 7", vehicle: "B-MY 1234", driver: "Ana",
            destination: .init(name: "Depot North", latitude: 52.5651, longitude: 13.3343))
    }

    /// A content state with every optional field set.
    public static let fullState = LocationActivityAttributes.ContentState(
        latitude: 52.520008, longitude: 13.404954, altitude: 34.5, speed: 12.25, course: 87.5,
        horizontalAccuracy: 4.8, fix: .fix3D, satellites: 9, fixTime: t0.addingTimeInterval(59.5), distance: 1234.5,
        elapsed: 600, paused: false, progress: 0.25, eta: t0.addingTimeInterval(1800))

    /// A center on a manual clock at ``t0``.
    public static func center(maximumActivities: Int = 8) -> (ActivityCenter, ManualWallClock) {
        let clock = ManualWallClock(now: t0)
        return (ActivityCenter(clock: clock, maximumActivities: maximumActivities), clock)
    }

    /// Starts the sample activity without location, never stale.
    public static func startActivity(
        in center: ActivityCenter, staleDate: Date? = nil, id: String = activityID
    ) throws -> Activity<LocationActivityAttributes> {
        try center.request(
            attributes: try attributes(),
            content: ActivityContent(state: LocationActivityAttributes.ContentState(), staleDate: staleDate), id: id)
    }
}

/// A second attributes type, to check that centers and envelopes keep types apart.
public struct TimerAttributes: ActivityAttributes {
    public static let typeName = "timer"

    /// The seconds counted.
    public struct ContentState: Codable, Hashable, Sendable {
        public var seconds: Int

        /// Creates a state.
        public init(seconds: Int) { self.seconds = seconds }
    }

    public var label: String

    /// Creates the attributes.
    public init(label: String) { self.label = label }
}

/// An attributes type of another program, named as docs/topics.md says (a reversed domain name):
/// a pin on a map with a note, as in the documented example.
public struct PinAttributes: ActivityAttributes {
    public static let typeName = "com.example.pin"

    /// A count and a note.
    public struct ContentState: Codable, Hashable, Sendable {
        public var count: Int
        public var note: String

        /// Creates a state.
        public init(count: Int, note: String) {
            self.count = count
            self.note = note
        }
    }

    public var label: String

    /// Creates the attributes.
    public init(label: String) { self.label = label }
}

extension AsyncSequence where Failure == Never {
    /// Every element until the sequence finishes.
    public func collect() async -> [Element] {
        var elements: [Element] = []
        for await element in self { elements.append(element) }
        return elements
    }

    /// The first `count` elements (fewer if the sequence finishes first).
    public func first(_ count: Int) async -> [Element] {
        var elements: [Element] = []
        for await element in self {
            elements.append(element)
            if elements.count == count { break }
        }
        return elements
    }
}
