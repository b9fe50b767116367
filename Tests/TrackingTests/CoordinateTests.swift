import Foundation
import LiveActivity
import Location
import Testing
import Tracking

@Suite struct CoordinateTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var name: String
        var from: Coordinate
        var to: Coordinate
        var metres: Double
        var tolerance: Double
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(name: "same point", from: Place.visnjan, to: Place.visnjan, metres: 0, tolerance: 0),
        Case(
            name: "one degree of latitude", from: Coordinate(latitude: 0, longitude: 0),
            to: Coordinate(latitude: 1, longitude: 0), metres: 111_195.08, tolerance: 0.01),
        Case(
            name: "one degree of longitude at 60° N", from: Coordinate(latitude: 60, longitude: 10),
            to: Coordinate(latitude: 60, longitude: 11), metres: 55_597.0, tolerance: 30),
        Case(
            name: "antipodes", from: Coordinate(latitude: 0, longitude: 0),
            to: Coordinate(latitude: 0, longitude: 180), metres: .pi * 6_371_008.8, tolerance: 0.001),
        Case(
            name: "100 m east in Višnjan", from: Place.visnjan, to: Place.visnjan.offset(north: 0, east: 100),
            metres: 100, tolerance: 0.01),
    ]

    @Test(arguments: cases)
    func haversine(_ test: Case) {
        #expect(abs(test.from.distance(to: test.to) - test.metres) <= test.tolerance)
        #expect(abs(test.to.distance(to: test.from) - test.metres) <= test.tolerance)
    }

    @Test(arguments: [
        (LocationFixMode.none, FixMode.noFix), (.twoDimensional, .fix2D), (.threeDimensional, .fix3D),
    ])
    func fixModeMapping(_ mode: LocationFixMode, _ expected: FixMode) {
        #expect(FixMode(mode) == expected)
    }
}
