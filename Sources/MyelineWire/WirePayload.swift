import LiveActivity

/// A message body that names its schema in a `schema` key, such as `"myeline.activity.v1"`.
///
/// Schema names are `myeline.PAYLOAD.vMAJOR`. Adding an optional key keeps the name; removing or
/// renaming a key, changing a type, unit or meaning, or adding a required key bumps the major
/// version. Receivers ignore keys they do not know and reject other schema names.
public protocol WirePayload: Sendable {
    /// The schema name this type encodes and accepts, such as `"myeline.status.v1"`.
    static var schema: String { get }
}
