/// An alert shown with an update, as in ActivityKit: a title, a body and an optional sound.
///
/// On the wire it is the envelope's `alert` object: `{"title", "body", "sound"?}`.
public struct AlertConfiguration: Hashable, Sendable, Codable {
    /// The wire keys, declared (not synthesized) so that `init(json:at:)` reads the same ones.
    package enum CodingKeys: String, CodingKey {
        case title, body, sound
    }

    /// The alert's title.
    public var title: String
    /// The alert's text.
    public var body: String
    /// The name of a sound to play; nil means the receiver's default alert sound.
    public var sound: String?

    /// Creates an alert with a title, a body and an optional sound name.
    public init(title: String, body: String, sound: String? = nil) {
        self.title = title
        self.body = body
        self.sound = sound
    }
}
