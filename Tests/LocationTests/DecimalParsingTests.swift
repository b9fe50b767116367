import Glibc
import Testing

@_spi(Benchmarks) @testable import Location

/// `DecimalParsing.double` against the C library's `strtod`, which rounds correctly: every text the
/// fast path takes must give the same `Double`, bit for bit.
@Suite("DecimalParsing agrees with strtod")
struct DecimalParsingTests {
    private static func parsed(_ text: String) -> Double? {
        Array(text.utf8).withUnsafeBufferPointer { DecimalParsing.double($0) }
    }

    private static func strtodValue(_ text: String) -> Double {
        text.withCString { strtod($0, nil) }
    }

    @Test(
        "Texts the old fast path double-rounded: mantissas above 2^53 divided by a power of ten",
        arguments: [
            // 17 and 18 significant digits: the integer mantissa does not fit a Double's 53 bits, so
            // converting it rounds once and dividing rounds again.
            "9007199254740993", "9007199254740993.5", "1.7976931348623157", "44.068900166666666",
            "0.12345678901234567", "123456789012345678", "98765432.1098765432", "8.999999999999999e0",
            "2.2250738585072011", "4503599627370497.5", "0.30000000000000004", "-51.47805016666667",
        ])
    func agreesOnLongMantissas(_ text: String) throws {
        let value = try #require(Self.parsed(text))
        #expect(
            value.bitPattern == Self.strtodValue(text).bitPattern, "\(text): \(value) against \(Self.strtodValue(text))"
        )
    }

    @Test("Random decimals of 1 to 18 digits, with and without a point, agree with strtod")
    func agreesOnRandomDecimals() throws {
        var generator = SplitMix64(seed: 0x5EED)
        var mismatches: [String] = []
        for _ in 0..<200_000 {
            let digitCount = Int(generator.next() % 18) + 1
            var digits = (0..<digitCount).map { _ in Character(String(generator.next() % 10)) }
            if digits.count > 1, digits[0] == "0" { digits[0] = "1" }
            var text = String(digits)
            let point = Int(generator.next() % UInt64(digitCount + 1))
            if point < digitCount { text.insert(".", at: text.index(text.startIndex, offsetBy: point)) }
            if generator.next() % 2 == 0 { text = "-" + text }
            guard let value = Self.parsed(text) else {
                mismatches.append("\(text): refused")
                continue
            }
            if value.bitPattern != Self.strtodValue(text).bitPattern {
                mismatches.append("\(text): \(value) against \(Self.strtodValue(text))")
            }
        }
        let count = mismatches.count
        #expect(count == 0, "\(count) mismatches, such as \(mismatches.prefix(5))")
    }
}

/// A small deterministic generator (SplitMix64), so that a failure is the same on every run.
private struct SplitMix64 {
    var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
