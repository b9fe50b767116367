/// Fast, exact-enough parsing of decimal numbers straight from bytes, for the decoders' hot paths.
///
/// The digits are accumulated in an integer; when it is at most 2^53 (so exact as a `Double`) and
/// the fraction has at most 22 digits (so the power of ten is exact too), one division gives the
/// correctly rounded value (Clinger's fast path). Anything else (more significant digits,
/// exponents) falls back to the standard library's parser, which rounds correctly.
/// `DecimalParsingTests` holds both to `strtod`, bit for bit.
@_spi(Benchmarks)
public enum DecimalParsing {
    /// The value of one hexadecimal digit (either case), or nil: NMEA checksums, `\u` escapes in
    /// gpsd's JSON, `%XX` escapes in a source address.
    static func hexDigit(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// The largest integer below which every integer is exact as a `Double`: 2^53.
    private static let exactMantissa: UInt64 = 1 << 53

    private static let powersOfTen: [Double] = (0...22).map { exponent in
        var value = 1.0
        for _ in 0..<exponent { value *= 10 }
        return value
    }

    /// Parses `[+-]digits[.digits][(e|E)[+-]digits]` filling all of `bytes`; `nil` for anything else
    /// (including empty input, "nan", "inf", hex), so that a decoder never produces NaN from text.
    public static func double(_ bytes: UnsafeBufferPointer<UInt8>) -> Double? {
        var index = 0
        let count = bytes.count
        guard count > 0 else { return nil }
        var negative = false
        if bytes[0] == UInt8(ascii: "-") || bytes[0] == UInt8(ascii: "+") {
            negative = bytes[0] == UInt8(ascii: "-")
            index = 1
        }
        var mantissa: UInt64 = 0
        var digits = 0
        var significant = 0
        var fractionDigits = 0
        var sawPoint = false
        var overflow = false
        while index < count {
            let byte = bytes[index]
            if byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") {
                digits += 1
                if significant < 18 {
                    mantissa = mantissa &* 10 &+ UInt64(byte &- UInt8(ascii: "0"))
                    if mantissa != 0 { significant += 1 }
                    if sawPoint { fractionDigits += 1 }
                } else {
                    overflow = true
                }
            } else if byte == UInt8(ascii: ".") && !sawPoint {
                sawPoint = true
            } else if byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E") {
                guard digits > 0 else { return nil }
                return slow(bytes, exponentAt: index)
            } else {
                return nil
            }
            index += 1
        }
        guard digits > 0 else { return nil }
        // A mantissa past 2^53 would be rounded on its conversion and again by the division: the slow
        // path rounds once. So do more fraction digits than there are exact powers of ten.
        if overflow || mantissa > Self.exactMantissa || fractionDigits >= powersOfTen.count {
            return slow(bytes, exponentAt: nil)
        }
        var value = Double(mantissa)
        if fractionDigits > 0 { value /= powersOfTen[fractionDigits] }
        return negative ? -value : value
    }

    /// Parses an unsigned decimal integer filling all of `bytes` (at most 18 digits).
    static func integer(_ bytes: UnsafeBufferPointer<UInt8>) -> Int? {
        guard !bytes.isEmpty, bytes.count <= 18 else { return nil }
        var start = 0
        var negative = false
        if bytes[0] == UInt8(ascii: "-") || bytes[0] == UInt8(ascii: "+") {
            negative = bytes[0] == UInt8(ascii: "-")
            start = 1
            guard bytes.count > 1 else { return nil }
        }
        var value = 0
        for index in start..<bytes.count {
            let digit = bytes[index] &- UInt8(ascii: "0")
            guard digit < 10 else { return nil }
            value = value * 10 + Int(digit)
        }
        return negative ? -value : value
    }

    private static func slow(_ bytes: UnsafeBufferPointer<UInt8>, exponentAt exponent: Int?) -> Double? {
        if let exponent {
            // The exponent must be [+-]digits and nothing else.
            var index = exponent + 1
            if index < bytes.count && (bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-")) {
                index += 1
            }
            guard index < bytes.count else { return nil }
            while index < bytes.count {
                guard bytes[index] >= UInt8(ascii: "0") && bytes[index] <= UInt8(ascii: "9") else { return nil }
                index += 1
            }
        }
        guard let value = Double(String(decoding: bytes, as: UTF8.self)), value.isFinite else { return nil }
        return value
    }
}
