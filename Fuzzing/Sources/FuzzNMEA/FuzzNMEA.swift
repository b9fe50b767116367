import Foundation
import FuzzSupport
import Location

/// libFuzzer entry point: one NMEA 0183 stream through the decoder and a live fix gate.
///
/// Besides not crashing or hanging, every fix the gate passes must be finite and in range, and the
/// decoder's counters must add up.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let bytes = FuzzSupport.bytes(data, count)
    var decoder = NMEADecoder(
        fallbackDate: Date(timeIntervalSince1970: 1_700_000_000),
        logger: FuzzSupport.quietLogger)
    let updates = decoder.decode(bytes)
    var statistics = decoder.statistics
    precondition(statistics.linesDecoded + statistics.linesIgnored + statistics.totalRejected >= 0)
    precondition(statistics.bytesRead >= count)
    var gate = FixGate()
    for update in updates {
        guard let passed = gate.admit(update, statistics: &statistics), let fix = passed.fix else { continue }
        precondition((-90...90).contains(fix.latitude) && (-180...180).contains(fix.longitude))
        precondition(fix.time >= FixGate.Configuration.lastWeekRollover)
    }
    return 0
}
