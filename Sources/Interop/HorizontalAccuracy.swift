/// The horizontal accuracy the integrations publish with every position: OwnTracks `acc` and Home
/// Assistant's `gps_accuracy`, in metres, always greater than zero.
///
/// Both tools need one: Home Assistant's OwnTracks integration drops a location without `acc` (or
/// with 0), and its MQTT tracker shows a missing `gps_accuracy` as 0 m. Many sources have none: a
/// GPX track, an NMEA receiver without GST. So the figure is the receiver's own estimate when it
/// gives one (gpsd `eph`, NMEA GST), else an estimate from the horizontal dilution of precision,
/// else an assumption; ``basis`` says which (docs/integrations.md).
public struct HorizontalAccuracy: Hashable, Sendable {
    /// Where a figure comes from.
    public enum Basis: String, Hashable, Sendable {
        /// The receiver's own estimate.
        case receiver
        /// The HDOP times ``HorizontalAccuracy/metresPerHDOP``.
        case hdop
        /// Neither is known: ``HorizontalAccuracy/assumedMetres``.
        case assumed
    }

    /// The accuracy, metres, greater than zero.
    public let metres: Double
    /// Where it comes from.
    public let basis: Basis

    /// Metres of horizontal error per unit of HDOP: the user-equivalent range error of a consumer
    /// GNSS receiver without corrections, about one standard deviation.
    public static let metresPerHDOP = 5.0
    /// The accuracy assumed when neither the receiver's estimate nor the HDOP is known, metres: what
    /// ``metresPerHDOP`` gives for an HDOP of 2, a fair sky view.
    public static let assumedMetres = 10.0

    /// The accuracy of a fix from what its source reports: `receiver`, its own estimate in metres,
    /// and `hdop`. A value that is not finite and greater than zero counts as unknown.
    public init(receiver: Double?, hdop: Double?) {
        func known(_ value: Double?) -> Double? { value.flatMap { $0.isFinite && $0 > 0 ? $0 : nil } }
        if let receiver = known(receiver) {
            (metres, basis) = (receiver, .receiver)
        } else if let hdop = known(hdop) {
            (metres, basis) = (hdop * Self.metresPerHDOP, .hdop)
        } else {
            (metres, basis) = (Self.assumedMetres, .assumed)
        }
    }
}
