/// One node of a YAML document: a scalar's text, a sequence or a mapping, with where it starts.
///
/// A scalar is its text as written, once quotes and escapes are undone: YAML's types are not
/// resolved (`~`, `yes`, `0x10` stay text), as the configuration has always read them.
public struct YAMLNode: Hashable, Sendable {
    /// What the node holds.
    public enum Content: Hashable, Sendable {
        /// A scalar's text (empty for an empty value, such as `key:` with nothing after it).
        case scalar(String)
        /// A sequence's items, in order.
        case sequence([YAMLNode])
        /// A mapping's keys and values, in order; no key appears twice.
        case mapping([YAMLPair])
    }

    /// What the node holds.
    public var content: Content
    /// Where the node starts: its line, 1-based.
    public var line: Int
    /// Where the node starts: its column, 1-based, in Unicode scalars (as libyaml counts).
    public var column: Int

    /// Creates a node starting at `line` and `column`.
    public init(_ content: Content, line: Int, column: Int) {
        self.content = content
        self.line = line
        self.column = column
    }

    /// The scalar's text; `nil` for a sequence or a mapping.
    public var scalar: String? {
        if case .scalar(let text) = content { return text }
        return nil
    }
}

/// One key of a YAML mapping and its value.
public struct YAMLPair: Hashable, Sendable {
    /// The key's text (a key is always a scalar here).
    public var key: String
    /// The key's line, 1-based.
    public var line: Int
    /// The key's column, 1-based.
    public var column: Int
    /// The value.
    public var value: YAMLNode

    /// Creates a pair whose key starts at `line` and `column`.
    public init(key: String, line: Int, column: Int, value: YAMLNode) {
        self.key = key
        self.line = line
        self.column = column
        self.value = value
    }
}

/// Why a YAML text was refused: where, what, and what to write instead.
public struct YAMLSyntaxError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The line at fault, 1-based.
    public var line: Int
    /// The column at fault, 1-based, in Unicode scalars.
    public var column: Int
    /// What is wrong and the fix.
    public var message: String

    /// Creates an error at `line` and `column`.
    public init(line: Int, column: Int, _ message: String) {
        self.line = line
        self.column = column
        self.message = message
    }

    /// `line L, column C: MESSAGE`.
    public var description: String { "line \(line), column \(column): \(message)" }
}

/// Reads the YAML that Myeline's configuration files are written in, without Foundation (Yams,
/// the YAML library swift-configuration reads files with, links Foundation and ICU: 45 MB on a
/// tracker's card, issue 24).
///
/// It reads one document of block mappings and block sequences (a sequence may sit at its key's
/// indentation), flow sequences and mappings (`[a, b]`, `{}`, over several lines if need be),
/// plain, single-quoted and double-quoted scalars with YAML's escapes, comments, a document
/// start `---` and end `...`, CRLF or CR line ends and a byte order mark. For these it gives the
/// node tree libyaml (Yams) gives, which `YAMLReaderTests` checks against Yams itself.
///
/// Everything else is refused with the line, the column and what to write instead: anchors and
/// aliases, tags, directives, block scalars (`|`, `>`), explicit keys (`?`), a list or a mapping
/// as a key, several documents, tabs in the indentation, a scalar continued on the next line,
/// duplicate keys, U+0085 written as such (they are line breaks in YAML 1.1:
/// write `\N`, `\L`, `\P` in double quotes), control characters, and nesting deeper than
/// ``maximumDepth``.
public enum YAMLReader {
    /// The deepest nesting of sequences and mappings read: a guard against a stack overflow (a
    /// configuration nests three levels).
    public static let maximumDepth = 64

    /// The document's root node; `nil` when the text holds no node (empty, or comments only).
    ///
    /// - Throws: ``YAMLSyntaxError`` at the first construct outside the subset, or invalid YAML.
    public static func parse(_ text: String) throws(YAMLSyntaxError) -> YAMLNode? {
        var parser = YAMLParser(Array(text.unicodeScalars))
        return try parser.document()
    }
}

/// The parser: recursive descent over the text's Unicode scalars, by indentation.
///
/// Each block-level function returns with the position at the first character of the next line
/// that holds something (past blank and comment lines), or at the end.
private struct YAMLParser {
    let text: [Unicode.Scalar]
    var index = 0
    var line = 1
    var lineStart = 0
    var depth = 0

