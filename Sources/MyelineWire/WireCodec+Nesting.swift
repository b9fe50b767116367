extension WireCodec {
    /// The deepest arrays and objects may nest in any JSON that Myeline reads from the network: 64.
    ///
    /// Nothing in the contract comes near it (an attribute's value may nest ``WireValue/maximumDepth``
    /// levels below the payload's top), and `JSONDecoder` must not see deeper nesting: its scanner
    /// recurses once per level, allows 512, and traps (swift-foundation, Swift 6.3) when the 513th
    /// level opens at the last byte of its input, locating its own error; the fuzzer found it. A
    /// payload nested deeper is refused before any parser reads it.
    public static let maximumNesting = 64

    /// The offset of the first `[` or `{` opened deeper than ``maximumNesting``, or nil.
    ///
    /// One pass without recursion and without checking anything else: brackets inside strings do
    /// not count (a backslash escapes the next byte), and a closing bracket too many is ignored;
    /// whether the text is JSON at all is the parsers' to say.
    public static func excessiveNesting(in bytes: some Sequence<UInt8>) -> Int? {
        var depth = 0
        var inString = false
        var escaped = false
        for (offset, byte) in bytes.enumerated() {
            if inString {
                if escaped {
                    escaped = false
                } else if byte == UInt8(ascii: "\\") {
                    escaped = true
                } else if byte == UInt8(ascii: "\"") {
                    inString = false
                }
                continue
            }
            switch byte {
            case UInt8(ascii: "\""):
                inString = true
            case UInt8(ascii: "["), UInt8(ascii: "{"):
                depth += 1
                if depth > maximumNesting { return offset }
            case UInt8(ascii: "]"), UInt8(ascii: "}"):
                depth = max(0, depth - 1)
            default:
                break
            }
        }
        return nil
    }
}
