/// Finds NMEA 0183 sentences in raw receiver bytes and checks them: framing, printable ASCII,
/// length and checksum. Pure and allocation-free.
enum NMEAFraming {
    /// The longest sentence accepted, from `$` to the checksum. NMEA 0183 allows 82 characters;
    /// receivers exceed it (u-blox, Trimble RTK), so the limit is generous.
    static let maximumLength = 255

    /// How a line of gpsd's JSON starts.
    static let gpsdJSONStart = Array(#"{"class":"#.utf8)

    /// What one line of input holds.
    enum Frame {
        /// A checked sentence: `payload` is the byte range between `$` and `*` (talker, type, fields).
        case sentence(payload: Range<Int>)
        /// A comment (`#` first), as in gpsd's test logs, or a line of gpsd's JSON (`{"class":...`), as
        /// `gpspipe -r` writes before the NMEA it passes through.
        case comment
        /// Nothing but white space.
        case empty
        /// Not usable, for this reason.
        case rejected(LineRejection)
    }

    /// Splits one line (without its line terminator) into the frames it holds: usually one sentence,
    /// but binary junk before a `$`, or a sentence cut off by the next one, give several frames.
    static func frames(in line: UnsafeBufferPointer<UInt8>, _ body: (Frame) -> Void) {
        var start = 0
        var end = line.count
        while start < end, line[start] == 0x20 || line[start] == 0x09 || line[start] == 0x0D { start += 1 }
        while end > start, line[end - 1] == 0x20 || line[end - 1] == 0x09 || line[end - 1] == 0x0D { end -= 1 }
        guard start < end else { return body(.empty) }
        if line[start] == UInt8(ascii: "#") { return body(.comment) }
        if UnsafeBufferPointer(rebasing: line[start..<end]).starts(with: gpsdJSONStart) { return body(.comment) }
        // Resynchronise on every '$' or '!': what precedes the first one is junk.
        var sentenceStart: Int? = nil
        var index = start
        var junkHasBinary = false
        while index < end {
            let byte = line[index]
            if byte == UInt8(ascii: "$") || byte == UInt8(ascii: "!") {
                if let previous = sentenceStart {
                    body(check(line, previous..<index, cutShort: true))
                } else if index > start {
                    body(.rejected(junkHasBinary ? .binary : .unknown))
                }
                sentenceStart = index
            } else if sentenceStart == nil, byte < 0x20 || byte > 0x7E {
                junkHasBinary = true
            }
            index += 1
        }
        if let sentenceStart {
            body(check(line, sentenceStart..<end, cutShort: false))
        } else {
            body(.rejected(junkHasBinary ? .binary : .unknown))
        }
    }

    /// Checks one candidate sentence starting at `$`/`!`. `cutShort` says another sentence began
    /// inside it, so it has no end of its own.
    private static func check(_ line: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, cutShort: Bool) -> Frame {
        var checksum: UInt8 = 0
        var star: Int? = nil
        for index in (range.lowerBound + 1)..<range.upperBound {
            let byte = line[index]
            if byte < 0x20 || byte > 0x7E { return .rejected(.binary) }
            if byte == UInt8(ascii: "*") {
                star = index
                break
            }
            checksum ^= byte
        }
        guard let star, star + 3 <= range.upperBound else { return .rejected(.truncated) }
        guard range.count <= maximumLength else { return .rejected(.tooLong) }
        guard let high = DecimalParsing.hexDigit(line[star + 1]), let low = DecimalParsing.hexDigit(line[star + 2])
        else {
            return .rejected(.truncated)
        }
        // Anything after the two hex digits other than white space means a damaged line.
        if star + 3 < range.upperBound { return .rejected(cutShort ? .truncated : .badChecksum) }
        guard high << 4 | low == checksum else { return .rejected(.badChecksum) }
        return .sentence(payload: (range.lowerBound + 1)..<star)
    }

}
