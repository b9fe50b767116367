/// A decoder that turns lines of one input format into location updates, counting what it rejects.
///
/// Implementations are pure and synchronous; the caller splits the input into lines (without the
/// line feed) and calls ``finish(into:)`` at the end of the input.
protocol LineDecoder {
    /// What was read, used, ignored and rejected so far.
    var statistics: SourceStatistics { get set }
    /// Decodes one line, appending the updates it completes.
    mutating func decode(line: UnsafeBufferPointer<UInt8>, into output: inout [LocationUpdate])
    /// Counts a line of `bytes` bytes (line feed included) that was discarded unread for being longer
    /// than ``LineSplitter/maximumLineLength``.
    mutating func countTooLongLine(bytes: Int)
    /// Ends the input, appending the updates still pending.
    mutating func finish(into output: inout [LocationUpdate])
}

extension LineDecoder {
    /// Splits `bytes` at line feeds and decodes every line, then finishes; for tests and benchmarks.
    mutating func decodeAll(_ bytes: [UInt8]) -> [LocationUpdate] {
        var output: [LocationUpdate] = []
        var splitter = LineSplitter()
        bytes.withUnsafeBufferPointer { splitter.split($0, into: &self, output: &output) }
        splitter.finish(into: &self, output: &output)
        finish(into: &output)
        return output
    }
}

/// Splits input that comes in chunks into lines for a ``LineDecoder``. A line longer than
/// ``maximumLineLength`` (binary junk without a line feed) is discarded unread and counted as
/// ``LineRejection/tooLong``, so that memory stays bounded whatever the input.
struct LineSplitter {
    /// The longest line kept across chunks: 64 KiB, far beyond gpsd's 10,240-byte messages.
    static let maximumLineLength = 1 << 16

    private var carry: [UInt8] = []
    private var discarding = false
    /// The bytes of the line being discarded so far.
    private var discarded = 0

    /// Decodes every line that `chunk` completes.
    mutating func split<D: LineDecoder>(
        _ chunk: UnsafeBufferPointer<UInt8>, into decoder: inout D, output: inout [LocationUpdate]
    ) {
        var start = 0
        for index in 0..<chunk.count where chunk[index] == UInt8(ascii: "\n") {
            line(UnsafeBufferPointer(rebasing: chunk[start..<index]), decoder: &decoder, output: &output)
            start = index + 1
        }
        guard start < chunk.count else { return }
        let rest = UnsafeBufferPointer(rebasing: chunk[start...])
        if discarding {
            discarded += rest.count
        } else if carry.count + rest.count > Self.maximumLineLength {
            discarded = carry.count + rest.count
            carry.removeAll(keepingCapacity: false)
            discarding = true
        } else {
            carry.append(contentsOf: rest)
        }
    }

    /// Decodes the last line, if the input does not end with a line feed.
    mutating func finish<D: LineDecoder>(into decoder: inout D, output: inout [LocationUpdate]) {
        if discarding {
            decoder.countTooLongLine(bytes: discarded)
        } else if !carry.isEmpty {
            carry.withUnsafeBufferPointer { decoder.decode(line: $0, into: &output) }
        }
        carry = []
        discarding = false
        discarded = 0
    }

    private mutating func line<D: LineDecoder>(
        _ piece: UnsafeBufferPointer<UInt8>, decoder: inout D, output: inout [LocationUpdate]
    ) {
        if discarding {
            decoder.countTooLongLine(bytes: discarded + piece.count + 1)
            discarding = false
            discarded = 0
            return
        }
        if carry.isEmpty {
            if piece.count > Self.maximumLineLength {
                decoder.countTooLongLine(bytes: piece.count + 1)
            } else {
                decoder.decode(line: piece, into: &output)
            }
        } else if carry.count + piece.count > Self.maximumLineLength {
            decoder.countTooLongLine(bytes: carry.count + piece.count + 1)
            carry.removeAll(keepingCapacity: true)
        } else {
            carry.append(contentsOf: piece)
            carry.withUnsafeBufferPointer { decoder.decode(line: $0, into: &output) }
            carry.removeAll(keepingCapacity: true)
        }
    }
}
