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

    @Test func compactAt120x13() throws {
        try Self.expectGolden(Self.frame(.compact, lines: 13), "compact-120x13.txt")
    }

    /// Finding 6: at 80 columns the most important columns stay (age, progress, ETA, the alert),
    /// at 160 more show, and the widest ones widen.
    @Test(arguments: [80, 160, 220])
    func compactFitsTheTerminal(columns: Int) throws {
        let text = Self.frame(.compact, columns: columns, lines: 13)
        try Self.expectGolden(text, "compact-\(columns)x13.txt")
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
        #expect(lines.allSatisfy { TerminalText.width(String($0)) == columns })
        let titles = try #require(lines.first { $0.hasPrefix("DEVICE") })
        for title in ["STATE", "AGE", "SINCE", "LOCATION", "KM/H", "PROG", "ETA", "ALERT"] {
            #expect(titles.contains(title), "\(title) at \(columns) columns")
        }
        #expect(titles.contains("HEALTH") == (columns >= 100) && titles.contains("ACC") == (columns >= 160))
    }

    /// The widths add up to the terminal's, whatever it is; the alert gets what is left.
    @Test func columnPlansFillTheWidth() {
        for width in 40...300 {
            let plan = BoardColumn.plan(width: width)
            let used = plan.reduce(-1) { $0 + $1.width + 1 }
            #expect(used == width || !plan.contains { $0.column == .alert }, "\(width)")
            #expect(plan.first?.column == .device)
        }
    }

    /// `l` switches the layout live.
    @Test func theLayoutKeyCyclesLayouts() {
        var view = BoardView()
        var seen: [BoardLayout] = [view.layout]
        for _ in 0..<3 {
            _ = view.handle(.character("l"), pageSize: 5, rowCount: 7)
            seen.append(view.layout)
        }
        #expect(seen == [.compact, .expanded, .minimal, .compact])
    }

    @Test func expandedAt120x30() throws {
        try Self.expectGolden(Self.frame(.expanded, lines: 47), "expanded-120x47.txt")
    }

    /// The minimal layout names the devices that need attention, offline first.
    @Test func minimalAt120x1() throws {
        try Self.expectGolden(Self.frame(.minimal, lines: 1), "minimal-120x1.txt")
        #expect(
            Self.frame(.minimal, columns: 160, lines: 1).hasPrefix(
                "1 active, 1 stale, 1 paused, 1 ended, 1 offline · attention: car-1 offline 1m, spare-3 storage error, "
                    + "truck-2 clock -1h56m "))
    }

    @Test func compactAt80x8IsCutToTheTerminal() throws {
        let lines = Self.frame(.compact, columns: 80, lines: 8).split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.dropLast().allSatisfy { TerminalText.width(String($0)) == 80 })
        #expect(lines.count == 9)
    }

    /// Stale rows are yellow, offline red, ended dim; active and paused rows have no colour.
    @Test func coloursMarkStaleOfflineAndEnded() {
        let lines = Self.frame(.compact, lines: 13, colours: true).split(separator: "\n").map(String.init)
        func line(_ device: String) -> String { lines.first { $0.contains(device + " ") && !$0.contains("alerts:") }! }
        #expect(line("truck-2").hasPrefix("\u{1B}[33m"))
        #expect(line("car-1").hasPrefix("\u{1B}[31m"))
        #expect(line("van-9").hasPrefix("\u{1B}[2m"))
        // An active row has no colour of its own; its fresh alert is highlighted, its device's health in magenta.
        #expect(!line("van-7").hasPrefix("\u{1B}"))
        #expect(line("van-7").contains("\u{1B}[7m2s Entered depot"))
        #expect(line("truck-2").contains("\u{1B}[35mclock -1h56m"))
        #expect(!Self.frame(.compact, lines: 13).contains("\u{1B}"))
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

    /// The bootstrap's verdict comes from the board's own sentinel, never from counts that other
    /// applications' retained messages change: the sentinel back is complete, missing is cut (when the
    /// broker took it), and unknown when the broker refused it.
    @Test(arguments: [
        (true as Bool?, true, 10_000, Bootstrap.Verdict.complete),
        (true, false, 1_167, .truncated),
        (true, false, 367, .truncated),
        (true, false, 0, .truncated),
        (false, false, 1_100, .unknown),
        (nil, false, 1_100, .unknown),
    ])
    func bootstrapVerdict(placed: Bool?, arrived: Bool, received: Int, verdict: Bootstrap.Verdict) {
        var bootstrap = Bootstrap()
        if let placed { bootstrap.noteSentinel(placed: placed) }
        for _ in 0..<received { bootstrap.noteRetained(bytes: 700) }
        #expect(!bootstrap.isComplete && !bootstrap.isTruncated)
        if arrived { bootstrap.sentinelArrived() }
        bootstrap.quietPeriodEnded()
        #expect(bootstrap.verdict == verdict)
        #expect((bootstrap.warning != nil) == (verdict == .truncated))
        // The sentinel arriving after the quiet period changes nothing: the verdict is given once.
        bootstrap.sentinelArrived()
        #expect(bootstrap.verdict == verdict)
    }

    /// The warning names the limit the cut points to: the queue's bytes once more than 64 MiB arrived.
    @Test(arguments: [(1_167, 700, "max_queued_messages"), (36_156, 7_424, "max_queued_bytes")])
    func theWarningNamesTheLimit(received: Int, bytes: Int, limit: String) throws {
        var bootstrap = Bootstrap()
        bootstrap.noteSentinel(placed: true)
        for _ in 0..<received { bootstrap.noteRetained(bytes: bytes) }
        bootstrap.quietPeriodEnded()
        let warning = try #require(bootstrap.warning)
        #expect(warning.contains("raise \(limit)"), "\(warning)")
        #expect(warning.hasPrefix("only \(RowFormat.count(received)) retained messages"))
    }
}