    init(_ text: [Unicode.Scalar]) {
        self.text = text
    }

    // MARK: - Positions and characters

    var column: Int { index - lineStart + 1 }
    var indentation: Int { index - lineStart }
    var atEnd: Bool { index >= text.count }

    func character(_ offset: Int = 0) -> Unicode.Scalar? {
        index + offset < text.count ? text[index + offset] : nil
    }

    static func isBlank(_ c: Unicode.Scalar?) -> Bool { c == " " || c == "\t" }
    static func isBreak(_ c: Unicode.Scalar?) -> Bool { c == "\n" || c == "\r" }
    /// A blank, a line break or the end: what must follow `-`, `:` or `---` to make them indicators.
    static func isBlankOrEnd(_ c: Unicode.Scalar?) -> Bool { c == nil || isBlank(c) || isBreak(c) }
    static func isFlowIndicator(_ c: Unicode.Scalar?) -> Bool {
        c == "," || c == "[" || c == "]" || c == "{" || c == "}"
    }

    func error(_ message: String) -> YAMLSyntaxError {
        YAMLSyntaxError(line: line, column: column, message)
    }

    func node(_ content: YAMLNode.Content, line: Int, column: Int) -> YAMLNode {
        YAMLNode(content, line: line, column: column)
    }

    mutating func consumeBreak() {
        if character() == "\r", character(1) == "\n" { index += 1 }
        index += 1
        line += 1
        lineStart = index
    }

    mutating func skipBlanks() {
        while Self.isBlank(character()) { index += 1 }
    }

    mutating func skipComment() {
        while let c = character(), !Self.isBreak(c) { index += 1 }
    }

    /// Past the rest of this line, which may hold only blanks and a comment, and its line break.
    mutating func endLine(after what: String) throws(YAMLSyntaxError) {
        skipBlanks()
        if character() == "#" { skipComment() }
        guard atEnd || Self.isBreak(character()) else {
            throw error(
                "unexpected text after \(what): put one value on a line, and quote a value that contains '#' after a space or ': '"
            )
        }
        if !atEnd { consumeBreak() }
    }

    /// Past blank and comment lines to the next line that holds something; its indentation, or
    /// `nil` at the end. The position must be at a line's start.
    mutating func nextContentLine() throws(YAMLSyntaxError) -> Int? {
        while !atEnd {
            while character() == " " { index += 1 }
            if character() == "\t" {
                throw error("a tab in the indentation: indent with spaces only (YAML does not allow tabs there)")
            }
            if character() == "#" { skipComment() }
            if atEnd { return nil }
            if Self.isBreak(character()) {
                consumeBreak()
                continue
            }
            return indentation
        }
        return nil
    }

    /// Whether the line holds `---` or `...` at its start, alone or followed by a blank.
    func isMarker(_ marker: Unicode.Scalar) -> Bool {
        indentation == 0 && character() == marker && character(1) == marker && character(2) == marker
            && Self.isBlankOrEnd(character(3))
    }

    mutating func enter() throws(YAMLSyntaxError) {
        depth += 1
        if depth > YAMLReader.maximumDepth {
            throw error("lists and mappings nested more than \(YAMLReader.maximumDepth) levels deep: flatten the file")
        }
    }

    /// Refuses the characters YAML forbids and the line breaks that only YAML 1.1 knows.
    func checkCharacters() throws(YAMLSyntaxError) {
        func hex(_ value: UInt32) -> String {
            let digits = String(value, radix: 16, uppercase: true)
            return "U+" + String(repeating: "0", count: max(0, 4 - digits.count)) + digits
        }
        var line = 1
        var lineStart = 0
        for (offset, c) in text.enumerated() {
            let value = c.value
            let allowed =
                value == 0x09 || value == 0x0A || value == 0x0D || (0x20...0x7E).contains(value)
                || (0xA0...0xD7FF).contains(value) || (0xE000...0xFFFD).contains(value) || value >= 0x10000
            // U+2028 and U+2029 break lines too, and libyaml refuses them as Yams does: refused the same way.
            if value == 0x85 || value == 0x2028 || value == 0x2029 {
                throw YAMLSyntaxError(
                    line: line, column: offset - lineStart + 1,
                    "the character \(hex(value)) is a line break in YAML: write it as \\N, \\L or \\P in a double-quoted value"
                )
            }
            if !allowed {
                throw YAMLSyntaxError(
                    line: line, column: offset - lineStart + 1,
                    "the control character \(hex(value)) is not allowed in YAML: remove it, or write it as an escape in a double-quoted value"
                )
            }
            if value == 0x0A || (value == 0x0D && (offset + 1 == text.count || text[offset + 1] != "\n")) {
                line += 1
                lineStart = offset + 1
            }
        }
    }

