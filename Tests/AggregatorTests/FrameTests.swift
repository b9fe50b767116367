import Board
import Foundation
import Testing

/// Golden frames of each layout at a fixed terminal size, and the view's keys.
///
/// Set `UPDATE_GOLDEN_FRAMES=1` to write the golden files again after a deliberate change.
struct FrameTests {
    static let header = BoardHeader(source: "myeline @ mqtt://broker.example")

    static func frame(_ layout: BoardLayout, columns: Int = 120, lines: Int, colours: Bool = false) -> String {
        var view = BoardView()
        let renderer = FrameRenderer(layout: layout, columns: columns, lines: lines, colours: colours)
        return renderer.render(Wire.sampleFleet(), view: &view, header: header, now: Wire.now).joined(separator: "\n")
            + "\n"
    }

    static func expectGolden(_ text: String, _ name: String) throws {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Golden/\(name)")
        if ProcessInfo.processInfo.environment["UPDATE_GOLDEN_FRAMES"] != nil {
            try text.write(to: url, atomically: true, encoding: .utf8)
        }
        let golden = try String(contentsOf: url, encoding: .utf8)
        #expect(text == golden, "\(name) differs from its golden file:\n\(text)")
    }

    @Test func compactAt120x12() throws {
        try Self.expectGolden(Self.frame(.compact, lines: 12), "compact-120x12.txt")
    }

    @Test func expandedAt120x30() throws {
        try Self.expectGolden(Self.frame(.expanded, lines: 30), "expanded-120x30.txt")
    }

    @Test func minimalAt120x1() throws {
        try Self.expectGolden(Self.frame(.minimal, lines: 1), "minimal-120x1.txt")
        #expect(Self.frame(.minimal, lines: 1).hasPrefix("1 active, 1 stale, 1 paused, 1 ended, 1 offline "))
    }

    @Test func compactAt80x8IsCutToTheTerminal() throws {
        let lines = Self.frame(.compact, columns: 80, lines: 8).split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.dropLast().allSatisfy { TerminalText.width(String($0)) == 80 })
        #expect(lines.count == 9)
    }

    /// Stale rows are yellow, offline red, ended dim; active and paused rows have no colour.
    @Test func coloursMarkStaleOfflineAndEnded() {
        let lines = Self.frame(.compact, lines: 12, colours: true).split(separator: "\n").map(String.init)
        func line(_ device: String) -> String { lines.first { $0.contains(device) }! }
        #expect(line("truck-2").hasPrefix("\u{1B}[33m"))
        #expect(line("car-1").hasPrefix("\u{1B}[31m"))
        #expect(line("van-9").hasPrefix("\u{1B}[2m"))
        #expect(!line("van-7").contains("\u{1B}"))
        #expect(!Self.frame(.compact, lines: 12).contains("\u{1B}"))
    }

    /// Sort orders, the device filter and scrolling, driven by keys.
    @Test func keysSortFilterAndScroll() {
        let fleet = Wire.sampleFleet()
        var view = BoardView()
        func devices() -> [String] { view.orderedKeys(fleet, now: Wire.now).map(\.device.rawValue) }
        #expect(devices() == ["van-7", "car-1", "bike-4", "truck-2", "van-9"])
        #expect(view.handle(.character("s"), pageSize: 2, rowCount: 5) == .redraw)
        #expect(view.sort == .device)
        #expect(devices() == ["bike-4", "car-1", "truck-2", "van-7", "van-9"])
        _ = view.handle(.character("s"), pageSize: 2, rowCount: 5)
        #expect(devices() == ["car-1", "truck-2", "bike-4", "van-7", "van-9"])
        _ = view.handle(.pageDown, pageSize: 2, rowCount: 5)
        #expect(view.offset == 2)
        _ = view.handle(.pageDown, pageSize: 2, rowCount: 5)
        _ = view.handle(.down, pageSize: 2, rowCount: 5)
        #expect(view.offset == 3)
        _ = view.handle(.up, pageSize: 2, rowCount: 5)
        _ = view.handle(.pageUp, pageSize: 2, rowCount: 5)
        #expect(view.offset == 0)
        for key: BoardKey in [.character("/"), .character("v"), .character("a"), .character("x"), .backspace, .enter] {
            _ = view.handle(key, pageSize: 2, rowCount: 5)
        }
        #expect(view.filter == "va" && !view.isEditingFilter)
        #expect(Set(devices()) == ["van-7", "van-9"])
        _ = view.handle(.escape, pageSize: 2, rowCount: 5)
        #expect(devices().count == 5)
        #expect(view.handle(.character("q"), pageSize: 2, rowCount: 5) == .quit)
    }

    /// Terminal key sequences, also when a read cuts one in two.
    @Test func keyDecoderReadsArrowsAndPages() {
        var decoder = KeyDecoder()
        #expect(decoder.decode(Array("q\u{1B}[A\u{1B}[B\u{1B}[5~".utf8)) == [.character("q"), .up, .down, .pageUp])
        #expect(decoder.decode(Array("\u{1B}[6".utf8)) == [])
        #expect(decoder.decode(Array("~/\u{7F}\r".utf8)) == [.pageDown, .character("/"), .backspace, .enter])
        #expect(decoder.decode([0x1B]) == [.escape])
        #expect(decoder.decode(Array("\u{1B}[99Zs".utf8)) == [.character("s")])
    }

    /// Names from the broker cannot drive the terminal, and wide characters keep columns aligned.
    @Test func foreignTextIsMadeSafe() {
        #expect(TerminalText.sanitized("Van\u{1B}[2J7\u{7}") == "Van?[2J7?")
        #expect(TerminalText.sanitized("a\u{202E}b") == "a?b")
        #expect(TerminalText.width("車両7") == 5)
        #expect(TerminalText.fit("車両車両", 5) == "車両…")
        #expect(TerminalText.fit("車両車両", 6) == "車両… ")
        #expect(TerminalText.fit("abc", 5, alignRight: true) == "  abc")
    }

    /// Only lines that changed are written; an unchanged frame writes nothing.
    @Test func frameDiffWritesOnlyChangedLines() {
        let first = ["aaa", "bbb", "ccc"]
        #expect(FrameDiff.update(from: first, to: first).isEmpty)
        let update = FrameDiff.update(from: first, to: ["aaa", "BBB", "ccc"])
        #expect(update.contains("\u{1B}[2;1H") && update.contains("BBB"))
        #expect(!update.contains("aaa") && !update.contains("ccc"))
        #expect(FrameDiff.update(from: nil, to: first).contains("\u{1B}[3;1H"))
    }

    /// The bootstrap verdict: cut when the broker holds more, or near mosquitto's default limit without its count.
    @Test(arguments: [
        (10_000, nil as Int?, false),
        (500, nil, false),
        (1020, nil, true),
        (1200, nil, false),
        (1020, 10_070, true),
        (1020, 1090, false),
        (10_020, 10_080, false),
        (5020, 20_050, true),
    ])
    func bootstrapVerdict(received: Int, brokerCount: Int?, truncated: Bool) {
        var bootstrap = Bootstrap()
        for _ in 0..<received { bootstrap.noteRetained() }
        if let brokerCount { bootstrap.noteBrokerRetainedCount(Array("\(brokerCount)".utf8)) }
        #expect(!bootstrap.isTruncated)
        bootstrap.complete()
        #expect(bootstrap.isTruncated == truncated)
        #expect((bootstrap.warning?.contains("max_queued_messages") ?? false) == truncated)
    }
}
