import Locking

/// The acknowledgements of messages published in order (``MQTTClient/publishInOrder(_:)``), as
/// they arrive in any order: reports once how many of them, from the first, were acknowledged,
/// and the first failure, as soon as that is known (every message acknowledged, or all those
/// before a failure).
final class InOrderAcknowledgements: Sendable {
    typealias Completion = @Sendable (_ acknowledged: Int, _ failure: (any Error)?) -> Void

    private struct State {
        /// Per message: nil until its acknowledgement (or failure) arrives; then the failure, if any.
        var results: [Result<Void, any Error>?]
        /// The failure that stopped the submission after the messages counted here, if one did.
        var submitFailure: (any Error)?
        /// How many messages from the first were acknowledged.
        var leading = 0
        /// The outcome once known, until handed to the completion.
        var outcome: (acknowledged: Int, failure: (any Error)?)?
        var completion: Completion?
        var reported = false

        /// Hands the outcome to the completion once both are there; returns the call to make.
        mutating func take() -> (() -> Void)? {
            guard !reported, let outcome, let completion else { return nil }
            reported = true
            self.completion = nil
            return { completion(outcome.acknowledged, outcome.failure) }
        }
    }

    private let state: Locked<State>

    /// Follows `count` messages, after which the submission stopped with `submitFailure`, if it did.
    init(count: Int, submitFailure: (any Error)?) {
        state = Locked(State(results: Array(repeating: nil, count: count), submitFailure: submitFailure))
        if count == 0 { state.withLock { $0.outcome = (0, submitFailure) } }
    }

    /// Message `index` was acknowledged (`failure` nil) or failed.
    func resolve(_ index: Int, with failure: (any Error)?) {
        state.withLock { state -> (() -> Void)? in
            guard state.outcome == nil, state.results.indices.contains(index), state.results[index] == nil else {
                return nil
            }
            state.results[index] = failure.map { .failure($0) } ?? .success(())
            while state.leading < state.results.count, case .success? = state.results[state.leading] {
                state.leading += 1
            }
            if state.leading == state.results.count {
                state.outcome = (state.leading, state.submitFailure)
            } else if case .failure(let error)? = state.results[state.leading] {
                state.outcome = (state.leading, error)
            }
            return state.take()
        }?()
    }

    /// The caller stopped waiting: the outcome is what arrived so far, and a `CancellationError`.
    func cancel() {
        state.withLock { state -> (() -> Void)? in
            if state.outcome == nil { state.outcome = (state.leading, CancellationError()) }
            return state.take()
        }?()
    }

    /// Runs `completion` with the outcome: at once if it is known, otherwise when it is.
    func whenComplete(_ completion: @escaping Completion) {
        state.withLock { state -> (() -> Void)? in
            state.completion = completion
            return state.take()
        }?()
    }
}