    // MARK: - The document

    mutating func document() throws(YAMLSyntaxError) -> YAMLNode? {
        try checkCharacters()
        if character() == "\u{FEFF}" {
            index += 1
            lineStart = index
        }
        var indent = try nextContentLine()
        if indent == 0, character() == "%" {
            throw error("directives (%YAML, %TAG) are not read: remove the line")
        }
        if indent != nil, isMarker("-") {
            index += 3
            try endLine(after: "the document start '---'")
            indent = try nextContentLine()
        }
        guard indent != nil, !isMarker(".") else { return try documentEnd(nil) }
        let root = try blockNode(parentIndent: -1)
        return try documentEnd(root)
    }

    /// Past an optional `...`; nothing may follow it.
    mutating func documentEnd(_ root: YAMLNode?) throws(YAMLSyntaxError) -> YAMLNode? {
        guard !atEnd else { return root }
        if isMarker("-") {
            throw error(
                "a second document ('---'): a configuration file holds one; remove this line and what follows, or merge them"
            )
        }
        if isMarker(".") {
            index += 3
            try endLine(after: "the document end '...'")
            if try nextContentLine() != nil {
                throw error("text after the document end '...': a configuration file holds one document; remove it")
            }
            return root
        }
        throw error(
            "this line does not continue the list or mapping above it: align it with the keys or items it belongs with")
    }

    // MARK: - Block nodes

    /// The node at the position (a line's first character, or after `- `), whose parent is indented `parentIndent`.
    mutating func blockNode(parentIndent: Int) throws(YAMLSyntaxError) -> YAMLNode {
        if character() == "-", Self.isBlankOrEnd(character(1)) { return try blockSequence(indent: indentation) }
        if isKeyAhead() { return try blockMapping(indent: indentation) }
        let value = try inlineNode()
        try endValue(parentIndent: parentIndent, after: "the value")
        return value
    }

    /// Past the rest of a value's line and the blank lines after it; refuses a `:` after a list
    /// or a mapping (a key that is not a name) and a next line indented under the value.
    mutating func endValue(parentIndent: Int, after what: String) throws(YAMLSyntaxError) {
        skipBlanks()
        if character() == ":", Self.isBlankOrEnd(character(1)) {
            throw error("a list or a mapping as a key: keys are names, such as device:")
        }
        try endLine(after: what)
        try continuationCheck(parentIndent: parentIndent)
    }

    /// A scalar or flow collection on one line, in block context.
    mutating func inlineNode() throws(YAMLSyntaxError) -> YAMLNode {
        try refuseIndicator()
        switch character() {
        case "[", "{": return try flowNode()
        case "\"", "'": return try quotedScalar()
        default:
            let (line, column) = (self.line, self.column)
            let text = try plainScalar(inFlow: false)
            if character() == ":" {
                throw error(
                    "a mapping cannot start on the line of its key or after a value: put its keys on their own lines, indented under the key"
                )
            }
            return node(.scalar(text), line: line, column: column)
        }
    }

    /// Refuses, after a value, a next line indented under it: YAML would continue the value there.
    mutating func continuationCheck(parentIndent: Int) throws(YAMLSyntaxError) {
        if let next = try nextContentLine(), next > parentIndent {
            throw error(
                "this line is indented under a value, which would continue it: write the value on one line (in quotes if need be), or align this line with the keys"
            )
        }
    }

    /// Whether a mapping key (a plain or quoted scalar, then `:` and a blank) starts at the position.
    mutating func isKeyAhead() -> Bool {
        let saved = (index, line, lineStart)
        defer { (index, line, lineStart) = saved }
        switch character() {
        case "\"", "'":
            guard (try? quotedScalar()) != nil else { return false }
            skipBlanks()
        case "[", "{":
            return false
        default:
            guard (try? plainScalar(inFlow: false)) != nil else { return false }
        }
        return character() == ":" && Self.isBlankOrEnd(character(1))
    }

