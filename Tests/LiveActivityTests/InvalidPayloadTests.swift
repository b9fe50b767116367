import Foundation
import LiveActivity
import Testing

/// Decoders reject every payload that breaks the contract, naming the key and the problem.
@Suite("Invalid payloads")
struct InvalidPayloadTests {
    @Test(arguments: InvalidPayload.all)
    func decodingNamesTheProblem(_ payload: InvalidPayload) throws {
        let json = try #require(payload.json, "the change's target is not in the golden payload")
        let error = #expect(throws: ActivityError.self) { try payload.kind.decode(Data(json.utf8)) }
        #expect(error?.code == .invalidPayload)
        #expect(error?.message == "invalid \(payload.kind.schema) payload: \(payload.problem)")
    }
}
