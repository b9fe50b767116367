import LiveActivity
import Location

extension FixMode {
    /// The wire fix mode of a location source's fix mode: `none`, `2d` or `3d`.
    public init(_ mode: LocationFixMode) {
        switch mode {
        case .none: self = .noFix
        case .twoDimensional: self = .fix2D
        case .threeDimensional: self = .fix3D
        }
    }
}
