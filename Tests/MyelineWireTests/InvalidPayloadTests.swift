import Foundation
import LiveActivity
import Testing

/// Decoders reject every payload that breaks the contract, naming the key and the problem.
@Suite("Invalid payloads")
struct InvalidPayloadTests {
    @Test(arguments: InvalidPayload.all)
    func decodingNamesTheProblem(_ payload: InvalidPayload) throws {
        let data = try #require(payload.data, "the change's target is not in the golden payload")
        let error = #expect(throws: ActivityError.self) { try payload.kind.decode(data) }
        #expect(error?.code == .invalidPayload)
        #expect(error?.message == "invalid \(payload.kind.schema) payload: \(payload.problem)")
    }
}
