import Interop
import Testing

/// The accuracy published with every position: the receiver's, else from the HDOP, else assumed;
/// never zero, never missing.
struct HorizontalAccuracyTests {
    @Test(
        "the receiver's estimate first, then the HDOP, then the assumption",
        arguments: [
            (4.2, 1.2, 4.2, HorizontalAccuracy.Basis.receiver),
            (nil, 1.2, 6, .hdop),
            (nil, 0.8, 4, .hdop),
            (0, 2.5, 12.5, .hdop),
            (-1, nil, 10, .assumed),
            (.nan, 0, 10, .assumed),
            (.infinity, .infinity, 10, .assumed),
            (nil, nil, 10, .assumed),
        ] as [(Double?, Double?, Double, HorizontalAccuracy.Basis)])
    func estimate(_ receiver: Double?, _ hdop: Double?, _ metres: Double, _ basis: HorizontalAccuracy.Basis) {
        let accuracy = HorizontalAccuracy(receiver: receiver, hdop: hdop)
        #expect(abs(accuracy.metres - metres) < 1e-9)
        #expect(accuracy.basis == basis)
    }
}
