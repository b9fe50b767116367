import AgentCore
import AsyncSupport
import ServiceLifecycle

/// Runs the storage's group commit every `storage.sync-interval` (``AgentStorage/commit(final:)``),
/// sleeping on a timer of the storage's event loop (the spool's thread, where it runs),
/// and tells the control loop when writing the journal starts or stops failing (a full card), so
/// that the agent says so once, in its log and its status.
///
/// Graceful shutdown: returns at once; the control loop's wind-down makes the last commit
/// (``AgentStorage/close()``).
struct StorageCommitter: Service, CustomStringConvertible {
    /// What service-lifecycle logs for this service.
    var description: String { "StorageCommitter" }

    let storage: AgentStorage
    let interval: Duration
    let inbox: AgentInbox

    func run() async {
        let (storage, interval, inbox) = (storage, interval, inbox)
        // Cancelled once on graceful shutdown, the whole loop, rather than each sleep: each
        // `cancelWhenGracefulShutdown` ends through an actor of service-lifecycle's and a task
        // on Swift's pool, which woke (and, idle 5 s, started) a Dispatch worker every commit
        // (issue 24). A commit under way when it comes runs to its end.
        try? await cancelWhenGracefulShutdown {
            var failing = false
            while true {
                try await storage.spoolExecutor.sleep(for: interval)
                let failure = await storage.commit()
                guard (failure != nil) != failing else { continue }
                failing = failure != nil
                inbox.post(.persisted(failure: failure, dropped: await storage.droppedCount()))
            }
        }
    }
}
