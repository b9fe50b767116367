import Locking

/// A handler of activity events registered with ``ActivityCenter/observeEvents(_:)`` or
/// ``Activity/observeEvents(_:)``; ``cancel()`` stops it (also when the observation is released).
///
/// The handler runs synchronously, on the task that made the change, in the order of the
/// changes, while the activity's lock is held: it sees every event at the moment it happens,
/// before the call that caused it returns. So it must only hand the event on (queue it, yield it
/// to a stream) and never call back into the center or an activity.
public final class EventObservation: Sendable {
    private let handler: Locked<(@Sendable (AnyActivityEvent) -> Void)?>
    private let onCancel: Locked<(@Sendable () -> Void)?> = Locked(nil)

    init(_ handler: @escaping @Sendable (AnyActivityEvent) -> Void) {
        self.handler = Locked(handler)
    }

    deinit {
        cancel()
    }

    /// Stops the handler: it is not called again once this returns.
    public func cancel() {
        handler.withLock { $0 = nil }
        onCancel.withLock { onCancel in
            defer { onCancel = nil }
            return onCancel
        }?()
    }

    /// Whether ``cancel()`` was called.
    public var isCancelled: Bool { handler.withLock { $0 == nil } }

    /// Hands `event` to the handler; false once cancelled, so that the activity forgets it.
    func deliver(_ event: AnyActivityEvent) -> Bool {
        guard let handler = handler.withLock({ $0 }) else { return false }
        handler(event)
        return true
    }

    /// Runs `action` at the cancellation (the center forgets the observation).
    func whenCancelled(_ action: @escaping @Sendable () -> Void) {
        onCancel.withLock { $0 = action }
    }
}
