import FuzzSupport
import Location

/// libFuzzer entry point: one GPX document through the decoder, whole and in chunks.
///
/// Besides not crashing or hanging: every point it keeps must have a finite position, it must count
/// every point it read as used or rejected, and the streaming decoder fed the document in chunks
/// (of 1 to 64 bytes, from the input's length) must yield the same track points and counts as fed
/// it whole.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let bytes = FuzzSupport.bytes(data, count)
    var decoder = GPXDecoder()
    let points = decoder.decode(bytes)
    for point in points {
        precondition(point.latitude.isFinite && point.longitude.isFinite)
    }
    let statistics = decoder.statistics
    precondition(statistics.linesDecoded + (statistics.rejected[.invalidField] ?? 0) == statistics.linesRead)
    precondition(points.count <= statistics.linesDecoded)
    precondition(statistics.bytesRead == count)

    var whole = GPXDecoder(yielding: .track)
    var wholePoints: [GPXPoint] = []
    bytes.withUnsafeBufferPointer { whole.decode(chunk: $0, into: &wholePoints) }
    whole.finish(into: &wholePoints)
    var chunked = GPXDecoder(yielding: .track)
    var chunkedPoints: [GPXPoint] = []
    let size = 1 + count % 64
    var start = 0
    while start < count {
        let end = min(count, start + size)
        bytes[start..<end].withUnsafeBufferPointer { chunked.decode(chunk: $0, into: &chunkedPoints) }
        start = end
    }
    chunked.finish(into: &chunkedPoints)
    precondition(chunkedPoints == wholePoints, "chunks of \(size) gave other points")
    precondition(chunked.statistics == whole.statistics, "chunks of \(size) gave other counts")
    precondition((whole.xmlError == nil) == (chunked.xmlError == nil))
    return 0
}