    mutating func blockMapping(indent: Int) throws(YAMLSyntaxError) -> YAMLNode {
        try enter()
        defer { depth -= 1 }
        let (mappingLine, mappingColumn) = (line, column)
        var pairs: [YAMLPair] = []
        var seen: [String: Int] = [:]
        while true {
            let (keyLine, keyColumn) = (line, column)
            let key: String
            switch character() {
            case "\"", "'": key = try quotedScalar().scalar!
            case "-" where Self.isBlankOrEnd(character(1)):
                throw error("a list item where a key was expected: indent the list under its key, or remove the '- '")
            default:
                try refuseIndicator()
                if character() == "[" || character() == "{" {
                    throw error("a list or a mapping as a key: keys are names, such as device:")
                }
                key = try plainScalar(inFlow: false)
            }
            skipBlanks()
            guard character() == ":", Self.isBlankOrEnd(character(1)) else {
                throw error(
                    "expected ': ' after the key \"\(key)\": write key: value, or quote a value that contains ': '")
            }
            if let first = seen[key] {
                throw YAMLSyntaxError(
                    line: keyLine, column: keyColumn,
                    "the key \"\(key)\" appears twice in this mapping (first on line \(first)): keep one")
            }
            seen[key] = keyLine
            index += 1
            skipBlanks()
            let value: YAMLNode
            if atEnd || Self.isBreak(character()) || character() == "#" {
                let (emptyLine, emptyColumn) = (line, column)
                try endLine(after: "the key")
                let next = try nextContentLine()
                if let next, next > indent {
                    value = try blockNode(parentIndent: indent)
                } else if next == indent, character() == "-", Self.isBlankOrEnd(character(1)) {
                    value = try blockSequence(indent: indent)
                } else {
                    value = node(.scalar(""), line: emptyLine, column: emptyColumn)
                }
            } else {
                if character() == "-", Self.isBlankOrEnd(character(1)) {
                    throw error(
                        "a list cannot start on the line of its key: put each item on its own line, starting with '- '")
                }
                value = try inlineNode()
                try endValue(parentIndent: indent, after: "the value of \"\(key)\"")
            }
            pairs.append(YAMLPair(key: key, line: keyLine, column: keyColumn, value: value))
            guard !atEnd, indentation >= indent, !isMarker("-"), !isMarker(".") else { break }
            if indentation > indent {
                throw error(
                    "this line is indented more than the keys above it: align it with them, or indent it under a key that has no value"
                )
            }
        }
        return node(.mapping(pairs), line: mappingLine, column: mappingColumn)
    }

    mutating func blockSequence(indent: Int) throws(YAMLSyntaxError) -> YAMLNode {
        try enter()
        defer { depth -= 1 }
        let (sequenceLine, sequenceColumn) = (line, column)
        var items: [YAMLNode] = []
        while character() == "-", Self.isBlankOrEnd(character(1)) {
            let (itemLine, itemColumn) = (line, column)
            index += 1
            while character() == " " { index += 1 }
            if character() == "\t" {
                // libyaml refuses a tab after '- ' (where an item's indentation is counted).
                throw error("a tab after '- ': separate the item from its '-' with spaces")
            }
            if atEnd || Self.isBreak(character()) || character() == "#" {
                try endLine(after: "'-'")
                if let next = try nextContentLine(), next > indent {
                    items.append(try blockNode(parentIndent: indent))
                } else {
                    items.append(node(.scalar(""), line: itemLine, column: itemColumn))
                }
            } else {
                items.append(try blockNode(parentIndent: indent))
            }
            guard !atEnd, indentation >= indent, !isMarker("-"), !isMarker(".") else { break }
            if indentation > indent {
                throw error("this line is indented more than the list's items: align its '- ' with theirs")
            }
        }
        return node(.sequence(items), line: sequenceLine, column: sequenceColumn)
    }

    // MARK: - Flow nodes

    /// Past blanks, line breaks and comments inside `[ ]` or `{ }`.
    mutating func skipFlowSpace() {
        while true {
            if Self.isBlank(character()) {
                index += 1
            } else if Self.isBreak(character()) {
                consumeBreak()
            } else if character() == "#" {
                skipComment()
            } else {
                return
            }
        }
    }

