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

    func run() async {
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
