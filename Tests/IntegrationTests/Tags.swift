import Testing

extension Tag {
    /// A test that starts real servers and processes (mosquitto, gpsd, the agents, the board, Home
    /// Assistant) in a temporary directory: every suite of this target carries it.
    @Tag static var integration: Self
    /// A test that takes 30 s or more, most of it waiting for what it proves (an outage, a restart,
    /// a stalled reader); scripts/test's integration step runs them beside the others.
    @Tag static var slow: Self
}
