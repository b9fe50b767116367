import AsyncSupport
import Testing

@Suite struct HeapPolicyTests {
    /// glibc takes both settings: the C glue passes the right mallopt parameters (a wrong one is
    /// refused with 0).
    @Test func glibcTakesTheThresholdAndTheArenaCap() {
        #expect(HeapPolicy.apply(maximumArenas: 2))
        #expect(HeapPolicy.apply())
    }
}
