import Foundation
import Location
import Testing

/// The NMEA reader against gpsd itself, on every real receiver capture in `Data/gpsd-logs`.
@Suite struct NMEAAgreementTests {
    @Test(arguments: TestData.gpsdLogs)
    func agreesWithGpsd(log: String) throws {
        var decoder = NMEADecoder()
        var gate = FixGate(configuration: .recording)
        var statistics = SourceStatistics()
        let fixes = decoder.decode(try TestData.bytes("gpsd-logs/\(log)"))
            .compactMap { gate.admit($0, statistics: &statistics) }.compactMap(\.fix)
        let check = try GpsdCheckFile(contentsOf: TestData.path("gpsd-logs/\(log).chk"))
        let agreement = Agreement(fixes: fixes, check: check)
        print(
            "AGREEMENT \(log): \(agreement); rejected \(decoder.statistics.rejected), dropped \(statistics.dropped.merging(decoder.statistics.dropped, uniquingKeysWith: +)) missed \(agreement.missed)"
        )
        #expect(agreement.contradictions.isEmpty, "\(agreement.contradictions.prefix(5))")
        #expect(agreement.ratio >= 0.95, "\(log): \(agreement)")
        #expect(fixes.allSatisfy { $0.latitude.isFinite && $0.longitude.isFinite })
    }
}
