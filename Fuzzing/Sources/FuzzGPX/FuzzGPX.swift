import FuzzSupport
import Location

/// libFuzzer entry point: one GPX document through the decoder.
///
/// Besides not crashing or hanging, every point it keeps must have a finite position, and it must
/// count every point it read as used or rejected.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    var decoder = GPXDecoder()
    let points = decoder.decode(FuzzSupport.bytes(data, count))
    for point in points {
        precondition(point.latitude.isFinite && point.longitude.isFinite)
    }
    let statistics = decoder.statistics
    precondition(statistics.linesDecoded + (statistics.rejected[.invalidField] ?? 0) == statistics.linesRead)
    precondition(points.count <= statistics.linesDecoded)
    return 0
}
