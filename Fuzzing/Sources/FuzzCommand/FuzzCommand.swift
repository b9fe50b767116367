import Foundation
import FuzzSupport
import LiveActivity
import MyelineWire

/// libFuzzer entry point: one payload on a command topic, as the agent reads it.
///
/// Besides not crashing or hanging: a command that decodes can be encoded again, a refusal names
/// its problem, and a request id recovered from a refused payload is one the agent may answer.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let data = Data(FuzzSupport.bytes(data, count))
    do {
        FuzzSupport.checkRoundTrip(try WireCodec.decode(Command.self, from: data))
    } catch {
        FuzzSupport.checkRefusal(error)
        if let id = Command.requestID(in: data) {
            precondition((1...128).contains(id.unicodeScalars.count))
        }
    }
    return 0
}
