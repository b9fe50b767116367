import Foundation
import LiveActivity

/// The delivery tracker's activity: an order on its way, its progress and the minutes left.
public struct DeliveryAttributes: ActivityAttributes {
    /// A type of this example's own, named with a reversed domain name (docs/topics.md).
    public static let typeName = "com.example.delivery"

    /// What the server pushes.
    public struct ContentState: Codable, Hashable, Sendable {
        /// How much of the way is done, in percent, 0...100.
        public var progress: Int
        /// Minutes until the delivery, 0 once delivered.
        public var minutesToDelivery: Int

        /// A content state.
        public init(progress: Int, minutesToDelivery: Int) {
            self.progress = progress
            self.minutesToDelivery = minutesToDelivery
        }
    }

    /// The order, such as `A-1042`.
    public var orderNumber: String

    /// The attributes of an order.
    public init(orderNumber: String) {
        self.orderNumber = orderNumber
    }
}

/// A push from the server, with the keys of an ActivityKit push payload: `event` (`update` or
/// `end`), `content-state`, `timestamp`, and for `end` a `dismissal-date` (epoch seconds).
public struct DeliveryPush: Codable, Hashable, Sendable {
    /// `update` or `end`.
    public var event: String
    /// The new content.
    public var contentState: DeliveryAttributes.ContentState
    /// When the server sent it, epoch seconds.
    public var timestamp: Double
    /// For `end`: when the activity is dismissed, epoch seconds.
    public var dismissalDate: Double?

    enum CodingKeys: String, CodingKey {
        case event, timestamp
        case contentState = "content-state"
        case dismissalDate = "dismissal-date"
    }

    /// A push.
    public init(
        event: String, contentState: DeliveryAttributes.ContentState, timestamp: Date, dismissalDate: Date? = nil
    ) {
        self.event = event
        self.contentState = contentState
        self.timestamp = timestamp.timeIntervalSince1970
        self.dismissalDate = dismissalDate?.timeIntervalSince1970
    }

    /// The topic the server pushes a device's deliveries to, outside Myeline's tree.
    public static func topic(device: DeviceID) -> String { "examples/delivery/\(device)/push" }
}
