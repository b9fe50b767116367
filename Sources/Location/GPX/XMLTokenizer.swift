/// A strict, streaming XML tokenizer, enough for GPX: fed chunks of a document, it reports start
/// tags (with their attributes), end tags and text to a handler, in constant memory.
///
/// It reads UTF-8 (or ASCII) as bytes: elements, attributes in either quote style, namespace
/// prefixes (kept in the name; ``XMLName/localName`` drops them), the five predefined entities and
/// numeric character references, CDATA sections, comments and processing instructions (skipped),
/// one XML declaration and one DOCTYPE before the root (skipped, internal subset included). No
/// entity declared in a DOCTYPE is ever expanded: any other reference (`&name;`) is kept as written,
/// so a "billion laughs" document costs what it weighs.
///
/// What is not well-formed is an error that stops the document (``XMLError``): a tag that does not
/// close, an end tag that does not match, a duplicate attribute, text outside the root, a second
/// root, an unterminated comment, CDATA, instruction or DOCTYPE, a document that ends before its
/// root element does. Control characters (NUL, ...), which XML does not allow, are counted
/// (``controlCharacters``) and read on, as binary noise in a text.
///
/// Memory is bounded: a piece of markup (a tag with its attributes, a comment, an instruction, a
/// DOCTYPE) longer than ``maximumMarkupLength`` and elements nested deeper than ``maximumDepth``
/// are errors; text is handed over in pieces as it comes, however long.
struct XMLTokenizer {
    /// The longest tag, comment, instruction or DOCTYPE accepted: 1 MiB.
    static let maximumMarkupLength = 1 << 20
    /// The deepest nesting accepted.
    static let maximumDepth = 100_000
    /// The most bytes of open element names kept (for matching end tags): 1 MiB.
    static let maximumOpenNameBytes = 1 << 20

    /// Where the document is.
    private enum Place {
        /// Before the root element: an XML declaration, DOCTYPE, comments, instructions.
        case prolog
        /// Inside the root element.
        case content
        /// After the root element: comments and instructions only.
        case epilog
    }

    private var buffer: [UInt8] = []
    private var start = 0
    private var place = Place.prolog
    private var atDocumentStart = true
    private var sawDoctype = false
    /// The names of the open elements, back to back, and where each starts.
    private var openNames: [UInt8] = []
    private var openNameStarts: [Int] = []
    private var attributes: [XMLAttribute] = []
    private var decoded: [UInt8] = []
    /// Bytes consumed before `buffer[0]`, for error positions.
    private var consumed = 0
    /// Control characters read and skipped.
    private(set) var controlCharacters = 0

    init() {
        buffer.reserveCapacity(1 << 16)
        attributes.reserveCapacity(8)
    }

    /// The element nesting depth right now (0 outside the root).
    var depth: Int { openNameStarts.count }

    /// Whether the root element was opened and closed.
    var isComplete: Bool { place == .epilog }

    /// Tokenizes `chunk`, the next bytes of the document, reporting what it completes to `handler`;
    /// an incomplete token at its end waits for the next chunk.
    mutating func feed<H: XMLHandler>(_ chunk: UnsafeBufferPointer<UInt8>, to handler: inout H) throws(XMLError) {
        if start > 0 {
            consumed += start
            buffer.removeSubrange(0..<start)
            start = 0
        }
        buffer.append(contentsOf: chunk)
        try run(atEnd: false, handler: &handler)
    }

    /// Ends the document: what is left must complete it.
    mutating func finish<H: XMLHandler>(to handler: inout H) throws(XMLError) {
        try run(atEnd: true, handler: &handler)
        guard place == .epilog else {
            throw error(
                place == .prolog
                    ? "no root element: not an XML document" : "the document ends before its root element does",
                at: buffer.count)
        }
    }

