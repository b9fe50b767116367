import FoundationEssentials
import Logging

/// Decodes an NMEA 0183 stream, line by line, into one update per epoch.
///
/// Every line is framed and checked (``NMEAFraming``): binary junk, truncated sentences, bad
/// checksums and over-long lines are rejected and counted, each reason logged once, and decoding
/// goes on with the next sentence.
public struct NMEADecoder {
    /// Counters of lines read, used, ignored and rejected.
    public var statistics = SourceStatistics()

    private var sentences = NMEASentenceDecoder()
    private var assembler: NMEAEpochAssembler
    private var log: OnceLogger
    private var lineNumber = 0

    /// Creates a decoder.
    ///
    /// - Parameters:
    ///   - fallbackDate: the UTC date to assume when the input never gives one (no RMC or ZDA);
    ///     `nil` drops such fixes, counted as ``FixDropReason/missingDate``. Only its day is used.
    ///   - logger: where the first rejection of each kind is logged (info level); nothing is logged without one.
    public init(fallbackDate: Date? = nil, logger: Logger = .discarding) {
        let fallbackDay = fallbackDate.map { Int(($0.timeIntervalSince1970 / 86_400).rounded(.down)) }
        assembler = NMEAEpochAssembler(fallbackDay: fallbackDay)
        log = OnceLogger(logger: logger)
    }

    /// Decodes a whole NMEA text (for tests and tools): every update, in order.
    public mutating func decode(_ bytes: [UInt8]) -> [LocationUpdate] {
        decodeAll(bytes)
    }
}

extension NMEADecoder: LineDecoder {
    mutating func decode(line: UnsafeBufferPointer<UInt8>, into output: inout [LocationUpdate]) {
        lineNumber += 1
        statistics.linesRead += 1
        statistics.bytesRead += line.count + 1
        NMEAFraming.frames(in: line) { frame in
            switch frame {
            case .empty:
                break
            case .comment:
                statistics.linesIgnored += 1
            case .rejected(let reason):
                reject(reason, line)
            case .sentence(let payload):
                switch sentences.decode(line, payload: payload) {
                case .decoded(let sentence):
                    statistics.linesDecoded += 1
                    assembler.add(sentence, into: &output, statistics: &statistics)
                case .ignored:
                    statistics.linesIgnored += 1
                case .invalid:
                    reject(.invalidField, line)
                }
            }
        }
    }

    mutating func countTooLongLine(bytes: Int) {
        lineNumber += 1
        statistics.linesRead += 1
        statistics.bytesRead += bytes
        statistics.rejected[.tooLong, default: 0] += 1
    }

    mutating func finish(into output: inout [LocationUpdate]) {
        assembler.finish(into: &output, statistics: &statistics)
    }

    private mutating func reject(_ reason: LineRejection, _ line: UnsafeBufferPointer<UInt8>) {
        statistics.rejected[reason, default: 0] += 1
        let number = lineNumber
        log.log(
            "nmea.\(reason.rawValue)", "Rejected NMEA input; later rejections of this kind are only counted",
            metadata: [
                "event": "nmea.input.rejected", "nmea.reason": "\(reason.rawValue)", "nmea.line": "\(number)",
                "nmea.excerpt": "\(printableExcerpt(line))",
            ])
    }
}

/// The first 40 bytes of a line, with anything unprintable as `.`, for log messages.
func printableExcerpt(_ line: UnsafeBufferPointer<UInt8>) -> String {
    String(decoding: line.prefix(40).map { $0 >= 0x20 && $0 < 0x7F ? $0 : UInt8(ascii: ".") }, as: UTF8.self)
}
