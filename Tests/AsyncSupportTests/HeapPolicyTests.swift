import AsyncSupport
import Glibc
import Testing

@Suite struct HeapPolicyTests {
    /// glibc takes both settings: the C glue passes the right mallopt parameters (a wrong one is
    /// refused with 0). Under AddressSanitizer (scripts/sanitize address) malloc is the sanitizer's,
    /// whose mallopt takes nothing: then the policy says so rather than claiming it applied.
    @Test func glibcTakesTheThresholdAndTheArenaCap() {
        let glibcAllocates = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "__asan_init") == nil
        #expect(HeapPolicy.apply(maximumArenas: 2) == glibcAllocates)
        #expect(HeapPolicy.apply() == glibcAllocates)
    }
}