    private mutating func run<H: XMLHandler>(atEnd: Bool, handler: inout H) throws(XMLError) {
        let count = buffer.count
        var position = start
        defer { start = position }
        try buffer.withUnsafeBufferPointer { (bytes) throws(XMLError) in
            if atDocumentStart {
                // A byte-order mark, then maybe the XML declaration: both only at the very start.
                if count - position < 8 && !atEnd { return }
                if bytes[position...].starts(with: [0xEF, 0xBB, 0xBF]) { position += 3 }
                atDocumentStart = false
                if bytes[position...].starts(with: Self.declarationStart) {
                    guard let end = Self.find(Self.instructionEnd, in: bytes, from: position + 5, limit: count) else {
                        if atEnd { throw error("the XML declaration does not end", at: position) }
                        atDocumentStart = true
                        return
                    }
                    position = end + 2
                }
            }
            while position < count {
                let byte = bytes[position]
                if byte != UInt8(ascii: "<") {
                    guard let next = try text(bytes, from: position, count: count, atEnd: atEnd, handler: &handler)
                    else {
                        return
                    }
                    position = next
                    continue
                }
                guard let next = try markup(bytes, at: position, count: count, atEnd: atEnd, handler: &handler) else {
                    if count - position > Self.maximumMarkupLength {
                        throw error("a tag, comment or declaration longer than 1 MiB", at: position)
                    }
                    if atEnd { throw error("the document ends inside a tag", at: position) }
                    return
                }
                guard next - position <= Self.maximumMarkupLength else {
                    throw error("a tag, comment or declaration longer than 1 MiB", at: position)
                }
                position = next
            }
        }
    }

    // MARK: Text

