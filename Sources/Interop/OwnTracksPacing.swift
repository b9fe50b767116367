/// When the agent publishes its OwnTracks locations: at most one per second of `tst`, the newest fix
/// of that second. Pure; the agent's integration link performs the steps.
///
/// `tst` is whole seconds, and OwnTracks Recorder (like Myeline's board) keeps the first of several
/// locations with one `tst`: publishing every fix of a 5 Hz receiver made their "last position"
/// the first fix of the last second. So a location is held until its second is over: until a fix
/// of another second arrives, or ``holdTime`` after the first fix of its second arrived (then the
/// agent calls ``flush(now:)``), whichever comes first. A fix of a second already published is
/// dropped, so every `tst` the agent publishes differs from the one before.
public struct OwnTracksPacing: Sendable {
    /// How long the location of a second is held at most, from the arrival of that second's first
    /// fix: a second's fixes arrive within it.
    public static let holdTime = Duration.seconds(1)

    /// The newest location of the second in progress, and when it is due.
    private var held: (location: OwnTracksLocation, due: ContinuousClock.Instant)?
    /// The last location published.
    private var published: OwnTracksLocation?

    /// Nothing held, nothing published.
    public init() {}

    /// What to do after a fix.
    public struct Step: Hashable, Sendable {
        /// A location to publish now: the previous second's, complete.
        public var publish: OwnTracksLocation?
        /// When to call ``OwnTracksPacing/flush(now:)``: set when a new second's location is held.
        public var flushAt: ContinuousClock.Instant?

        /// Creates a step.
        public init(publish: OwnTracksLocation? = nil, flushAt: ContinuousClock.Instant? = nil) {
            self.publish = publish
            self.flushAt = flushAt
        }
    }

    /// Takes the location of a new fix, arrived at `now` (monotonic).
    public mutating func receive(_ location: OwnTracksLocation, now: ContinuousClock.Instant) -> Step {
        if let current = held, current.location.timestamp == location.timestamp {
            held = (location, current.due)
            return Step()
        }
        let complete = held?.location
        if let complete { published = complete }
        held = nil
        guard published?.timestamp != location.timestamp else { return Step(publish: complete) }
        let due = now + Self.holdTime
        held = (location, due)
        return Step(publish: complete, flushAt: due)
    }

    /// The held location if it is due at `now` (monotonic), now published; nil otherwise.
    public mutating func flush(now: ContinuousClock.Instant) -> OwnTracksLocation? {
        guard let current = held, current.due <= now else { return nil }
        held = nil
        published = current.location
        return current.location
    }

    /// The held location, published now whatever its due time (at a graceful shutdown, so that the
    /// last location published is the last fix); nil when none is held.
    public mutating func finish() -> OwnTracksLocation? {
        guard let current = held else { return nil }
        held = nil
        published = current.location
        return current.location
    }

    /// The location that answers a `reportLocation` command: the held one, published now (later fixes
    /// of its second are then dropped), or else the last published; nil before the first fix.
    public mutating func report() -> OwnTracksLocation? {
        finish() ?? published
    }
}
