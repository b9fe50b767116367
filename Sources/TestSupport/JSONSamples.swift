/// Values a JSON writer gets wrong, for the tests that hold a direct writer (the track point's, the
/// activity record's, the trip totals') to `JSONEncoder`'s bytes and `JSONDecoder`'s reading.
public enum JSONSamples {
    /// Strings to escape: quotes, backslashes, slashes, every control character alone and inside
    /// text, DEL, non-ASCII (combining marks, U+2028, the last scalar), and long ones.
    public static let hostileStrings: [String] =
        [
            "", "\"", "\\", "\\\"", "/", "a/b", "</script>", "\u{7F}", "é", "日本", "🚐", "\u{2028}\u{2029}", "\u{FEFF}",
            "e\u{301}", "\u{10FFFF}", "\u{FFFD}", String(repeating: "x", count: 5_000),
            String(repeating: "\"\\", count: 300),
        ] + (0..<0x20).map { String(UnicodeScalar(UInt8($0))) } + (0..<0x20).map { "a\(UnicodeScalar(UInt8($0)))b" }

    /// Finite numbers whose shortest form is easy to get wrong: ±0, exponents, subnormals, the
    /// largest, 2^53 and past it, coordinates, times.
    public static let extremeNumbers: [Double] = [
        0, -0.0, 1, -1, 12, 12.5, 0.1, 0.2, 0.3, 1.0 / 3, 2.0 / 3, 1e-5, 1e-7, 0.0001, 123_456.789, 1e15, 1e16, 1e17,
        9_007_199_254_740_992, 9_007_199_254_740_994, 1e21, 1e22, 1e-300, -.leastNonzeroMagnitude,
        .leastNormalMagnitude,
        .leastNonzeroMagnitude, .greatestFiniteMagnitude, -.greatestFiniteMagnitude, .ulpOfOne, 90, -90, 180,
        -180, 89.999_999_999_999_99, 44.068900166666666, 1_700_000_000.123, 1e12, -1e12, 123_456_789_012_345_680,
    ]

    /// Numbers JSON cannot hold, which `JSONEncoder` refuses.
    public static let nonFiniteNumbers: [Double] = [.nan, .infinity, -.infinity, .signalingNaN]

    /// A random finite double: mostly of the kinds a receiver sends, sometimes any finite bit pattern.
    public static func randomDouble(using random: inout some RandomNumberGenerator) -> Double {
        switch Int.random(in: 0..<6, using: &random) {
        case 0:
            let any = Double(bitPattern: random.next())
            return any.isFinite ? any : 0
        case 1: return Double(Int.random(in: -1000...1000, using: &random))
        case 2: return Double(Int.random(in: -1_000_000...1_000_000, using: &random)) / 1000
        case 3: return Double.random(in: -180...180, using: &random)
        case 4: return Double.random(in: 0...1e-3, using: &random)
        default: return Double.random(in: -1e20...1e20, using: &random)
        }
    }

    /// The characters of ``randomString(maximumLength:using:)``: plain, escaped, control, non-ASCII.
    public static let alphabet: [Character] = [
        "a", "-", "/", "\\", "\"", "\n", "\t", "\u{0}", "\u{1F}", "\u{7F}", "é", "🚐", "\u{2028}",
    ]

    /// A random string of up to `maximumLength` characters of ``alphabet``, or now and then one of
    /// ``hostileStrings``.
    public static func randomString(maximumLength: Int = 12, using random: inout some RandomNumberGenerator) -> String {
        if Int.random(in: 0..<8, using: &random) == 0 { return hostileStrings.randomElement(using: &random)! }
        return String(
            (0..<Int.random(in: 0...maximumLength, using: &random)).map { _ in
                alphabet.randomElement(using: &random)!
            })
    }
}
