/// The on-disk format of the outbox's files (see docs/agent-store.md).
///
/// A segment file is a 20-byte header, `MYOUTBX1`, the index of its first record (UInt64 LE) and
/// the CRC-32 of those 16 bytes (UInt32 LE), followed by records. A record is its body length
/// (UInt32 LE), the CRC-32 of the length bytes and the body (UInt32 LE), and the body: the topic's
/// length (UInt16 LE), the topic in UTF-8 and the payload.
///
/// The cursor file is `MYOUTCR1`, the index of the first undelivered record (UInt64 LE), the
/// number of records dropped (UInt64 LE) and the CRC-32 of the preceding 24 bytes (UInt32 LE).
enum OutboxFormat {
    static let segmentMagic = Array("MYOUTBX1".utf8)
    static let cursorMagic = Array("MYOUTCR1".utf8)
    static let segmentHeaderSize = 20
    static let cursorSize = 28
    static let recordOverhead = 10

    static func segmentName(base: UInt64) -> String {
        let hex = String(base, radix: 16)
        return "segment-" + String(repeating: "0", count: max(0, 16 - hex.count)) + hex + ".log"
    }

    /// The first index of a segment named by `segmentName(base:)`, or nil for any other name.
    static func segmentBase(name: String) -> UInt64? {
        guard name.hasPrefix("segment-"), name.hasSuffix(".log"), name.utf8.count == 28 else { return nil }
        return UInt64(name.dropFirst(8).dropLast(4), radix: 16)
    }

    static func segmentHeader(base: UInt64) -> [UInt8] {
        var bytes = segmentMagic
        bytes.appendLittleEndian(base)
        bytes.appendLittleEndian(CRC32.checksum(bytes))
        return bytes
    }

    /// The first index a segment header names, or nil when the header is not valid.
    static func parseSegmentHeader(_ bytes: [UInt8]) -> UInt64? {
        guard bytes.count >= segmentHeaderSize, Array(bytes[0..<8]) == segmentMagic,
            CRC32.checksum(bytes[0..<16]) == bytes.littleEndian(UInt32.self, at: 16)
        else { return nil }
        return bytes.littleEndian(UInt64.self, at: 8)
    }

    static func encodeRecord(topic: String, payload: [UInt8]) -> [UInt8] {
        let topicBytes = Array(topic.utf8)
        let bodyLength = UInt32(2 + topicBytes.count + payload.count)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(recordOverhead + Int(bodyLength))
        bytes.appendLittleEndian(bodyLength)
        bytes.appendLittleEndian(UInt32(0))
        bytes.appendLittleEndian(UInt16(topicBytes.count))
        bytes.append(contentsOf: topicBytes)
        bytes.append(contentsOf: payload)
        let crc = CRC32.checksum(bytes[8...], continuing: CRC32.checksum(bytes[0..<4]))
        bytes.withUnsafeMutableBytes { $0.storeBytes(of: crc.littleEndian, toByteOffset: 4, as: UInt32.self) }
        return bytes
    }

    /// The length of the complete, intact record at `offset` of `bytes`, or nil when it is torn or damaged.
    static func recordLength(in bytes: [UInt8], at offset: Int, maximumRecordSize: Int) -> Int? {
        guard bytes.count - offset >= 8 else { return nil }
        let bodyLength = Int(bytes.littleEndian(UInt32.self, at: offset))
        guard bodyLength >= 2, bodyLength + 8 <= maximumRecordSize, bytes.count - offset - 8 >= bodyLength else {
            return nil
        }
        let crc = CRC32.checksum(
            bytes[(offset + 8)..<(offset + 8 + bodyLength)], continuing: CRC32.checksum(bytes[offset..<(offset + 4)]))
        guard crc == bytes.littleEndian(UInt32.self, at: offset + 4) else { return nil }
        let topicLength = Int(bytes.littleEndian(UInt16.self, at: offset + 8))
        guard topicLength <= bodyLength - 2 else { return nil }
        return 8 + bodyLength
    }

    /// Decodes the record at `offset` of `bytes`, which `recordLength` has checked or which was
    /// written by this process.
    static func decodeRecord(_ bytes: [UInt8], at offset: Int, length: Int, index: UInt64) -> OutboxRecord {
        let topicLength = Int(bytes.littleEndian(UInt16.self, at: offset + 8))
        let topicStart = offset + 10
        let topic = String(decoding: bytes[topicStart..<(topicStart + topicLength)], as: UTF8.self)
        let payload = Array(bytes[(topicStart + topicLength)..<(offset + length)])
        return OutboxRecord(index: index, topic: topic, payload: payload)
    }

    static func encodeCursor(head: UInt64, dropped: UInt64) -> [UInt8] {
        var bytes = cursorMagic
        bytes.appendLittleEndian(head)
        bytes.appendLittleEndian(dropped)
        bytes.appendLittleEndian(CRC32.checksum(bytes))
        return bytes
    }

    /// The head and dropped count of a cursor file, or nil when it is not valid.
    static func decodeCursor(_ bytes: [UInt8]) -> (head: UInt64, dropped: UInt64)? {
        guard bytes.count == cursorSize, Array(bytes[0..<8]) == cursorMagic,
            CRC32.checksum(bytes[0..<24]) == bytes.littleEndian(UInt32.self, at: 24)
        else { return nil }
        return (bytes.littleEndian(UInt64.self, at: 8), bytes.littleEndian(UInt64.self, at: 16))
    }
}
