import ServiceLifecycle

/// Runs a service's task on an executor of the agent's (its spool's thread): the control loop
/// hands the service its work, and the service takes it there, in the same turn of that thread,
/// rather than on a thread of the cooperative pool woken for it (issue 24).
struct PreferringExecutor<Wrapped: Service & CustomStringConvertible>: Service, CustomStringConvertible {
    let service: Wrapped
    let executor: any TaskExecutor

    /// What service-lifecycle logs for this service: the wrapped service's name.
    var description: String { service.description }

    func run() async throws {
        try await withTaskExecutorPreference(executor) { try await service.run() }
    }
}
