/// The formats a replay file can have, detected from its content (see ``detect(_:fileName:)``).
public enum FileFormat: String, Hashable, Sendable, CaseIterable {
    /// NMEA 0183 sentences as a receiver sends them (a raw serial capture, `gpspipe -r`, gpsd's test logs).
    case nmea
    /// GPX 1.0 or 1.1 XML.
    case gpx
    /// gpsd JSON lines, as `gpspipe -w` writes them.
    case gpsdJSON = "gpsd-json"

    /// How much of a file ``detect(_:fileName:)`` looks at: 64 KiB.
    public static let sampleSize = 65_536

    /// Detects the format from the first ``sampleSize`` bytes of content, the file name serving only
    /// when the content says nothing (an empty or comment-only file).
    ///
    /// XML (after an optional byte-order mark) is GPX; a line of gpsd JSON with a report in it
    /// (`{"class":"TPV"`, SKY, ... anything but gpsd's greeting VERSION, DEVICES, DEVICE, WATCH and
    /// ERROR) makes gpsd JSON (even with NMEA lines between, as gpsd writes with `"nmea":true`); a
    /// `$ccsss,` sentence start anywhere (also after binary junk) makes NMEA, also after gpsd's
    /// greeting (what `gpspipe -r` writes); the greeting alone makes gpsd JSON.
    public static func detect(_ bytes: [UInt8], fileName: String? = nil) -> FileFormat? {
        let sample = bytes.prefix(sampleSize)
        var index = sample.startIndex
        if sample.starts(with: [0xEF, 0xBB, 0xBF]) { index += 3 }
        while index < sample.endIndex, [0x20, 0x09, 0x0D, 0x0A].contains(sample[index]) { index += 1 }
        if index < sample.endIndex, sample[index] == UInt8(ascii: "<") { return .gpx }
        var sawNMEA = false
        var sawGreeting = false
        var lineStart = index
        let key = Array("{\"class\":\"".utf8)
        let greeting = ["VERSION\"", "DEVICES\"", "DEVICE\"", "WATCH\"", "ERROR\""].map { Array($0.utf8) }
        for position in index..<sample.endIndex {
            let byte = sample[position]
            if position == lineStart, byte == UInt8(ascii: "{"), sample[position...].starts(with: key) {
                let name = sample[(position + key.count)...]
                guard greeting.contains(where: { name.starts(with: $0) }) else { return .gpsdJSON }
                sawGreeting = true
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
        if sawGreeting { return .gpsdJSON }
        let name = fileName?.lowercased() ?? ""
        if name.hasSuffix(".gpx") { return .gpx }
        if name.hasSuffix(".json") || name.hasSuffix(".jsonl") { return .gpsdJSON }
        if name.hasSuffix(".nmea") || name.hasSuffix(".log") || name.hasSuffix(".txt") { return .nmea }
        return nil
    }
}
