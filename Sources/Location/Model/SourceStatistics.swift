/// Why an input line (an NMEA sentence, a gpsd JSON line, a GPX element) was rejected.
public enum LineRejection: String, Hashable, Sendable, CaseIterable, Comparable {
    /// An NMEA sentence whose `*hh` checksum does not match its content.
    case badChecksum
    /// An NMEA sentence cut short: no `*hh` checksum, or another sentence starting inside it.
    case truncated
    /// Bytes that are not printable ASCII (binary receiver packets mixed into the stream).
    case binary
    /// A line longer than the limit (gpsd's 10,240 characters; 255 for an NMEA sentence).
    case tooLong
    /// A gpsd line that is not a well-formed JSON object.
    case notJSON
    /// A well-formed sentence or message with a field that cannot be read (a latitude of "4x").
    case invalidField
    /// A GPX document that is not well-formed XML; what came before the error is kept.
    case invalidXML
    /// A line that is none of the above: not NMEA, not JSON, not a comment.
    case unknown

    public static func < (lhs: LineRejection, rhs: LineRejection) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// Why the fix gate dropped a fix (see ``FixGate``).
public enum FixDropReason: String, Hashable, Sendable, CaseIterable, Comparable {
    /// Latitude or longitude is NaN or infinite.
    case nonFinite
    /// Latitude outside -90 ... 90 degrees.
    case latitudeOutOfRange
    /// Longitude outside -180 ... 180 degrees.
    case longitudeOutOfRange
    /// Exactly (0, 0), "null island", which receivers report when they have nothing (unless allowed).
    case nullIsland
    /// The same time as the previous fix: a repeated epoch.
    case duplicateTime
    /// Earlier than the previous fix.
    case timeWentBackwards
    /// A 2D/3D fix without a time (gpsd TPV, NMEA epoch), so it cannot be placed.
    case missingTime
    /// An NMEA epoch whose date never became known (no RMC or ZDA in the file, no fallback date).
    case missingDate
    /// The last NMEA epoch of a file, cut off before it had the sentences the epoch before it had.
    case incompleteEpoch
    /// With week-rollover correction on, a time before GPS time began (1980-01-06): not a rollover
    /// but garbage, such as a gpsd `"time":-1e300`.
    case beforeGPSEpoch
    /// A simulated fix (gpsd status 8, NMEA GGA quality 8 or mode indicator `S`): never a real
    /// position, so it becomes an update without a fix.
    case simulated

    public static func < (lhs: FixDropReason, rhs: FixDropReason) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// Counters of what a source read, used, rejected and dropped, and why; a snapshot (a value).
public struct SourceStatistics: Hashable, Sendable {
    /// Lines (or GPX points) read from the input, including rejected and ignored ones.
    public var linesRead = 0
    /// Bytes read from the input.
    public var bytesRead = 0
    /// Lines read and used: NMEA sentences of a supported type, gpsd TPV/SKY/VERSION/DEVICE(S)/ERROR messages.
    public var linesDecoded = 0
    /// Well-formed lines deliberately not used: comments, other NMEA sentences (GSV, proprietary),
    /// other gpsd classes (WATCH, GST, ATT, PPS, ...), NMEA pass-through in a gpsd capture.
    public var linesIgnored = 0
    /// Rejected lines, by reason.
    public var rejected: [LineRejection: Int] = [:]
    /// Updates yielded, with and without a fix.
    public var updates = 0
    /// Updates yielded with a fix.
    public var fixes = 0
    /// Fixes dropped by the gate (or before it), by reason.
    public var dropped: [FixDropReason: Int] = [:]
    /// Fix times moved forward by 1024 GPS weeks (receivers hit by the week-number rollover).
    public var weekRolloverCorrections = 0
    /// Non-finite optional values (altitude, speed, ...) cleared to `nil` by the gate.
    public var nonFiniteFieldsCleared = 0
    /// gpsd: connections that received gpsd's VERSION greeting.
    public var connections = 0
    /// gpsd: connection attempts that failed or connections that were lost (including silent ones).
    public var disconnections = 0
    /// gpsd: connections closed because gpsd said nothing for the silence timeout.
    public var silentTimeouts = 0
    /// gpsd: ERROR messages received.
    public var gpsdErrors = 0
    /// Live sources: updates discarded because the consumer fell behind by more than the buffer.
    public var updatesDiscarded = 0

    /// Creates empty statistics.
    public init() {}

    /// All rejected lines, whatever the reason.
    public var totalRejected: Int { rejected.values.reduce(0, +) }
    /// All dropped fixes, whatever the reason.
    public var totalDropped: Int { dropped.values.reduce(0, +) }
}
