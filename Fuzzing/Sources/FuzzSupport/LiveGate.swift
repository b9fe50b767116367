import Location

extension FuzzSupport {
    /// Checks a location decoder's output as a live source passes it on: it counted every byte, and
    /// every fix the live gate (week-rollover correction on) passes is in range and after the last rollover.
    public static func checkLiveGate(_ updates: [LocationUpdate], statistics: SourceStatistics, inputCount: Int) {
        precondition(statistics.bytesRead >= inputCount, "the decoder did not count every byte")
        var statistics = statistics
        var gate = FixGate()
        for fix in gate.admitAll(updates, statistics: &statistics).compactMap(\.fix) {
            precondition((-90...90).contains(fix.latitude) && (-180...180).contains(fix.longitude))
            precondition(fix.time >= FixGate.Configuration.lastWeekRollover)
        }
    }
}
