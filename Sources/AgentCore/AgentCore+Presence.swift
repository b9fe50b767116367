import FoundationEssentials
import Logging
import Tracking
import LiveActivity
import MyelineWire

extension AgentCore {
    /// Publishes the retained `online` status with the agent's health: after each connection, on
    /// the `report` intent, and when saving or the clock starts or stops failing. Its `since` is
    /// when the current connection was made.
    mutating func publishOnline(now: Date, into batch: inout Batch) {
        if health.dropped > 0 {
            batch.log(
                .warning, "agent.points.dropped",
                "Track points were dropped while the broker was unreachable: the outbox was full",
                ["outbox.dropped": "\(health.dropped)"])
        }
        batch.actions.append(
            .publish(
                .status(
                    .online(
                        device: settings.device, since: onlineSince ?? now, dropped: health.dropped,
                        instance: settings.instance, storageError: health.storageError,
                        clockOffset: health.clockOffset, powerLosses: health.powerLosses > 0 ? health.powerLosses : nil)
                )))
    }

    /// A status published on this device's own topic while the agent is connected that is not
    /// its own `online` (a forged `offline` that every board would believe, the `offline` will of
    /// this agent's previous connection that the broker published late, another agent's
    /// `online`): the agent publishes its own `online` again at once, so that the retained status
    /// says what is true.
    ///
    /// Not the retained status the broker sends when the agent subscribes: the agent's `online`
    /// published after that connection replaces it anyway. An `offline` is corrected every time
    /// (the queue keeps only the newest status waiting, so a burst costs one publish); another
    /// instance's `online` once per connection, and not once a second agent is known, or two live
    /// agents would answer each other for ever. Logged once per connection.
    mutating func correctStatus(_ status: StatusMessage, retained: Bool, now: Date, into batch: inout Batch) {
        guard isConnected, !retained, status.state == .offline || status.instance != settings.instance else {
            return
        }
        let connection = conflict.connections
        if status.state == .online {
            guard !conflict.isDetected, statusCorrection.onlineCorrectedIn != connection else { return }
            statusCorrection.onlineCorrectedIn = connection
        }
        warnOncePerConnection(
            \.loggedIn, "agent.status.foreign",
            "A status this agent did not publish is on its status topic: publishing its own online status again",
            [
                "myeline.state": status.state.rawValue, "myeline.instance.other": status.instance ?? "(none)",
                "myeline.device": settings.device.rawValue,
            ], into: &batch)
        publishOnline(now: now, into: &batch)
    }

    /// An empty message on the device's own status topic while the agent is connected: someone
    /// removed the retained status (`mosquitto_pub -r -n`, `mosquitto_sub --remove-retained`), so a
    /// board started now would find no status at all for a tracker that runs. The agent publishes
    /// its `online` again, each time (its own status is never empty, and the broker never sends an
    /// empty retained message at a subscription). Logged once per connection.
    mutating func restoreStatus(now: Date, into batch: inout Batch) {
        guard isConnected else { return }
        warnOncePerConnection(
            \.clearingLoggedIn, "agent.status.cleared",
            "The retained status on this agent's status topic was removed: publishing its own online status again",
            ["myeline.device": settings.device.rawValue], into: &batch)
        publishOnline(now: now, into: &batch)
    }

    /// Logs a warning unless one was logged during this connection, as `loggedIn` of
    /// ``statusCorrection`` records.
    private mutating func warnOncePerConnection(
        _ loggedIn: WritableKeyPath<StatusCorrection, Int?>, _ event: String, _ message: String,
        _ metadata: [String: String], into batch: inout Batch
    ) {
        let connection = conflict.connections
        guard statusCorrection[keyPath: loggedIn] != connection else { return }
        statusCorrection[keyPath: loggedIn] = connection
        batch.log(.warning, event, message, metadata)
    }

    /// What ``correctStatus(_:retained:now:into:)`` and ``restoreStatus(now:into:)`` did during which
    /// connection (``ConflictDetector/connections``).
    struct StatusCorrection: Hashable, Sendable {
        /// The connection during which another instance's `online` was answered.
        var onlineCorrectedIn: Int?
        /// The connection during which a correction was logged.
        var loggedIn: Int?
        /// The connection during which a removed status was logged.
        var clearingLoggedIn: Int?
    }

    /// Takes what saving did: a failure is logged once until saving works again, and the status
    /// says so (`storage-error`) when saving starts or stops failing. The points of a failed batch
    /// are lost; the activities' envelopes are published all the same.
    mutating func storage(_ failure: String?, now: Date, into batch: inout Batch) {
        let points = persisting
        persisting = 0
        let wasFailing = health.storageError != nil
        if let failure {
            health.unsavedPoints += points
            if !wasFailing {
                batch.log(
                    .error,
                    "agent.storage.failed",
                    "Cannot save to the state directory; track points are lost until it works again, live updates go on",
                    [
                        "error": failure, "state.directory": settings.stateDirectory, "outbox.batch": "\(points)",
                    ])
            }
            health.storageError = String(failure.prefix(Self.maximumStorageErrorLength))
        } else if wasFailing {
            batch.log(
                .notice, "agent.storage.recovered", "Saving to the state directory works again",
                ["state.directory": settings.stateDirectory, "outbox.unsaved": "\(health.unsavedPoints)"])
            health.storageError = nil
            health.unsavedPoints = 0
        }
        if (failure != nil) != wasFailing, !isFinished { publishOnline(now: now, into: &batch) }
    }

    /// Compares the wall clock with a fix's time (a receiver's true UTC); when the clock leaves
    /// or comes back within the tolerance, or moves again, logs it and says so in the status
    /// (`clock-offset`). Stale dates need no correction: they are made from fix times.
    mutating func checkClock(fixTime: Date, now: Date, into batch: inout Batch) {
        guard clockCheck?.observe(fixTime: fixTime, now: now) == true else { return }
        let offset = clockCheck?.reportedOffset
        if let offset {
            batch.log(
                .warning,
                "agent.clock.off",
                "The system clock disagrees with the receiver's GPS time; the agent's own timestamps are off, fix times and stale dates are the receiver's",
                ["clock.offset_s": "\(offset)", "clock.now": "\(now)", "gps.time": "\(fixTime)"])
        } else {
            batch.log(.notice, "agent.clock.agrees", "The system clock agrees with the receiver's GPS time again")
        }
        health.clockOffset = offset
        publishOnline(now: now, into: &batch)
    }

    /// Acts on what the conflict detector found: once, an error that names the device and the
    /// fix, and slow reconnections; later losses at info with their count.
    mutating func report(_ finding: ConflictDetector.Finding, into batch: inout Batch) {
        switch finding {
        case .nothing:
            return
        case .detected(let evidence, let value):
            batch.actions.append(.reconnectSlowly)
            batch.log(
                .error,
                "agent.device.duplicate",
                "Two agents use this device id: give each tracker its own device.id (each takes the other's broker session over; this one now reconnects after mqtt.reconnect.max-delay)",
                [evidence: value, "myeline.device": settings.device.rawValue, "myeline.instance": settings.instance])
        case .lostAgain(let losses):
            batch.log(
                .info, "agent.duplicate.lost", "Connection lost while another agent uses this device id",
                ["myeline.device": settings.device.rawValue, "mqtt.losses": "\(losses)"])
        }
    }
}
