import FoundationEssentials
import LiveActivity

/// Checks in a JSON text what Foundation's `JSONDecoder` lets pass or does not explain: an object
/// with the same key twice (the decoder keeps the first, JavaScript and Python the last, so
/// receivers would disagree), and a trailing comma (which the decoder refuses without saying why).
///
/// One pass over the bytes with an explicit stack; it stops without a finding at anything that is
/// not JSON, leaving the decoder to refuse it.
enum JSONShape {
    /// What was found.
    enum Finding: Equatable, CustomStringConvertible {
        /// The key, as a dotted path from the top, appears twice in one object.
        case duplicateKey(String)
        /// A comma right before a closing brace or bracket, at this byte offset.
        case trailingComma(Int)

        var description: String {
            switch self {
            case .duplicateKey(let path): "duplicate key '\(path)'"
            case .trailingComma(let offset): "not valid JSON: a trailing comma at byte \(offset)"
            }
        }
    }

    /// Nesting deeper than this is left to the decoder, which refuses it.
    static let maximumDepth = 512

    private struct Frame {
        var isObject: Bool
        var keys: Set<String> = []
        var key: String? = nil
        var expectsKey = true
    }

    /// The first finding in `data`, or nil.
    static func finding(in data: Data) -> Finding? {
        data.withUnsafeBytes { finding(in: $0.bindMemory(to: UInt8.self)) }
    }

    private static func finding(in bytes: UnsafeBufferPointer<UInt8>) -> Finding? {
        var stack: [Frame] = []
        var index = 0
        var lastComma: Int? = nil
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\n"), UInt8(ascii: "\r"):
                index += 1
                continue
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                guard stack.count < maximumDepth else { return nil }
                stack.append(Frame(isObject: byte == UInt8(ascii: "{")))
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                if let lastComma { return .trailingComma(lastComma) }
                guard stack.popLast() != nil else { return nil }
            case UInt8(ascii: ","):
                lastComma = index
                if !stack.isEmpty, stack[stack.count - 1].isObject { stack[stack.count - 1].expectsKey = true }
                index += 1
                continue
            case UInt8(ascii: "\""):
                guard let end = stringEnd(bytes, from: index) else { return nil }
                if let top = stack.last, top.isObject, top.expectsKey {
                    guard let key = key(UnsafeBufferPointer(rebasing: bytes[index...end])) else { return nil }
                    let path = (stack.dropLast().compactMap(\.key) + [key]).joined(separator: ".")
                    guard stack[stack.count - 1].keys.insert(key).inserted else { return .duplicateKey(path) }
                    stack[stack.count - 1].key = key
                    stack[stack.count - 1].expectsKey = false
                }
                index = end
            default:
                break
            }
            lastComma = nil
            index += 1
        }
        return nil
    }

    /// The index of the closing quote of the string that opens at `start`.
    private static func stringEnd(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int? {
        var index = start + 1
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: "\\"): index += 2
            case UInt8(ascii: "\""): return index
            default: index += 1
            }
        }
        return nil
    }

    /// A key's text, quotes included in `quoted`, with its escapes resolved.
    private static func key(_ quoted: UnsafeBufferPointer<UInt8>) -> String? {
        guard quoted.contains(UInt8(ascii: "\\")) else {
            return String(validating: quoted.dropFirst().dropLast(), as: UTF8.self)
        }
        return try? JSONDecoder().decode(String.self, from: Data(quoted))
    }
}
