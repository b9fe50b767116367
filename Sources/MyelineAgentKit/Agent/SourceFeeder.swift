import AgentCore
import Location
import ServiceLifecycle

/// Sends the location source's updates to the inbox, then ``AgentCore/AgentCore/Event/sourceEnded(failure:)``
/// when a replay ends or the source fails. A looped replay (`source.loop`) reads its file again
/// and again, with ``AgentCore/AgentCore/Event/sourceLap`` between two laps.
///
/// Graceful shutdown: stops reading at once and returns without an event (the control loop
/// shuts down on its own signal).
struct SourceFeeder: Service, CustomStringConvertible {
    /// What service-lifecycle logs for this service.
    var description: String { "SourceFeeder" }

    let source: any LocationSource
    let loops: Bool
    let inbox: AgentInbox
    /// Where the feeder runs: the control loop's executor (the spool's thread), so that a fix wakes
    /// that thread alone, which runs the feeder and then the loop, rather than a thread of Swift's
    /// pool that wakes the loop's (issue 24). `nil`: Swift's pool.
    let executor: (any TaskExecutor)?

    func run() async {
        await withTaskExecutorPreference(executor) { await feed() }
    }

    private func feed() async {
        do {
            // Cancelled once on graceful shutdown rather than through `cancelOnGracefulShutdown()`
            // on the updates, which merges them with the shutdown signal in tasks of its own:
            // three hops between tasks for every fix instead of one (issue 24).
            try await cancelWhenGracefulShutdown {
                while true {
                    for try await update in source.updates {
                        await inbox.send(.location(update))
                    }
                    if Task.isShuttingDownGracefully || Task.isCancelled { return }
                    guard loops else { break }
                    inbox.post(.sourceLap)
                }
                inbox.post(.sourceEnded(failure: nil))
            }
        } catch {
            if Task.isShuttingDownGracefully || Task.isCancelled { return }
            inbox.post(.sourceEnded(failure: "\(error)"))
        }
    }
}
