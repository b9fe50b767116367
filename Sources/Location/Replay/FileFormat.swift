/// The formats a replay file can have, detected from its content (see ``detect(_:fileName:)``).
public enum FileFormat: String, Hashable, Sendable, CaseIterable {
    /// NMEA 0183 sentences as a receiver sends them (a raw serial capture, `gpspipe -r`, gpsd's test logs).
    case nmea
    /// GPX 1.0 or 1.1 XML.
    case gpx
    /// gpsd JSON lines, as `gpspipe -w` writes them.
    case gpsdJSON = "gpsd-json"

    /// Detects the format from the first 8 KiB of content, the file name serving only when the
    /// content says nothing (an empty or comment-only file).
    ///
    /// XML (after an optional byte-order mark) is GPX; a line starting with `{"class":` makes gpsd
    /// JSON (even with NMEA lines between, as gpsd writes with `"nmea":true`); a `$ccsss,` sentence
    /// start anywhere (also after binary junk) makes NMEA.
    public static func detect(_ bytes: [UInt8], fileName: String? = nil) -> FileFormat? {
        let sample = bytes.prefix(8192)
        var index = sample.startIndex
        if sample.starts(with: [0xEF, 0xBB, 0xBF]) { index += 3 }
        while index < sample.endIndex, [0x20, 0x09, 0x0D, 0x0A].contains(sample[index]) { index += 1 }
        if index < sample.endIndex, sample[index] == UInt8(ascii: "<") { return .gpx }
        var sawNMEA = false
        var lineStart = index
        for position in index..<sample.endIndex {
            let byte = sample[position]
            if position == lineStart, byte == UInt8(ascii: "{") {
                let key = Array("{\"class\":".utf8)
                if sample[position...].starts(with: key) { return .gpsdJSON }
            }
            if byte == UInt8(ascii: "$"), position + 6 < sample.endIndex,
                sample[(position + 1)...(position + 5)].allSatisfy({
                    $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z")
                }),
                sample[position + 6] == UInt8(ascii: ",")
            {
                sawNMEA = true
            }
            if byte == UInt8(ascii: "\n") { lineStart = position + 1 }
        }
        if sawNMEA { return .nmea }
        let name = fileName?.lowercased() ?? ""
        if name.hasSuffix(".gpx") { return .gpx }
        if name.hasSuffix(".json") || name.hasSuffix(".jsonl") { return .gpsdJSON }
        if name.hasSuffix(".nmea") || name.hasSuffix(".log") || name.hasSuffix(".txt") { return .nmea }
        return nil
    }
}