    mutating func flowNode() throws(YAMLSyntaxError) -> YAMLNode {
        try refuseIndicator()
        let (nodeLine, nodeColumn) = (line, column)
        switch character() {
        case "[":
            try enter()
            defer { depth -= 1 }
            index += 1
            var items: [YAMLNode] = []
            skipFlowSpace()
            while character() != "]" {
                items.append(try flowItem())
                skipFlowSpace()
                if character() == ":" {
                    throw error("a key: value pair inside [ ]: write a mapping as {key: value}")
                }
                try flowSeparator(closing: "]")
            }
            index += 1
            return node(.sequence(items), line: nodeLine, column: nodeColumn)
        case "{":
            try enter()
            defer { depth -= 1 }
            index += 1
            var pairs: [YAMLPair] = []
            var seen: [String: Int] = [:]
            skipFlowSpace()
            while character() != "}" {
                let (keyLine, keyColumn) = (line, column)
                let keyNode = try flowItem()
                guard let key = keyNode.scalar else {
                    throw YAMLSyntaxError(
                        line: keyLine, column: keyColumn, "a list or a mapping as a key: keys are names, such as name:")
                }
                if let first = seen[key] {
                    throw YAMLSyntaxError(
                        line: keyLine, column: keyColumn,
                        "the key \"\(key)\" appears twice in this mapping (first on line \(first)): keep one")
                }
                seen[key] = keyLine
                skipFlowSpace()
                var value = node(.scalar(""), line: line, column: column)
                if character() == ":" {
                    index += 1
                    skipFlowSpace()
                    if character() != ",", character() != "}" { value = try flowItem() }
                    skipFlowSpace()
                }
                pairs.append(YAMLPair(key: key, line: keyLine, column: keyColumn, value: value))
                try flowSeparator(closing: "}")
            }
            index += 1
            return node(.mapping(pairs), line: nodeLine, column: nodeColumn)
        case "\"", "'":
            return try quotedScalar()
        default:
            return try flowItem()
        }
    }

    /// One item of a flow collection: a nested collection, a quoted or a plain scalar.
    mutating func flowItem() throws(YAMLSyntaxError) -> YAMLNode {
        guard !atEnd else { throw error("the file ends inside [ ] or { }: close it") }
        if character() == "]" || character() == "}" || character() == "," {
            throw error("a value is missing before '\(character()!)': remove the extra ',' or add the value")
        }
        if character() == "-", Self.isBlankOrEnd(character(1)) {
            throw error("'- ' inside [ ] or { }: write the items separated by commas")
        }
        switch character() {
        case "[", "{", "\"", "'": return try flowNode()
        default:
            try refuseIndicator()
            let (itemLine, itemColumn) = (line, column)
            let text = try plainScalar(inFlow: true)
            return node(.scalar(text), line: itemLine, column: itemColumn)
        }
    }

    /// Past the `,` after an item (a last one may have one too), or at the closing bracket.
    mutating func flowSeparator(closing: Unicode.Scalar) throws(YAMLSyntaxError) {
        if character() == "," {
            index += 1
            skipFlowSpace()
            return
        }
        guard character() == closing else {
            if atEnd { throw error("the file ends inside [ ] or { }: close it with '\(closing)'") }
            throw error(
                "expected ',' or '\(closing)' here: separate the items with commas, and quote an item that spans lines")
        }
    }

    // MARK: - Scalars

    static func isIndicator(_ c: Unicode.Scalar?) -> Bool {
        guard let c else { return false }
        return "-?:,[]{}#&*!|>'\"%@`".unicodeScalars.contains(c)
    }

    /// Refuses what this reader leaves out, at a node's first character.
    func refuseIndicator() throws(YAMLSyntaxError) {
        switch character() {
        case "&": throw error("anchors (&name) are not read: write the value out")
        case "*": throw error("aliases (*name) are not read: write the value out")
        case "!": throw error("tags (!tag) are not read: remove the tag; quote the value to keep it text")
        case "|", ">":
            throw error(
                "block scalars ('|', '>') are not read: write the value on one line, in double quotes with \\n for a line break"
            )
        case "?" where Self.isBlankOrEnd(character(1)):
            throw error("explicit keys ('? ') are not read: write key: value")
        case "%", "@", "`":
            throw error("a value cannot start with '\(character()!)': quote it")
        default: return
        }
    }

