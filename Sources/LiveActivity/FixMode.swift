/// The kind of satellite fix, as gpsd reports it; `none`, `2d` or `3d` on the wire.
public enum FixMode: String, CaseIterable, Codable, Hashable, Sendable {
    /// No fix: the position, if any, is not current (`none`).
    case noFix = "none"
    /// A horizontal fix without altitude (`2d`).
    case fix2D = "2d"
    /// A fix with altitude (`3d`).
    case fix3D = "3d"

    /// Decodes the mode, naming the accepted values when the string is none of them.
    public init(from decoder: any Decoder) throws {
        self = try decoder.decodeEnum()
    }
}
