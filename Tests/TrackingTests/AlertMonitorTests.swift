import Foundation
import LiveActivity
import Location
import Testing
import Tracking

@Suite struct AlertMonitorTests {
    static let depot = Geofence(name: "Depot", center: Place.visnjan, radius: 100)

    /// Distances from the depot's centre, one fix per second, and the event each raises
    /// (radius 100 m, leave beyond 110 m, 2 confirmations).
    static let crossing: [(distance: Double, event: String?)] = [
        (300, nil),  // the first fix sets the side: outside, silently
        (90, nil),  // inside once: not yet
        (80, "Entered Depot"),  // inside twice: entered
        (105, nil),  // the band: no evidence
        (95, nil),
        (108, nil),
        (111, nil),  // outside once
        (105, nil),  // the band resets the count
        (111, nil),
        (115, "Left Depot"),
        (50, nil),
        (250, nil),  // one contrary fix is not enough
        (60, nil),
        (40, "Entered Depot"),
    ]

    @Test func geofenceHysteresis() {
        var monitor = AlertMonitor(policy: TrackingPolicy(geofences: [Self.depot]))
        for (second, step) in Self.crossing.enumerated() {
            let point = Place.visnjan.offset(north: 0, east: step.distance)
            let alerts = monitor.receive(fix(point, at: Double(second))).map { $0.alert(deviceName: "Van 7") }
            #expect(alerts.map(\.title) == (step.event.map { [$0] } ?? []), "fix \(second) at \(step.distance) m")
        }
        #expect(monitor.insideFences == [Self.depot])
    }

    @Test func startingInsideRaisesNothing() {
        var monitor = AlertMonitor(policy: TrackingPolicy(geofences: [Self.depot]))
        #expect(monitor.receive(fix(Place.visnjan, at: 0)).isEmpty)
        #expect(monitor.receive(fix(Place.visnjan, at: 1)).isEmpty)
        #expect(monitor.insideFences == [Self.depot])
    }

    /// A receiver standing near the edge for an hour with 5 m of noise raises at most one alert.
    @Test(arguments: [-5.0, 0, 5, 10, 15])
    func noStormOnTheEdge(offsetFromEdge: Double) {
        var generator = SeededGenerator(state: 2026)
        var monitor = AlertMonitor(policy: TrackingPolicy(geofences: [Self.depot]))
        let standing = Place.visnjan.offset(north: Self.depot.radius + offsetFromEdge, east: 0)
        var count = 0
        for second in 0..<3600 {
            let point = standing.jittered(within: 5, using: &generator)
            count += monitor.receive(fix(point, at: Double(second), accuracy: 5)).count
        }
        #expect(count <= 1)
    }

    /// Speeds in m/s, one fix per second; limit 25 m/s for 5 s, re-armed below 22.5 m/s.
    static let speeds: [(speed: Double?, alert: Bool)] = [
        (20, false),
        (26, false),  // above since t=1
        (27, false), (26, false), (26, false), (26, false),
        (26, true),  // t=6: 5 s above
        (30, false),  // one alert only
        (24, false),  // below the limit, not re-armed
        (26, false), (26, false), (26, false), (26, false), (26, false), (26, false), (26, false),
        (22, false),  // re-armed
        (26, false), (26, false), (26, false), (nil, false),  // no speed: timing restarts
        (26, false), (26, false), (26, false), (26, false), (26, false),
        (26, true),
    ]

    @Test func overspeed() {
        let limit = Overspeed(threshold: 25, duration: 5)
        #expect(limit.rearmMargin == 2.5)
        var monitor = AlertMonitor(policy: TrackingPolicy(overspeed: limit))
        for (second, step) in Self.speeds.enumerated() {
            let events = monitor.receive(fix(Place.visnjan, at: Double(second), speed: step.speed))
            #expect(events.count == (step.alert ? 1 : 0), "t=\(second)")
            if let event = events.first {
                let alert = event.alert(deviceName: "Van 7")
                #expect(alert.title == "Overspeed")
                #expect(alert.body.hasPrefix("Van 7 at 94 km/h, above 90 km/h for 5 s, at 2020-12-18T06:"))
            }
        }
    }

    @Test func alertTexts() {
        let time = Place.t0
        #expect(
            AlertMonitor.Event.entered(Self.depot, at: time).alert(deviceName: "Van 7")
                == AlertConfiguration(title: "Entered Depot", body: "Van 7 entered Depot at 2020-12-18T06:15:50Z."))
        #expect(
            AlertMonitor.Event.left(Self.depot, at: time).alert(deviceName: "Van 7")
                == AlertConfiguration(title: "Left Depot", body: "Van 7 left Depot at 2020-12-18T06:15:50Z."))
    }
}
