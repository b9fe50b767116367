/// A key press the board understands.
public enum BoardKey: Hashable, Sendable {
    /// A printable character.
    case character(Character)
    /// Backspace or Delete.
    case backspace
    /// Enter or Return.
    case enter
    /// Escape on its own.
    case escape
    /// Arrow up.
    case up
    /// Arrow down.
    case down
    /// Page Up.
    case pageUp
    /// Page Down.
    case pageDown
    /// Home.
    case home
    /// End.
    case end
}

/// Turns the bytes a terminal sends in raw mode into ``BoardKey``s; unknown sequences are skipped.
public struct KeyDecoder: Sendable {
    private var pending: [UInt8] = []

    /// Creates a decoder.
    public init() {}

    /// The keys in `bytes`, one read's worth. An escape sequence cut at the end of a read is kept for
    /// the next one, but a lone ESC at the end of a read is the Escape key.
    public mutating func decode(_ bytes: [UInt8]) -> [BoardKey] {
        let input = pending + bytes
        pending = []
        var keys: [BoardKey] = []
        var index = 0
        while index < input.count {
            let byte = input[index]
            switch byte {
            case 0x1B:
                guard index + 1 < input.count else {
                    keys.append(.escape)
                    index += 1
                    continue
                }
                guard input[index + 1] == UInt8(ascii: "[") || input[index + 1] == UInt8(ascii: "O") else {
                    keys.append(.escape)
                    index += 1
                    continue
                }
                // CSI or SS3: parameters and intermediates, then one final byte in 0x40...0x7E.
                var end = index + 2
                while end < input.count, !(0x40...0x7E).contains(input[end]) { end += 1 }
                guard end < input.count else {
                    pending = Array(input[index...])
                    return keys
                }
                if let key = Self.sequence(Array(input[(index + 2)...end])) { keys.append(key) }
                index = end + 1
            case 0x7F, 0x08:
                keys.append(.backspace)
                index += 1
            case 0x0D, 0x0A:
                keys.append(.enter)
                index += 1
            case 0x20...0x7E:
                keys.append(.character(Character(Unicode.Scalar(byte))))
                index += 1
            default:
                index += 1
            }
        }
        return keys
    }

    private static func sequence(_ body: [UInt8]) -> BoardKey? {
        switch String(decoding: body, as: UTF8.self) {
        case "A": .up
        case "B": .down
        case "H", "1~", "7~": .home
        case "F", "4~", "8~": .end
        case "5~": .pageUp
        case "6~": .pageDown
        default: nil
        }
    }
}

extension CaseIterable where Self: Equatable, AllCases.Index == Int {
    /// The case after this one, the first after the last: what a key cycles through.
    var cycled: Self {
        let all = Self.allCases
        return all[(all.firstIndex(of: self)! + 1) % all.count]
    }
}
