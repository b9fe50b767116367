/// How bunched a fleet's reconnections are, for the fault scenario of a broker restart and its models.
public enum ReconnectionSpread {
    /// The most of `times` (seconds, in any order) within any one second: a sliding window.
    public static func busiestSecond(_ times: [Double]) -> Int {
        let sorted = times.sorted()
        var busiest = 0
        var first = 0
        for last in sorted.indices {
            while sorted[last] - sorted[first] >= 1 { first += 1 }
            busiest = max(busiest, last - first + 1)
        }
        return busiest
    }
}