    /// Reads text from `position` up to the next `<` or the end of what is there; returns where it
    /// stopped, or `nil` when it must wait for more (an entity reference cut by the chunk's end).
    private mutating func text<H: XMLHandler>(
        _ bytes: UnsafeBufferPointer<UInt8>, from position: Int, count: Int, atEnd: Bool, handler: inout H
    ) throws(XMLError) -> Int? {
        var index = position
        var pieceStart = position
        func flush(_ end: Int, _ handler: inout H) {
            if end > pieceStart && place == .content {
                handler.text(UnsafeBufferPointer(rebasing: bytes[pieceStart..<end]))
            }
        }
        while index < count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "<") { break }
            if byte == UInt8(ascii: "&") {
                try requireContent(at: index)
                flush(index, &handler)
                guard
                    let semicolon = Self.find(
                        [UInt8(ascii: ";")], in: bytes, from: index + 1, limit: min(count, index + 34))
                else {
                    if count - index < 34 && !atEnd { return index == position ? nil : index }
                    throw error("an '&' that starts no entity reference (write &amp;)", at: index)
                }
                decoded.removeAll(keepingCapacity: true)
                try reference(bytes, from: index + 1, to: semicolon, into: &decoded)
                if place == .content { decoded.withUnsafeBufferPointer { handler.text($0) } }
                index = semicolon + 1
                pieceStart = index
                continue
            }
            if byte < 0x20 && byte != 0x09 && byte != 0x0A && byte != 0x0D {
                controlCharacters += 1
            } else if byte != 0x20 && byte != 0x09 && byte != 0x0A && byte != 0x0D {
                // Decided at the first such byte, so that how the input is chunked changes nothing.
                try requireContent(at: index)
            }
            index += 1
        }
        flush(index, &handler)
        return index
    }

    /// Throws unless text is allowed here: inside the root element.
    private func requireContent(at position: Int) throws(XMLError) {
        switch place {
        case .content: return
        case .prolog: throw error("text before the root element: not an XML document", at: position)
        case .epilog: throw error("text after the root element", at: position)
        }
    }

    /// Decodes the entity reference between `&` and `;` (exclusive) into `output`.
    private func reference(
        _ bytes: UnsafeBufferPointer<UInt8>, from first: Int, to end: Int, into output: inout [UInt8]
    ) throws(XMLError) {
        if let problem = Self.decodeReference(UnsafeBufferPointer(rebasing: bytes[first..<end]), into: &output) {
            throw error(problem, at: first - 1)
        }
    }

    /// Decodes the name of a reference (between `&` and `;`) into `output`; returns what is wrong
    /// with it, if anything.
    static func decodeReference(_ name: UnsafeBufferPointer<UInt8>, into output: inout [UInt8]) -> String? {
        guard !name.isEmpty else { return "an empty entity reference '&;'" }
        if name[0] == UInt8(ascii: "#") {
            var value: UInt32 = 0
            let hex = name.count > 1 && name[1] == UInt8(ascii: "x")
            let digits = name.dropFirst(hex ? 2 : 1)
            guard !digits.isEmpty, digits.count <= 8 else { return "an invalid character reference" }
            for digit in digits {
                guard let v = digitValue(digit, hex: hex) else { return "an invalid character reference" }
                value = value * (hex ? 16 : 10) + UInt32(v)
            }
            guard let scalar = Unicode.Scalar(value), value == 0x9 || value == 0xA || value == 0xD || value >= 0x20
            else { return "a character reference to a character XML does not allow" }
            output.append(contentsOf: String(Character(scalar)).utf8)
            return nil
        }
        if let character = predefined(name) {
            output.append(character)
            return nil
        }
        // Never expanded (billion laughs, external entities): kept as written.
        guard isName(name) else { return "an invalid entity reference" }
        output.append(UInt8(ascii: "&"))
        output.append(contentsOf: name)
        output.append(UInt8(ascii: ";"))
        return nil
    }

    /// The character of one of the five predefined entities.
    static func predefined(_ name: UnsafeBufferPointer<UInt8>) -> UInt8? {
        switch name.count {
        case 2 where name[1] == UInt8(ascii: "t"):
            switch name[0] {
            case UInt8(ascii: "l"): UInt8(ascii: "<")
            case UInt8(ascii: "g"): UInt8(ascii: ">")
            default: nil
            }
        case 3 where name.elementsEqual("amp".utf8): UInt8(ascii: "&")
        case 4 where name.elementsEqual("apos".utf8): UInt8(ascii: "'")
        case 4 where name.elementsEqual("quot".utf8): UInt8(ascii: "\"")
        default: nil
        }
    }

    // MARK: Markup

    /// Reads the markup starting with `<` at `position`; returns the position after it, or `nil`
    /// when it is not complete in what is there.
    private mutating func markup<H: XMLHandler>(
        _ bytes: UnsafeBufferPointer<UInt8>, at position: Int, count: Int, atEnd: Bool, handler: inout H
    ) throws(XMLError) -> Int? {
        guard position + 1 < count else { return nil }
        switch bytes[position + 1] {
        case UInt8(ascii: "?"):
            guard let end = Self.find(Self.instructionEnd, in: bytes, from: position + 2, limit: count) else {
                return nil
            }
            let target = Self.nameEnd(bytes, from: position + 2, limit: end)
            guard target > position + 2 else { throw error("a processing instruction without a target", at: position) }
            if target - position - 2 == 3, Self.lowercased(bytes[(position + 2)..<target]) == Array("xml".utf8) {
                throw error("an XML declaration that is not at the start of the document", at: position)
            }
            return end + 2
        case UInt8(ascii: "!"):
            if bytes[position...].starts(with: Self.commentStart) {
                guard let end = Self.find(Self.doubleHyphen, in: bytes, from: position + 4, limit: count) else {
                    return nil
                }
                guard end + 2 < count else { return nil }
                guard bytes[end + 2] == UInt8(ascii: ">") else { throw error("'--' inside a comment", at: end) }
                return end + 3
            }
            if bytes[position...].starts(with: Self.cdataStart) {
                guard place == .content else { throw error("a CDATA section outside the root element", at: position) }
                guard let end = Self.find(Self.cdataEnd, in: bytes, from: position + 9, limit: count) else {
                    return nil
                }
                handler.text(UnsafeBufferPointer(rebasing: bytes[(position + 9)..<end]))
                return end + 3
            }
            if bytes[position...].starts(with: Self.doctypeStart) {
                guard place == .prolog, !sawDoctype else {
                    throw error("a DOCTYPE after the root element or a second one", at: position)
                }
                guard let end = try doctypeEnd(bytes, from: position + 9, count: count) else { return nil }
                sawDoctype = true
                return end + 1
            }
            if count - position < 9 && !atEnd { return nil }
            throw error("'<!' that starts no comment, CDATA section or DOCTYPE", at: position)
        case UInt8(ascii: "/"):
            guard let close = Self.find([UInt8(ascii: ">")], in: bytes, from: position + 2, limit: count) else {
                return nil
            }
            let nameEnd = Self.nameEnd(bytes, from: position + 2, limit: close)
            var index = nameEnd
            while index < close, Self.isSpace(bytes[index]) { index += 1 }
            guard nameEnd > position + 2, index == close else { throw error("a malformed end tag", at: position) }
            let name = UnsafeBufferPointer(rebasing: bytes[(position + 2)..<nameEnd])
            guard let open = openNameStarts.last, place == .content else {
                throw error("an end tag without a start tag", at: position)
            }
            guard openNames.count - open == name.count, openNames[open...].elementsEqual(name) else {
                throw error("an end tag that does not match its start tag", at: position)
            }
            openNames.removeSubrange(open...)
            openNameStarts.removeLast()
            handler.endElement(XMLName(bytes: name))
            if openNameStarts.isEmpty { place = .epilog }
            return close + 1
        default:
            return try startTag(bytes, at: position, count: count, handler: &handler)
        }
    }

    /// Reads a start tag (or an empty-element tag) at `position`.
    private mutating func startTag<H: XMLHandler>(
        _ bytes: UnsafeBufferPointer<UInt8>, at position: Int, count: Int, handler: inout H
    ) throws(XMLError) -> Int? {
        let nameEnd = Self.nameEnd(bytes, from: position + 1, limit: count)
        guard nameEnd < count else { return nil }
        guard nameEnd > position + 1 else { throw error("'<' that starts no tag (write &lt;)", at: position) }
        attributes.removeAll(keepingCapacity: true)
        var index = nameEnd
        while true {
            let afterSpace = Self.skipSpace(bytes, from: index, limit: count)
            guard afterSpace < count else { return nil }
            let byte = bytes[afterSpace]
            if byte == UInt8(ascii: ">") || byte == UInt8(ascii: "/") {
                if byte == UInt8(ascii: "/") {
                    guard afterSpace + 1 < count else { return nil }
                    guard bytes[afterSpace + 1] == UInt8(ascii: ">") else {
                        throw error("a malformed tag", at: position)
                    }
                }
                index = afterSpace + (byte == UInt8(ascii: "/") ? 2 : 1)
                try open(
                    bytes, name: (position + 1)..<nameEnd, empty: byte == UInt8(ascii: "/"), at: position,
                    handler: &handler)
                return index
            }
            guard afterSpace > index else { throw error("attributes without white space between them", at: afterSpace) }
            let attributeEnd = Self.nameEnd(bytes, from: afterSpace, limit: count)
            guard attributeEnd > afterSpace else { throw error("a malformed attribute", at: afterSpace) }
            var equals = Self.skipSpace(bytes, from: attributeEnd, limit: count)
            guard equals < count else { return nil }
            guard bytes[equals] == UInt8(ascii: "=") else {
                throw error("an attribute without a value", at: afterSpace)
            }
            let quote = Self.skipSpace(bytes, from: equals + 1, limit: count)
            guard quote < count else { return nil }
            let mark = bytes[quote]
            guard mark == UInt8(ascii: "\"") || mark == UInt8(ascii: "'") else {
                throw error("an attribute value without quotes", at: quote)
            }
            guard let close = Self.find([mark], in: bytes, from: quote + 1, limit: count) else { return nil }
            let name = (afterSpace)..<attributeEnd
            for other in attributes where bytes[other.name].elementsEqual(bytes[name]) {
                throw error("an attribute given twice", at: afterSpace)
            }
            if Self.find([UInt8(ascii: "<")], in: bytes, from: quote + 1, limit: close) != nil {
                throw error("'<' in an attribute value", at: quote)
            }
            attributes.append(XMLAttribute(name: name, value: (quote + 1)..<close))
            equals = close + 1
            index = equals
        }
    }

    private mutating func open<H: XMLHandler>(
        _ bytes: UnsafeBufferPointer<UInt8>, name: Range<Int>, empty: Bool, at position: Int, handler: inout H
    ) throws(XMLError) {
        switch place {
        case .prolog: place = .content
        case .content: break
        case .epilog: throw error("a second root element", at: position)
        }
        guard openNameStarts.count < Self.maximumDepth, openNames.count + name.count <= Self.maximumOpenNameBytes else {
            throw error("elements nested too deep", at: position)
        }
        let element = XMLName(bytes: UnsafeBufferPointer(rebasing: bytes[name]))
        let values = XMLAttributes(bytes: bytes, attributes: attributes)
        handler.startElement(element, attributes: values)
        if empty {
            handler.endElement(element)
            if openNameStarts.isEmpty { place = .epilog }
        } else {
            openNameStarts.append(openNames.count)
            openNames.append(contentsOf: bytes[name])
        }
    }

    /// The `>` that ends a DOCTYPE whose name starts at `position`, skipping its internal subset
    /// (with quoted strings and comments), or `nil` if it is not all there.
    private func doctypeEnd(_ bytes: UnsafeBufferPointer<UInt8>, from position: Int, count: Int) throws(XMLError)
        -> Int?
    {
        var index = position
        var inSubset = false
        while index < count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "'"):
                guard let close = Self.find([byte], in: bytes, from: index + 1, limit: count) else { return nil }
                index = close
            case UInt8(ascii: "<") where inSubset && bytes[index...].starts(with: Self.commentStart):
                guard let end = Self.find(Self.commentEnd, in: bytes, from: index + 4, limit: count) else { return nil }
                index = end + 2
            case UInt8(ascii: "["):
                guard !inSubset else { throw error("a malformed DOCTYPE", at: index) }
                inSubset = true
            case UInt8(ascii: "]"):
                guard inSubset else { throw error("a malformed DOCTYPE", at: index) }
                inSubset = false
            case UInt8(ascii: ">") where !inSubset:
                return index
            default:
                break
            }
            index += 1
        }
        return nil
    }

    /// An attribute value with references decoded and white space normalised; `nil` if a reference
    /// in it is invalid.
    static func decodedValue(_ bytes: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        var output: [UInt8] = []
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "&") {
                guard let semicolon = find([UInt8(ascii: ";")], in: bytes, from: index + 1, limit: bytes.count),
                    decodeReference(UnsafeBufferPointer(rebasing: bytes[(index + 1)..<semicolon]), into: &output) == nil
                else { return nil }
                index = semicolon + 1
                continue
            }
            // Attribute-value normalisation: white space characters become spaces.
            output.append(byte == 0x09 || byte == 0x0A || byte == 0x0D ? 0x20 : byte)
            index += 1
        }
        return output
    }

    private func error(_ message: String, at position: Int) -> XMLError {
        XMLError(message: message, offset: consumed + position)
    }

    // MARK: Bytes

    static let declarationStart = Array("<?xml".utf8)
    static let instructionEnd = Array("?>".utf8)
    static let commentStart = Array("<!--".utf8)
    static let commentEnd = Array("-->".utf8)
    static let doubleHyphen = Array("--".utf8)
    static let cdataStart = Array("<![CDATA[".utf8)
    static let cdataEnd = Array("]]>".utf8)
    static let doctypeStart = Array("<!DOCTYPE".utf8)

    /// The index of the first occurrence of `pattern` in `bytes[from..<limit]`.
    static func find(_ pattern: [UInt8], in bytes: UnsafeBufferPointer<UInt8>, from: Int, limit: Int) -> Int? {
        let first = pattern[0]
        var index = from
        let last = limit - pattern.count
        while index <= last {
            if bytes[index] == first {
                var matched = true
                for offset in 1..<pattern.count where bytes[index + offset] != pattern[offset] {
                    matched = false
                    break
                }
                if matched { return index }
            }
            index += 1
        }
        return nil
    }

    static func isSpace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
    }

    static func skipSpace(_ bytes: UnsafeBufferPointer<UInt8>, from: Int, limit: Int) -> Int {
        var index = from
        while index < limit, isSpace(bytes[index]) { index += 1 }
        return index
    }

    /// Whether a byte may be in an XML name: ASCII letters, digits, `-`, `.`, `_`, `:` and any
    /// byte of a multi-byte UTF-8 character.
    static func isNameByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
            UInt8(ascii: ":"), 0x80...0xFF:
            true
        default: false
        }
    }

    /// Where the name starting at `from` ends; `from` itself if there is none (a name cannot start
    /// with a digit, `-` or `.`).
    static func nameEnd(_ bytes: UnsafeBufferPointer<UInt8>, from: Int, limit: Int) -> Int {
        guard from < limit, isNameByte(bytes[from]) else { return from }
        switch bytes[from] {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."): return from
        default: break
        }
        var index = from + 1
        while index < limit, isNameByte(bytes[index]) { index += 1 }
        return index
    }

    static func isName(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        nameEnd(bytes, from: 0, limit: bytes.count) == bytes.count
    }

    static func lowercased(_ bytes: Slice<UnsafeBufferPointer<UInt8>>) -> [UInt8] {
        bytes.map { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") ? $0 + 32 : $0 }
    }

    static func digitValue(_ byte: UInt8, hex: Bool) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f") where hex: byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F") where hex: byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

