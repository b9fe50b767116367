import ServiceLifecycle

/// A service that may end on its own (the location source at a replay's end, the start-up trim,
/// the integrations), made to return only when the group stops it.
///
/// `ServiceGroup` takes a service that returns during the group's graceful shutdown before its
/// turn to be stopped for one that ended unexpectedly (`serviceFinishedUnexpectedly`), whatever
/// its `successTerminationBehavior`, and the agent exits with status 1 (`UntilShutdownTests`).
/// A replay's feeder that returns after the control loop has wound down is the likely case: two
/// stress runs of the integration tests saw a replay's agent exit with status 1 at its end. Any
/// service that can end on its own is wrapped, so that none can. Done early, it waits for its turn.
struct UntilShutdown<Wrapped: Service & CustomStringConvertible>: Service, CustomStringConvertible {
    let service: Wrapped

    /// What service-lifecycle logs for this service: the wrapped service's name.
    var description: String { service.description }

    func run() async throws {
        try await service.run()
        // Cancelled (the group failed or was cancelled) rather than stopped: return all the same.
        try? await gracefulShutdown()
    }
}
