import Foundation
import MyelineConfiguration
import TestSupport
import Testing
import Yams

/// `YAMLReader` against Yams, which read the configuration files before it (issue 24): for every
/// YAML text below, the reader gives the tree Yams gives (the keys with their lines and columns,
/// the scalars' texts, the lists: all that the configuration takes from the tree), or both refuse;
/// or the row says that the reader refuses on purpose what Yams reads, and Yams is checked to read it.
@Suite struct YAMLReaderTests {
    /// The part of a tree the configuration uses.
    indirect enum Shape: Equatable, CustomStringConvertible {
        case scalar(String)
        case sequence([Shape])
        case mapping([Key])

        struct Key: Equatable {
            var text: String
            var line: Int
            var column: Int
            var value: Shape
        }

        var description: String {
            switch self {
            case .scalar(let text): "\"\(text)\""
            case .sequence(let items): "[" + items.map(\.description).joined(separator: ", ") + "]"
            case .mapping(let keys):
                "{" + keys.map { "\($0.text)@\($0.line):\($0.column): \($0.value)" }.joined(separator: ", ") + "}"
            }
        }

        init(_ node: YAMLNode) {
            switch node.content {
            case .scalar(let text): self = .scalar(text)
            case .sequence(let items): self = .sequence(items.map(Shape.init))
            case .mapping(let pairs):
                self = .mapping(
                    pairs.map { Key(text: $0.key, line: $0.line, column: $0.column, value: Shape($0.value)) })
            }
        }

        /// Yams' node as a shape; `nil` when it has something the configuration cannot take (a
        /// key that is a list or a mapping, an alias).
        init?(yams node: Yams.Node) {
            switch node {
            case .scalar(let scalar): self = .scalar(scalar.string)
            case .sequence(let sequence):
                var items: [Shape] = []
                for item in sequence {
                    guard let shape = Shape(yams: item) else { return nil }
                    items.append(shape)
                }
                self = .sequence(items)
            case .mapping(let mapping):
                var keys: [Key] = []
                for (key, value) in mapping {
                    guard case .scalar(let scalar) = key, let mark = key.mark, let shape = Shape(yams: value) else {
                        return nil
                    }
                    keys.append(Key(text: scalar.string, line: mark.line, column: mark.column, value: shape))
                }
                self = .mapping(keys)
            case .alias: return nil
            }
        }
    }

    enum Outcome: Equatable, CustomStringConvertible {
        case document(Shape?)
        case refused(String)

        var isRefused: Bool { if case .refused = self { true } else { false } }

        /// Refused unless a mapping, as the configuration refuses every other document.
        var asConfiguration: Outcome {
            if case .document(.mapping?) = self { return self }
            return .refused("not a mapping of keys")
        }

        var description: String {
            switch self {
            case .document(let shape): shape.map(\.description) ?? "(no document)"
            case .refused(let reason): "refused: \(reason)"
            }
        }
    }

    static func reader(_ text: String) -> Outcome {
        do {
            return .document(try YAMLReader.parse(text).map(Shape.init))
        } catch {
            return .refused(error.description)
        }
    }

    static func yams(_ text: String) -> Outcome {
        do {
            guard let node = try Yams.compose(yaml: text) else { return .document(nil) }
            guard let shape = Shape(yams: node) else { return .refused("a key that is not a name, or an alias") }
            return .document(shape)
        } catch {
            return .refused("\(error)")
        }
    }

    /// Checks one text: the same tree, or both refuse.
    static func expectSame(_ text: String, _ name: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let ours = reader(text)
        let theirs = yams(text)
        if ours.isRefused, theirs.isRefused { return }
        #expect(ours == theirs, "\(name): \(text.debugDescription)", sourceLocation: sourceLocation)
    }

    // MARK: - Tricky cases

    struct Case: CustomTestStringConvertible, Sendable {
        var name: String
        var yaml: String
        var testDescription: String { name }
    }