/// What an ``XMLTokenizer`` reports; the buffers passed are valid only during the call.
protocol XMLHandler {
    /// A start tag (an empty-element tag is reported as a start and an end).
    mutating func startElement(_ name: XMLName, attributes: XMLAttributes)
    /// An end tag.
    mutating func endElement(_ name: XMLName)
    /// Character data, with references decoded; one text may come in several pieces.
    mutating func text(_ bytes: UnsafeBufferPointer<UInt8>)
}

/// An element's name as written, prefix included.
struct XMLName {
    let bytes: UnsafeBufferPointer<UInt8>

    /// The name without its namespace prefix: `trkpt` for `gpx:trkpt`.
    var localName: UnsafeBufferPointer<UInt8> {
        guard let colon = bytes.lastIndex(of: UInt8(ascii: ":")) else { return bytes }
        return UnsafeBufferPointer(rebasing: bytes[(colon + 1)...])
    }

    /// Whether the local name is `name` (ASCII).
    func `is`(_ name: StaticString) -> Bool {
        let local = localName
        guard local.count == name.utf8CodeUnitCount else { return false }
        return name.withUTF8Buffer { local.elementsEqual($0) }
    }
}

/// An attribute's name and value ranges in the tokenizer's buffer.
struct XMLAttribute {
    var name: Range<Int>
    var value: Range<Int>
}

/// The attributes of one start tag.
struct XMLAttributes {
    fileprivate let bytes: UnsafeBufferPointer<UInt8>
    fileprivate let attributes: [XMLAttribute]

    /// Calls `body` with the value of the attribute whose local name is `name`, references decoded;
    /// `nil` if there is none or its value has an invalid reference.
    func withValue<R>(_ name: StaticString, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R? {
        for attribute in attributes {
            let attributeName = XMLName(bytes: UnsafeBufferPointer(rebasing: bytes[attribute.name]))
            guard attributeName.is(name) else { continue }
            let raw = UnsafeBufferPointer(rebasing: bytes[attribute.value])
            if !raw.contains(where: { $0 == UInt8(ascii: "&") || $0 < 0x20 }) { return body(raw) }
            return XMLTokenizer.decodedValue(raw)?.withUnsafeBufferPointer(body)
        }
        return nil
    }
}

/// Why a document is not well-formed XML, and where.
struct XMLError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What is wrong.
    var message: String
    /// The byte offset in the document where it was found.
    var offset: Int

    var description: String { "\(message) (at byte \(offset))" }
}
