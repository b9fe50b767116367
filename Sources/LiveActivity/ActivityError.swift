/// The error of the LiveActivity module: a code to match on and a message naming the values at fault.
public struct ActivityError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What kind of mistake happened; compare with the static members, such as `.activityEnded`.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private let name: String

        /// The activity has ended (or been dismissed) and cannot be updated or ended again.
        public static let activityEnded = Code(name: "activityEnded")
        /// Starting another activity would exceed the center's maximum of live activities.
        public static let tooManyActivities = Code(name: "tooManyActivities")
        /// A live activity already has the requested id.
        public static let duplicateActivityID = Code(name: "duplicateActivityID")
        /// An activity id does not follow the identifier syntax.
        public static let invalidActivityID = Code(name: "invalidActivityID")
        /// An attributes type's name (`typeName`) does not follow the identifier syntax.
        public static let invalidAttributesType = Code(name: "invalidAttributesType")
        /// A content state takes more than 4 KiB as JSON, ActivityKit's limit on an activity's
        /// dynamic data (``ActivityModel/maximumContentStateSize``).
        public static let contentTooLarge = Code(name: "contentTooLarge")
        /// A device id does not follow the identifier syntax.
        public static let invalidDeviceID = Code(name: "invalidDeviceID")
        /// A topic prefix is not a valid MQTT topic prefix.
        public static let invalidTopicPrefix = Code(name: "invalidTopicPrefix")
        /// A command request id is empty or longer than 128 characters.
        public static let invalidCommandID = Code(name: "invalidCommandID")
        /// A payload does not follow its schema, or a value cannot be encoded.
        public static let invalidPayload = Code(name: "invalidPayload")

        /// The code's name, such as `activityEnded`.
        public var description: String { name }
    }

    /// What kind of mistake happened.
    public let code: Code
    /// A readable explanation naming the values at fault and, where there is one, the fix.
    public let message: String

    /// The message.
    public var description: String { message }

    /// Creates an error of `code` with a message that names the values at fault and the fix.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }
}