    /// Each: the reader and Yams agree (the same tree, or both refuse).
    static let agreed: [Case] = [
        Case(name: "nested mappings", yaml: "a:\n  b: 1\n  c:\n    d: x\ne: 2\n"),
        Case(name: "keys with dots", yaml: "device.id: van-7\nmqtt:\n  tls.ca-file: /x\n"),
        Case(name: "keys with spaces, quoted keys", yaml: "key with space: 1\n\"q\": 2\n'r' : 3\ns : 4\n"),
        Case(
            name: "double quotes and their escapes",
            yaml: #"a: "\0\a\b\t\"# + "\t" + #"\n\v\f\r\e\ \"\/\\\N\_\L\P\x41\u00e9\U0001F600""# + "\n"),
        Case(name: "single quotes", yaml: "a: 'it''s # not a comment'\nb: ''\nc: '\\n'\n"),
        Case(name: "# inside quotes and plain values", yaml: "a: \"x # y\"\nb: x#y\nc: x # comment\nd: '#'\n"),
        Case(
            name: "comments everywhere", yaml: "# top\na: 1 # after\n  # indented\n#\nb:  # before the nested\n  c: 2\n"
        ),
        Case(name: "trailing spaces", yaml: "a: x   \nb: 'y'  \nc:   \n"),
        Case(name: "tabs between tokens", yaml: "a:\tx\nb: y\t# c\n"),
        Case(name: "empty values", yaml: "a:\nb: ''\nc: \"\"\nd:\n"),
        Case(name: "null and ~ stay text", yaml: "a: ~\nb: null\nc: Null\nd: NULL\n"),
        Case(name: "booleans stay text", yaml: "a: yes\nb: no\nc: on\nd: off\ne: true\nf: False\ng: y\nh: n\n"),
        Case(
            name: "numbers stay text",
            yaml: "a: 1e3\nb: 0x10\nc: .5\nd: -0\ne: +12\nf: 1_000\ng: 0o17\nh: .inf\ni: 1:30\n"),
        Case(name: "unicode", yaml: "name: Fahrzeug Ü7 🚐\n\"ключ\": значение\n"),
        Case(name: "CRLF line ends", yaml: "a: 1\r\nb:\r\n  c: x\r\n  d: [1, 2]\r\n"),
        Case(name: "CR line ends", yaml: "a: 1\rb: 2\r"),
        Case(name: "document start", yaml: "---\na: 1\n"),
        Case(name: "document start with a comment", yaml: "--- # configuration\na: 1\n"),
        Case(name: "document end", yaml: "a: 1\n...\n"),
        Case(name: "a second document", yaml: "a: 1\n---\nb: 2\n"),
        Case(name: "text after the document end", yaml: "a: 1\n...\nb: 2\n"),
        Case(name: "block sequences", yaml: "a:\n  - x\n  - 'y'\n  -\n  - # c\n    z\n"),
        Case(name: "a sequence at its key's indentation", yaml: "a:\n- x\n- y\nb: 1\n"),
        Case(name: "sequences of mappings", yaml: "a:\n  - b: 1\n    c: 2\n  - d\n  -   e: 3\n"),
        Case(name: "nested sequences", yaml: "a:\n - - x\n   - y\n - z\n"),
        Case(name: "a sequence as the root", yaml: "- a\n- b\n"),
        Case(name: "a scalar as the root", yaml: "just text\n"),
        Case(name: "flow sequences", yaml: "a: [x, 'y', \"z\", mqtt://h:1, -1, x y]\nb: []\nc: [ ]\nd: [x, ]\n"),
        Case(name: "nested flow", yaml: "a: [a, [b, c], {d: e}]\nb: {x: {y: z}}\n"),
        Case(name: "flow mappings", yaml: "a: {x: 1, y}\nb: {}\nc: {x: }\nd: {x:1}\n"),
        Case(name: "an empty flow mapping as the root", yaml: "{}\n"),
        Case(name: "a flow sequence over several lines", yaml: "a: [\n  x, # first\n  y\n]\nb: 1\n"),
        Case(name: "a flow sequence with its bracket at column 1", yaml: "a: [\nx,\ny\n]\n"),
        Case(
            name: "a plain value starting with an indicator's character",
            yaml: "a: -x\nb: :x\nc: ?x\nd: x:y\ne: x]\nf: x,y\ng: x%\n"),
        Case(
            name: "geofences",
            yaml: "alerts:\n  geofences:\n    - depot:52.52:13.405:150\n    - \"home:52.4:13.3:80\"\n"),
        Case(name: "geofences in flow", yaml: "alerts:\n  geofences: [\"depot:95:0:10\", b:1:2:3]\n"),
        Case(name: "a geofence as a mapping", yaml: "alerts:\n  geofences:\n    - {name: depot}\n"),
        Case(name: "blank lines inside", yaml: "a:\n\n\n  b: 1\n\n  c: 2\n"),
        Case(name: "comments at any indentation", yaml: "a:\n  b: 1\n   # x\n # y\n  c: 2\n"),
        Case(name: "empty text", yaml: ""),
        Case(name: "comments only", yaml: "# nothing\n\n# here\n"),
        Case(name: "no line break at the end", yaml: "a: 1\nb: x"),
        Case(name: "a byte order mark inside a value", yaml: "a: x\u{FEFF}y\n"),
        // Both refuse:
        Case(name: "a list as a key", yaml: "[a]: b\n"),
        Case(name: "a line separator in a value", yaml: "a: x\u{2028}y\n"),
        Case(name: "a mapping on its key's line", yaml: "a: b: c\n"),
        Case(name: "a list on its key's line", yaml: "a: - x\n"),
        Case(name: "a tab as indentation", yaml: "a:\n\tb: 1\n"),
        Case(name: "a tab line", yaml: "a: 1\n\t\nb: 2\n"),
        Case(name: "a tab before a key", yaml: "\ta: 1\n"),
        Case(name: "a tab after a list item's dash", yaml: "a:\n  - \t1\n"),
        Case(name: "a bad indentation", yaml: "a:\n  b: 1\n c: 2\n"),
        Case(name: "an indentation too deep", yaml: "a:\n    b: 1\n  c: 2\n"),
        Case(name: "text after a quoted value", yaml: "a: \"x\" y\n"),
        Case(name: "two quoted values", yaml: "a: \"x\"\"y\"\n"),
        Case(name: "an unknown escape", yaml: "a: \"\\q\"\n"),
        Case(name: "a surrogate escape", yaml: "a: \"\\ud800\"\n"),
        Case(name: "a short escape", yaml: "a: \"\\x4\"\n"),
        Case(name: "an unclosed quote", yaml: "a: \"x\n"),
        Case(name: "an unclosed bracket", yaml: "a: [x, y\n"),
        Case(name: "an empty flow item", yaml: "a: [x,,y]\n"),
        Case(name: "a comma alone", yaml: "a: [,]\n"),
        Case(name: "a value starting with a reserved character", yaml: "a: @x\nb: `x\n"),
        Case(name: "a value starting with %", yaml: "a: %x\n"),
        Case(name: "a value starting with a closing bracket", yaml: "a: ]\n"),
        Case(name: "a value starting with a comma", yaml: "a: ,x\n"),
        Case(name: "a key without a value indicator", yaml: "a: 1\nb\n"),
        Case(name: "an empty key", yaml: ": 1\n"),
        Case(name: "duplicate keys", yaml: "a: 1\na: 2\n"),
        Case(name: "a quoted and a plain duplicate", yaml: "a:\n  \"b\": 1\n  b: 2\n"),
        Case(name: "duplicate keys in flow", yaml: "a: {x: 1, x: 2}\n"),
        Case(name: "a control character", yaml: "a: \u{1}\n"),
        Case(name: "a key then a flow item", yaml: "a: [x]y\n"),
        Case(name: "a value under a flow value", yaml: "a: [x]\n  b: 1\n"),
        Case(name: "a ':' before a bracket in flow", yaml: "a: [x:]\n"),
        Case(name: "a list item in flow", yaml: "a: [- x]\n"),
        Case(name: "an undefined alias", yaml: "a: *x\n"),
    ]

    /// Each: Yams reads it and the reader refuses it, on purpose (docs/configuration.md, "The file").
    static let refusedOnPurpose: [Case] = [
        Case(name: "a directive", yaml: "%YAML 1.1\n---\na: 1\n"),
        Case(name: "an anchor", yaml: "a: &x 1\n"),
        Case(name: "an anchor and its alias", yaml: "a: &x 1\nb: *x\n"),
        Case(name: "a tag", yaml: "a: !!str 1\n"),
        Case(name: "a local tag", yaml: "a: !x\n"),
        Case(name: "a literal block scalar", yaml: "a: |\n  x\n  y\n"),
        Case(name: "a folded block scalar", yaml: "a: >\n  x\n"),
        Case(name: "an explicit key", yaml: "? a\n: b\n"),
        Case(name: "an explicit key in flow", yaml: "a: [?x]\n"),
        Case(name: "a plain value over two lines", yaml: "a: b\n  c\n"),
        Case(name: "a list item over two lines", yaml: "- a\n  b\n"),
        Case(name: "a plain value over two lines in flow", yaml: "a: [x\n y]\n"),
        Case(name: "a quoted value over two lines", yaml: "a: 'x\n  y'\n"),
        Case(name: "an escaped line break", yaml: "a: \"x\\\n  y\"\n"),
        Case(name: "a key: value pair in a flow sequence", yaml: "a: [x: 1]\n"),
        Case(name: "spaces then a tab on a blank line", yaml: "a: 1\n  \t\nb: 2\n"),
        Case(name: "a value on the document start's line", yaml: "--- {}\n"),
        Case(name: "a next line character in a value", yaml: "a: \"x\u{85}y\"\n"),
        Case(
            name: "nesting deeper than 64",
            yaml: "a: " + String(repeating: "[", count: 65) + String(repeating: "]", count: 65) + "\n"),
    ]

    @Test(arguments: agreed) func agreesWithYams(_ row: Case) {
        Self.expectSame(row.yaml, row.name)
    }

    @Test(arguments: refusedOnPurpose) func refusesWhatItLeavesOut(_ row: Case) throws {
        let theirs = Self.yams(row.yaml)
        #expect(!theirs.isRefused, "Yams refuses this too: move the row to `agreed`")
        do {
            let node = try YAMLReader.parse(row.yaml)
            Issue.record("read as \(node.map { Shape($0).description } ?? "nothing"); Yams gives \(theirs)")
        } catch {
            #expect(error.line >= 1 && error.column >= 1)
            #expect(error.message.contains(":"), "the message says what to write instead: \(error.message)")
        }
    }

    /// A refusal names where, what and the fix.
    @Test func refusalsNameTheLineAndColumn() {
        #expect(throws: YAMLSyntaxError(line: 2, column: 6, "anchors (&name) are not read: write the value out")) {
            try YAMLReader.parse("a: 1\nb:   &x 2\n")
        }
        #expect(
            throws: YAMLSyntaxError(
                line: 3, column: 1, "the key \"a\" appears twice in this mapping (first on line 1): keep one")
        ) {
            try YAMLReader.parse("a: 1\nb: 2\na: 3\n")
        }
        #expect(
            throws: YAMLSyntaxError(
                line: 2, column: 4,
                "the control character U+0001 is not allowed in YAML: remove it, or write it as an escape in a double-quoted value"
            )
        ) {
            try YAMLReader.parse("a: 1\r\nb: \u{1}\n")
        }
    }

    /// A byte order mark before the text is skipped, as Yams skips it in the bytes swift-configuration's
    /// YAML provider read; the key check, which gave Yams the text as a `String`, refused the file.
    @Test func aByteOrderMarkIsSkipped() throws {
        let text = "\u{FEFF}a: 1\nb: 2\n"
        let bytes = try #require(try Yams.Parser(yaml: Data(text.utf8)).singleRoot())
        #expect(Self.reader(text) == .document(Shape(yams: bytes)))
        #expect(Self.reader(text) == Self.reader("a: 1\nb: 2\n"))
    }

    /// Random texts from pieces of YAML, right and wrong: whatever the reader reads, Yams reads the
    /// same way (no text is read differently, only refused), and whatever Yams refuses, so does the reader.
    @Test func neverReadsARandomTextOtherwiseThanYams() {
        let keys = ["a", "b", "key with space", "\"q\"", "'s'", "a.b", "-x", "é", "a", "c"]
        let values = [
            "1", "x", "", "~", "'x'", "\"y\\n\"", "[a, b]", "{}", "{x: 1}", "x # c", "x#c", "- y", "a: b", "&a x",
            "*a", "!t x", "|", "\"open", "[a,", "'it''s'", "mqtt://h:1", "x:y", "\t1", ": x", "[", "]", "{a, b: [c]}",
            "'", "\"\\u00e9\"", "x  ", "?x", "- - z",
        ]
        let indents = ["", "", " ", "  ", "    ", "\t", "  \t"]
        var random = SeededGenerator(seed: 24)
        var read = 0
        var refusedByBoth = 0
        for _ in 0..<8000 {
            var lines: [String] = []
            for _ in 0..<Int.random(in: 1...7, using: &random) {
                let indent = indents.randomElement(using: &random)!
                let key = keys.randomElement(using: &random)!
                let value = values.randomElement(using: &random)!
                let line =
                    switch Int.random(in: 0..<10, using: &random) {
                    case 0...3: "\(key): \(value)"
                    case 4: "\(key):"
                    case 5: "- \(value)"
                    case 6: "- \(key): \(value)"
                    case 7: "# \(value)"
                    case 8: ["---", "...", ""].randomElement(using: &random)!
                    default: value
                    }
                lines.append(indent + line)
            }
            let text = lines.joined(separator: Bool.random(using: &random) ? "\n" : "\r\n") + "\n"
            // As the configuration takes them: a text that is not a mapping of keys is refused.
            let ours = Self.reader(text).asConfiguration
            let theirs = Self.yams(text).asConfiguration
            if !ours.isRefused {
                read += 1
                #expect(ours == theirs, "\(text.debugDescription)")
            } else if theirs.isRefused {
                refusedByBoth += 1
            }
            if theirs.isRefused { #expect(ours.isRefused, "\(text.debugDescription): read as \(ours)") }
        }
        #expect(read > 300 && refusedByBoth > 300, "read \(read), refused by both \(refusedByBoth)")
    }

    // MARK: - Every YAML of the repository

    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// config/*.yaml, deploy/'s YAML, the fenced `yaml` blocks of docs/ and the README, and the YAML
    /// texts of the configuration tests (their one-line string literals; one of ``refusedOnPurpose``
    /// there is a test of the message).
    static func repositoryTexts() throws -> [(name: String, yaml: String)] {
        var texts: [(String, String)] = []
        let manager = FileManager.default
        for directory in ["config", "deploy", "docs", "Tests", "Examples"] {
            guard let files = manager.enumerator(atPath: root.appendingPathComponent(directory).path) else { continue }
            for case let file as String in files {
                let path = "\(directory)/\(file)"
                let url = root.appendingPathComponent(path)
                if file.hasSuffix(".yaml") || file.hasSuffix(".yml") {
                    texts.append((path, try String(contentsOf: url, encoding: .utf8)))
                } else if file.hasSuffix(".md") {
                    texts += fencedBlocks(try String(contentsOf: url, encoding: .utf8)).map { (path, $0) }
                } else if file.hasSuffix(".swift"), directory == "Tests", !file.hasPrefix("MyelineConfigurationTests/")
                {
                    texts += yamlLiterals(try String(contentsOf: url, encoding: .utf8)).map { (path, $0) }
                }
            }
        }
        texts += fencedBlocks(try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8))
            .map { ("README.md", $0) }
        return texts
    }

    static func fencedBlocks(_ markdown: String) -> [String] {
        var blocks: [String] = []
        var current: [Substring]?
        for line in markdown.split(separator: "\n", omittingEmptySubsequences: false) {
            if current == nil, line.trimmingCharacters(in: .whitespaces) == "```yaml" {
                current = []
            } else if let lines = current, line.trimmingCharacters(in: .whitespaces) == "```" {
                blocks.append(lines.joined(separator: "\n") + "\n")
                current = nil
            } else {
                current?.append(line)
            }
        }
        return blocks
    }

    /// The one-line Swift string literals after `yaml: ` or `yamlFile(`, unescaped.
    static func yamlLiterals(_ source: String) -> [String] {
        var literals: [String] = []
        var rest = Substring(source)
        while let range = rest.range(of: #"(yaml: |yamlFile\()""#, options: .regularExpression) {
            rest = rest[range.upperBound...]
            var text = ""
            var escaped = false
            var closed = false
            var scalars = rest.unicodeScalars.makeIterator()
            var consumed = 0
            while let c = scalars.next() {
                consumed += 1
                if c == "\n" { break }
                if escaped {
                    switch c {
                    case "n": text += "\n"
                    case "t": text += "\t"
                    case "r": text += "\r"
                    case "0": text += "\0"
                    case "u":
                        var hex = ""
                        while let h = scalars.next() {
                            consumed += 1
                            if h == "}" { break }
                            if h != "{" { hex.unicodeScalars.append(h) }
                        }
                        text.unicodeScalars.append(Unicode.Scalar(UInt32(hex, radix: 16) ?? 0x3F) ?? "?")
                    default: text.unicodeScalars.append(c)
                    }
                    escaped = false
                } else if c == "\\" {
                    escaped = true
                } else if c == "\"" {
                    closed = true
                    break
                } else {
                    text.unicodeScalars.append(c)
                }
            }
            rest = Substring(rest.unicodeScalars.dropFirst(consumed))
            if closed { literals.append(text) }
        }
        return literals
    }

    @Test func agreesWithYamsOnEveryYAMLOfTheRepository() throws {
        let texts = try Self.repositoryTexts()
        #expect(texts.contains { $0.name == "config/agent.example.yaml" })
        #expect(texts.contains { $0.name == "docs/raspberry-pi.md" })
        #expect(texts.count(where: { $0.name.hasPrefix("Tests/") }) > 30, "the tests' YAML literals were not found")
        for (name, yaml) in texts where !Self.refusedOnPurpose.contains(where: { $0.yaml == yaml }) {
            Self.expectSame(yaml, name)
        }
        // The examples are read, not refused.
        for name in ["config/agent.example.yaml", "config/aggregator.example.yaml"] {
            let text = try #require(texts.first { $0.name == name }).yaml
            #expect(!Self.reader(text).isRefused)
        }
    }
}
