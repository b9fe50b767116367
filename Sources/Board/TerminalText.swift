/// Text for a terminal cell grid: display widths, fitting to a width, and removing control characters.
public enum TerminalText {
    /// The columns `text` takes: 2 for wide East Asian characters and emoji, 0 for combining marks, 1 otherwise.
    public static func width(_ text: String) -> Int {
        text.unicodeScalars.reduce(0) { $0 + width(of: $1) }
    }

    /// `text` with every control, format and separator character (such as ESC, which could drive the
    /// terminal) replaced by `?`: names come from any client on the broker.
    public static func sanitized(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isUnsafe) else { return text }
        var scalars = String.UnicodeScalarView()
        for scalar in text.unicodeScalars { scalars.append(isUnsafe(scalar) ? "?" : scalar) }
        return String(scalars)
    }

    /// `text` cut (with `…`) or padded with spaces to exactly `width` columns.
    public static func fit(_ text: String, _ width: Int, alignRight: Bool = false) -> String {
        guard width > 0 else { return "" }
        var used = 0
        var result = String.UnicodeScalarView()
        let total = self.width(text)
        if total <= width {
            let padding = String(repeating: " ", count: width - total)
            return alignRight ? padding + text : text + padding
        }
        for scalar in text.unicodeScalars {
            let cell = Self.width(of: scalar)
            if used + cell > width - 1 { break }
            result.append(scalar)
            used += cell
        }
        return String(result) + "…" + String(repeating: " ", count: width - 1 - used)
    }

    private static func isUnsafe(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .control, .format, .lineSeparator, .paragraphSeparator, .surrogate, .unassigned, .privateUse:
            true
        default:
            false
        }
    }

    private static func width(of scalar: Unicode.Scalar) -> Int {
        switch scalar.properties.generalCategory {
        case .nonspacingMark, .enclosingMark: return 0
        default: break
        }
        switch scalar.value {
        case 0x1100...0x115F, 0x2E80...0x303E, 0x3041...0x33FF, 0x3400...0x4DBF, 0x4E00...0x9FFF, 0xA000...0xA4CF,
            0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE30...0xFE4F, 0xFF00...0xFF60, 0xFFE0...0xFFE6, 0x1F300...0x1F64F,
            0x1F900...0x1F9FF, 0x20000...0x3FFFD:
            return 2
        default:
            return 1
        }
    }
}
