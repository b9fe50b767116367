/// A decoder that turns lines of one input format into location updates, counting what it rejects.
///
/// Implementations are pure and synchronous; the caller splits the input into lines (without the
/// line feed) and calls ``finish(into:)`` at the end of the input.
protocol LineDecoder {
    /// What was read, used, ignored and rejected so far.
    var statistics: SourceStatistics { get set }
    /// Decodes one line, appending the updates it completes.
    mutating func decode(line: UnsafeBufferPointer<UInt8>, into output: inout [LocationUpdate])
    /// Ends the input, appending the updates still pending.
    mutating func finish(into output: inout [LocationUpdate])
}

extension LineDecoder {
    /// Splits `bytes` at line feeds and decodes every line, then finishes; for tests and benchmarks.
    mutating func decodeAll(_ bytes: [UInt8]) -> [LocationUpdate] {
        var output: [LocationUpdate] = []
        bytes.withUnsafeBufferPointer { buffer in
            var start = 0
            for index in 0..<buffer.count where buffer[index] == UInt8(ascii: "\n") {
                decode(line: UnsafeBufferPointer(rebasing: buffer[start..<index]), into: &output)
                start = index + 1
            }
            if start < buffer.count {
                decode(line: UnsafeBufferPointer(rebasing: buffer[start...]), into: &output)
            }
        }
        finish(into: &output)
        return output
    }
}
