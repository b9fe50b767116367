import Foundation
import LiveActivity

extension AgentCore {
    /// Publishes the retained `online` status with the agent's health: after each connection, on
    /// the `report` intent, and when saving or the clock starts or stops failing. Its `since` is
    /// when the current connection was made.
    mutating func publishOnline(now: Date, into batch: inout Batch) {
        if health.dropped > 0 {
            batch.log(
                .warning, "Track points were dropped while the broker was unreachable: the outbox was full",
                ["outbox.dropped": "\(health.dropped)"])
        }
        batch.actions.append(
            .publish(
                .status(
                    .online(
                        device: settings.device, since: onlineSince ?? now, dropped: health.dropped,
                        instance: settings.instance, storageError: health.storageError,
                        clockOffset: health.clockOffset))))
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
                    "Cannot save to the state directory; track points are lost until it works again, live updates go on",
                    [
                        "error": failure, "state.directory": settings.stateDirectory, "outbox.batch": "\(points)",
                    ])
            }
            health.storageError = String(failure.prefix(Self.maximumStorageErrorLength))
        } else if wasFailing {
            batch.log(
                .notice, "Saving to the state directory works again",
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
                "The system clock disagrees with the receiver's GPS time; the agent's own timestamps are off, fix times and stale dates are the receiver's",
                ["clock.offset_s": "\(offset)", "clock.now": "\(now)", "gps.time": "\(fixTime)"])
        } else {
            batch.log(.notice, "The system clock agrees with the receiver's GPS time again")
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
                "Two agents use this device id: give each tracker its own device.id (each takes the other's broker session over; this one now reconnects after mqtt.reconnect.max-delay)",
                [evidence: value, "myeline.device": settings.device.rawValue, "myeline.instance": settings.instance])
        case .lostAgain(let losses):
            batch.log(
                .info, "Connection lost while another agent uses this device id",
                ["myeline.device": settings.device.rawValue, "mqtt.losses": "\(losses)"])
        }
    }
}
