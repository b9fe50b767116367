import ArgumentParser
import Foundation
import LiveActivity
import MyelineWire
import Location
import TestSupport
import Testing

@testable import MyelineAgentKit

/// The load generator's fleet: devices in turn along real GPX tracks, numbered as agents number them.
struct FleetSimulationTests {
    static let gpx = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("LocationTests/Data/gpx")

    static func track(_ name: String) throws -> [GPXPoint] {
        try SimulateCommand.load(gpx.appendingPathComponent(name).path)
    }

    static func fleet(count: Int, clock: ManualWallClock) throws -> FleetSimulation {
        try FleetSimulation(
            device: DeviceID("sim"), count: count,
            tracks: [try track("korita-zbevnica.gpx"), try track("around-visnjan-with-car.gpx")],
            topics: TopicTree(prefix: .default), staleAfter: 90, clock: clock)
    }

    @Test func startsAreEachDevicesRetainedStatusAndStartEnvelope() throws {
        let clock = ManualWallClock()
        let starts = try Self.fleet(count: 3, clock: clock).starts()
        #expect(
            starts.map(\.topic).map { $0.split(separator: "/").prefix(3).joined(separator: "/") } == [
                "myeline/sim-1/status", "myeline/sim-1/activities", "myeline/sim-2/status", "myeline/sim-2/activities",
                "myeline/sim-3/status", "myeline/sim-3/activities",
            ])
        #expect(starts.allSatisfy { $0.retained })
        let status = try WireCodec.decode(StatusMessage.self, from: Data(starts[0].payload))
        #expect(status.state == .online && status.since == clock.now)
        let start = try WireCodec.decode(
            ActivityEnvelope<LocationActivityAttributes>.self, from: Data(starts[1].payload))
        #expect(start.header.event == .start && start.header.seq == 1)
        #expect(start.content.state.latitude == nil, "no position before the first step")
        #expect(start.content.staleDate == clock.now + 90)
    }

    @Test func stepsGoToTheDevicesInTurnAlongTheirTracks() throws {
        let clock = ManualWallClock()
        var fleet = try Self.fleet(count: 3, clock: clock)
        let korita = try Self.track("korita-zbevnica.gpx")
        let visnjan = try Self.track("around-visnjan-with-car.gpx")
        var envelopes: [ActivityEnvelope<LocationActivityAttributes>] = []
        var points: [TrackPoint] = []
        for _ in 0..<6 {
            clock.advance(by: 1)
            let step = try fleet.step()
            #expect(step.envelope.retained && !step.trackPoint.retained)
            #expect(step.trackPoint.topic == step.envelope.topic + "/track")
            envelopes.append(
                try WireCodec.decode(
                    ActivityEnvelope<LocationActivityAttributes>.self, from: Data(step.envelope.payload)))
            points.append(try WireCodec.decode(TrackPoint.self, from: Data(step.trackPoint.payload)))
        }
        #expect(envelopes.map(\.header.device.rawValue) == ["sim-1", "sim-2", "sim-3", "sim-1", "sim-2", "sim-3"])
        #expect(envelopes.map(\.header.seq) == [2, 2, 2, 3, 3, 3], "the start was 1")
        #expect(envelopes.allSatisfy { $0.header.event == .update })
        #expect(points.map(\.seq) == [1, 1, 1, 2, 2, 2])
        // sim-1 and sim-3 drive korita (sim-3 from point 7,919 mod its length), sim-2 visnjan.
        let third = 7_919 % korita.count
        let expected = [
            korita[1], visnjan[1], korita[(third + 1) % korita.count], korita[2], visnjan[2],
            korita[(third + 2) % korita.count],
        ]
        for (point, gpx) in zip(points, expected) {
            #expect(point.latitude == gpx.latitude && point.longitude == gpx.longitude)
        }
        let first = envelopes[0].content
        #expect(first.state.fix == .fix3D && first.state.fixTime == Date(timeIntervalSince1970: 1_700_000_001))
        #expect(first.staleDate == Date(timeIntervalSince1970: 1_700_000_091))
        #expect(first.state.distance > 0 && first.state.distance < 1_000, "one leg of a drive")
        #expect(first.state.course.map { (0..<360).contains($0) } == true)
        #expect(envelopes[3].content.state.distance > first.state.distance)
    }

    @Test func aTrackWithoutTwoPointsIsRefusedByName() throws {
        let missing = #expect(throws: ValidationError.self) {
            try SimulateCommand.load("/nonexistent/drive.gpx")
        }
        #expect(missing?.message.hasPrefix("--track: cannot read location file '/nonexistent/drive.gpx'") == true)
        let error = #expect(throws: SimulationError.self) {
            try FleetSimulation(
                device: DeviceID("sim"), count: 1, tracks: [[]], topics: TopicTree(prefix: .default), staleAfter: 60,
                clock: ManualWallClock())
        }
        #expect(error?.description == "every track needs at least two points with a position")
    }
}
