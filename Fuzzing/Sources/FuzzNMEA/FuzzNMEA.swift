import Foundation
import FuzzSupport
import Location

/// libFuzzer entry point: one NMEA 0183 stream through the decoder and a live fix gate.
///
/// Besides not crashing or hanging: the checks of ``FuzzSupport/checkLiveGate(_:statistics:inputCount:)``.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    var decoder = NMEADecoder(
        fallbackDate: Date(timeIntervalSince1970: 1_700_000_000), logger: FuzzSupport.quietLogger)
    let updates = decoder.decode(FuzzSupport.bytes(data, count))
    FuzzSupport.checkLiveGate(updates, statistics: decoder.statistics, inputCount: count)
    return 0
}
