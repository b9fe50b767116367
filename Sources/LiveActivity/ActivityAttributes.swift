/// The static description of a Live Activity, fixed when it starts, as in ActivityKit.
///
/// Conforming types go on the wire as the `attributes` object of an activity envelope, their
/// `ContentState` as its `content-state`, and `typeName` as its `attributes-type`.
public protocol ActivityAttributes: Codable, Hashable, Sendable {
    /// The dynamic part of the activity, replaced by every update.
    associatedtype ContentState: Codable & Hashable & Sendable

    /// The name of this attributes type on the wire (`attributes-type`), such as `"location"`.
    ///
    /// Use 1-64 characters a-z, 0-9, `.`, `_` or `-`, starting with a letter or digit; receivers
    /// reject other names.
    static var typeName: String { get }
}