    /// A plain (unquoted) scalar up to the end of its line, a `: `, a ` #` or, in `[ ]` and `{ }`, a flow indicator.
    mutating func plainScalar(inFlow: Bool) throws(YAMLSyntaxError) -> String {
        let start = index
        if let c = character(), Self.isIndicator(c) {
            // `-` starts a scalar when a character other than a blank follows (`-5`); so do `?` and
            // `:` outside `[ ]` and `{ }` (`:x`), where libyaml reads them as a key's indicators.
            let startsScalar = (c == "-" || (!inFlow && (c == "?" || c == ":"))) && !Self.isBlankOrEnd(character(1))
            guard startsScalar else { throw error("a value cannot start with '\(c)': quote it") }
            index += 1
        }
        var end = index
        while let c = character(), !Self.isBreak(c) {
            if c == ":" {
                let next = character(1)
                if Self.isBlankOrEnd(next) { break }
                if inFlow, Self.isFlowIndicator(next) {
                    throw error("a ':' before '\(next!)' inside [ ] or { }: quote the value, or give the key a value")
                }
            }
            if inFlow, Self.isFlowIndicator(c) { break }
            if Self.isBlank(c) {
                if character(1) == "#" { break }
            } else {
                end = index + 1
            }
            index += 1
        }
        index = end
        let scalars = text[start..<end]
        if inFlow {
            // A plain scalar in `[ ]` or `{ }` may go on over the next line: refuse that.
            let saved = (index, line, lineStart)
            skipFlowSpace()
            let next = character()
            let continues = line != saved.1 && next != nil && !Self.isFlowIndicator(next) && next != ":"
            if continues {
                throw error("this value goes on from the line above: write it on one line, in quotes if need be")
            }
            (index, line, lineStart) = saved
        }
        var string = ""
        string.unicodeScalars.append(contentsOf: scalars)
        return string
    }

    /// A single- or double-quoted scalar on one line, with its escapes undone.
    mutating func quotedScalar() throws(YAMLSyntaxError) -> YAMLNode {
        let (startLine, startColumn) = (line, column)
        let quote = character()!
        index += 1
        var value = String.UnicodeScalarView()
        while true {
            guard let c = character() else {
                throw YAMLSyntaxError(
                    line: startLine, column: startColumn, "the quoted value is not closed: end it with \(quote)")
            }
            if Self.isBreak(c) {
                throw YAMLSyntaxError(
                    line: startLine, column: startColumn,
                    "the quoted value goes on over the next line: close it on this line (in double quotes, \\n is a line break)"
                )
            }
            index += 1
            if c == quote {
                if quote == "'", character() == "'" {
                    index += 1
                    value.append("'")
                    continue
                }
                break
            }
            if quote == "\"", c == "\\" {
                value.append(try escape())
            } else {
                value.append(c)
            }
        }
        return node(.scalar(String(value)), line: startLine, column: startColumn)
    }

    /// The character an escape of a double-quoted scalar stands for; the position is past the `\`.
    mutating func escape() throws(YAMLSyntaxError) -> Unicode.Scalar {
        guard let c = character(), !Self.isBreak(c) else {
            throw error("a '\\' at the end of the line continues the value on the next: close the value on this line")
        }
        index += 1
        let simple: [Unicode.Scalar: Unicode.Scalar] = [
            "0": "\u{0}", "a": "\u{7}", "b": "\u{8}", "t": "\t", "\t": "\t", "n": "\n", "v": "\u{B}", "f": "\u{C}",
            "r": "\r", "e": "\u{1B}", " ": " ", "\"": "\"", "/": "/", "\\": "\\", "N": "\u{85}", "_": "\u{A0}",
            "L": "\u{2028}", "P": "\u{2029}",
        ]
        if let scalar = simple[c] { return scalar }
        let digits: Int
        switch c {
        case "x": digits = 2
        case "u": digits = 4
        case "U": digits = 8
        default:
            index -= 1
            throw error("unknown escape '\\\(c)': use \\\\ for a backslash, or single quotes, where '\\' is text")
        }
        var value: UInt32 = 0
        for _ in 0..<digits {
            guard let digit = character(), let number = Int(String(digit), radix: 16) else {
                throw error(
                    "\\\(c) needs \(digits) hexadecimal digits, such as \(c == "x" ? "\\x41" : c == "u" ? "\\u00e9" : "\\U0001F600")"
                )
            }
            value = value << 4 | UInt32(number)
            index += 1
        }
        guard let scalar = Unicode.Scalar(value) else {
            throw error(
                "the escape is not a Unicode character (a surrogate, or beyond U+10FFFF): write the character itself")
        }
        return scalar
    }
}
