import Testing

@testable import Location

/// Hostile NMEA, gpsd JSON and GPX inputs: each is rejected for a named reason, or accepted with
/// the values the table states; decoding goes on after it.
@Suite struct HostileInputTests {
    @Test func theTableCoversEveryFormat() {
        let counts = Dictionary(grouping: HostileInput.all, by: \.format).mapValues(\.count)
        #expect(counts[.nmea, default: 0] >= 100 && counts[.gpsd, default: 0] >= 150 && counts[.gpx, default: 0] >= 50)
    }

    @Test(arguments: HostileInput.all)
    func outcome(_ input: HostileInput) {
        let observed = input.observe()
        #expect(input.outcome.matches(observed), "observed \(observed.map(String.init(describing:)) ?? "a mixture")")
    }
}
