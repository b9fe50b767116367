/// The bytes that turn the frame on screen into the next one: only the lines that changed, each
/// written in place (lines are padded to the full width, so nothing needs clearing), inside one synchronized update so the terminal never shows half a frame.
public enum FrameDiff {
    /// Escape sequences to move to a line, reset colours, and bracket an update.
    private enum Escape {
        static let beginUpdate = "\u{1B}[?2026h"
        static let endUpdate = "\u{1B}[?2026l"
        static let reset = "\u{1B}[0m"
        static func moveTo(line: Int) -> String { "\u{1B}[\(line);1H" }
    }

    /// What to write to go from `previous` to `next`; empty when they are equal, so an unchanged board
    /// writes nothing. `previous` is `nil` after a resize or at start: everything is written.
    public static func update(from previous: [String]?, to next: [String]) -> String {
        var output = ""
        for (index, line) in next.enumerated() {
            if let previous, index < previous.count, previous[index] == line { continue }
            output += Escape.moveTo(line: index + 1) + Escape.reset + line + Escape.reset
        }
        guard !output.isEmpty else { return "" }
        return Escape.beginUpdate + output + Escape.endUpdate
    }
}
