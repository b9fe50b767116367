import FoundationEssentials
import LiveActivity
import MyelineWire
import Location
import Tracking

import Glibc

/// A fleet of simulated trackers driving along real tracks: the model of `myeline-agent simulate`.
///
/// Each device runs a real ``ActivityModel`` (so its envelopes are numbered and checked as an
/// agent's are; a model rather than an ``Activity``, whose center would run a timer per device) and drives one of the tracks, starting at its own point, one track point per step. Steps
/// go to the devices in turn. Pure apart from the clock it is given: the same tracks and device
/// count always make the same positions.
struct FleetSimulation {
    /// One message to publish: an envelope (retained, as agents publish them), a track point or a status.
    struct Message: Hashable, Sendable {
        var topic: String
        var payload: [UInt8]
        var retained: Bool
        /// The device that publishes it: its index in the fleet, from 0.
        var device = 0
    }

    /// The seconds a device's content stays fresh after each step.
    let staleAfter: TimeInterval
    private let topics: TopicTree
    private let clock: any WallClock
    private var devices: [SimulatedDevice]
    private var next = 0

    /// A fleet of `count` devices named `DEVICE-1` … `DEVICE-count` after `device`, spread over
    /// `tracks` (device *n* drives track *n* mod the number of tracks).
    ///
    /// - Throws: ``SimulationError`` when a track has fewer than two points, `ActivityError` when a
    ///   device id would be invalid (too long).
    init(
        device: DeviceID, count: Int, tracks: [[GPXPoint]], topics: TopicTree, staleAfter: TimeInterval,
        clock: any WallClock
    ) throws {
        guard let shortest = tracks.map(\.count).min(), shortest >= 2 else {
            throw SimulationError("every track needs at least two points with a position")
        }
        self.topics = topics
        self.staleAfter = staleAfter
        self.clock = clock
        var devices: [SimulatedDevice] = []
        devices.reserveCapacity(count)
        for number in 1...max(count, 1) {
            let track = tracks[(number - 1) % tracks.count]
            // Devices on the same track start a prime stride apart, so that they do not move in step.
            let start = ((number - 1) / tracks.count * 7_919) % track.count
            devices.append(
                try SimulatedDevice(
                    id: DeviceID("\(device.rawValue)-\(number)"), track: track, index: start, clock: clock,
                    staleAfter: staleAfter))
        }
        self.devices = devices
    }

    /// How many devices the fleet has.
    var deviceCount: Int { devices.count }

    /// The id of the device at `index` (from 0) in the fleet.
    func deviceID(at index: Int) -> DeviceID { devices[index].id }

    /// Every device's retained `online` status and `start` envelope.
    func starts() throws -> [Message] {
        try devices.indices.flatMap { index in
            let device = devices[index]
            return [
                Message(
                    topic: topics.status(device: device.id),
                    payload: Array(try WireCodec.encode(StatusMessage.online(device: device.id, since: device.since))),
                    retained: true, device: index),
                try envelope(of: index),
            ]
        }
    }

    /// Moves the next device one point along its track: its `update` envelope and track point.
    mutating func step() throws -> (envelope: Message, trackPoint: Message) {
        let index = next
        next = (next + 1) % devices.count
        let state = try devices[index].advance(clock: clock, staleAfter: staleAfter)
        let device = devices[index]
        guard
            let point = TrackPoint(device: device.id, activity: device.activity.id, seq: device.trackSeq, state: state)
        else {
            throw SimulationError("a track point needs a position")
        }
        return (
            try envelope(of: index),
            Message(
                topic: topics.track(device: device.id, activityID: device.activity.id),
                payload: Array(try WireCodec.encode(point)), retained: false, device: index)
        )
    }

    private func envelope(of index: Int) throws -> Message {
        let device = devices[index]
        guard let envelope = ActivityEnvelope(event: device.activity.lastEvent, device: device.id) else {
            throw SimulationError("a simulated activity was dismissed")
        }
        return Message(
            topic: topics.activity(device: device.id, activityID: device.activity.id),
            payload: Array(try WireCodec.encode(envelope)), retained: true, device: index)
    }
}

/// One simulated tracker: its activity and where it is on its track.
private struct SimulatedDevice {
    let id: DeviceID
    let since: Date
    var activity: ActivityModel<LocationActivityAttributes>
    let track: [GPXPoint]
    var index: Int
    var distance: Double = 0
    var trackSeq = 0

    init(id: DeviceID, track: [GPXPoint], index: Int, clock: any WallClock, staleAfter: TimeInterval)
        throws
    {
        self.id = id
        self.track = track
        self.index = index
        since = clock.now
        activity = ActivityModel(
            id: UUID().uuidString.lowercased(),
            attributes: LocationActivityAttributes(deviceID: id, name: "Simulated \(id.rawValue)"),
            content: ActivityContent(state: .init(), staleDate: since + staleAfter), now: since)
    }

    /// Moves to the next point of the track (from the last back to the first) and updates the activity.
    mutating func advance(clock: any WallClock, staleAfter: TimeInterval) throws
        -> LocationActivityAttributes.ContentState
    {
        let previous = track[index]
        index = (index + 1) % track.count
        let point = track[index]
        let (from, to) = (
            Coordinate(latitude: previous.latitude, longitude: previous.longitude),
            Coordinate(latitude: point.latitude, longitude: point.longitude)
        )
        let leg = index == 0 ? 0 : from.distance(to: to)
        distance += leg
        trackSeq += 1
        let seconds: Double? =
            if let before = previous.time, let after = point.time { after.timeIntervalSince(before) } else { nil }
        let now = clock.now
        let state = LocationActivityAttributes.ContentState(
            latitude: point.latitude, longitude: point.longitude, altitude: point.elevation,
            speed: point.speed ?? seconds.flatMap { $0 > 0 && index != 0 ? leg / $0 : nil },
            course: point.course ?? (leg > 0 ? from.bearing(to: to) : nil),
            horizontalAccuracy: point.hdop.map { $0 * 5 } ?? 5, fix: .fix3D, satellites: point.satellites ?? 9,
            fixTime: now, distance: distance, elapsed: max(0, now.timeIntervalSince(since)))
        _ = try activity.update(ActivityContent(state: state, staleDate: now + staleAfter), now: now)
        return state
    }
}

extension Coordinate {
    /// The initial bearing from here to `other`, degrees clockwise from north, 0..<360.
    fileprivate func bearing(to other: Coordinate) -> Double {
        let radians = Double.pi / 180
        let (φ1, φ2) = (latitude * radians, other.latitude * radians)
        let Δλ = (other.longitude - longitude) * radians
        let y = sin(Δλ) * cos(φ2)
        let x = cos(φ1) * sin(φ2) - sin(φ1) * cos(φ2) * cos(Δλ)
        let degrees = atan2(y, x) / radians
        return (degrees + 360).truncatingRemainder(dividingBy: 360)
    }
}

/// Why the simulation cannot go on: a track without enough points, or a payload that cannot be made.
struct SimulationError: Error, CustomStringConvertible {
    var description: String

    init(_ description: String) {
        self.description = description
    }
}
