import Board
import Foundation
import TestSupport
import Testing

/// The hostile corpus through the decoder and reducer: every case is counted and dropped, none crashes.
struct HostileInputTests {
    @Test func theCorpusHasAtLeastAHundredCases() {
        #expect(HostileCorpus.cases().count >= 100)
    }

    @Test(arguments: HostileCorpus.cases())
    func everyCaseIsRejected(_ hostile: HostileCorpus.Case) {
        var fleet = Fleet()
        let input = Wire.decoder.decode(topic: hostile.topic, payload: hostile.payload)
        guard case .rejected = fleet.apply(input, now: Wire.now) else {
            Issue.record("\(hostile.name) was applied: \(input)")
            return
        }
        #expect(fleet.rejectedCount == 1 && fleet.rows.isEmpty && fleet.devices.isEmpty)
    }

    /// A valid envelope whose texts carry terminal escapes is shown, made harmless.
    @Test func escapesInNamesAreShownHarmlessly() {
        var fleet = Fleet()
        var object = HostileCorpus.validEnvelope(device: "van-7", activity: "a1")
        object["attributes"] = ["deviceID": "van-7", "name": "Van\u{1B}[2J\u{1B}]0;pwned\u{7}"]
        _ = Wire.apply(&fleet, Wire.json(object))
        var view = BoardView()
        let frame = FrameRenderer(layout: .compact, columns: 120, lines: 6, colours: false)
            .render(fleet, view: &view, header: BoardHeader(source: "t"), now: Wire.now)
        #expect(!frame.joined().contains("\u{1B}"))
        #expect(frame.joined().contains("Van?[2J?]0…"))
    }

    /// Values the contract allows but no receiver reports (a speed of 1e308 m/s, dates 1e300 s away, a
    /// timestamp of -1e18, a clock offset of years) are shown as implausible, `?`, not printed raw
    /// (they were `1000000000000000` and `11574074074d`); plausible neighbours still show.
    @Test func extremeValuesAreShownAsImplausible() throws {
        #expect(RowFormat.speed(1e308) == "?")
        #expect(RowFormat.speed(150 / 3.6) == "150")
        #expect(RowFormat.distance(1e308) == "?")
        #expect(RowFormat.elapsed(1e308) == "?")
        #expect(RowFormat.age(since: Date(timeIntervalSince1970: -1e300), now: Wire.now) == "?")
        #expect(RowFormat.age(since: Date(timeIntervalSince1970: -1e18), now: Wire.now) == "?")
        #expect(RowFormat.age(since: Wire.now.addingTimeInterval(7015), now: Wire.now) == "?")
        #expect(RowFormat.age(since: Wire.now.addingTimeInterval(-3 * 86_400), now: Wire.now) == "3d")
        #expect(RowFormat.eta(Date(timeIntervalSince1970: 1e300), now: Wire.now) == "?")
        #expect(RowFormat.span(1_763_827_200) == "55y")
        #expect(RowFormat.span(1e18) == "?")
        #expect(DeviceHealth.Issue.clock(seconds: -7015).text == "clock -1h56m")

        var fleet = Fleet()
        var object = HostileCorpus.validEnvelope(device: "van-7", activity: "a1")
        object["timestamp"] = -1e18
        object["stale-date"] = -1e300
        object["content-state"] = [
            "fix": "3d", "latitude": 52.5, "longitude": 13.4, "speed": 1e308, "distance": 1e308, "elapsed": 1e308,
            "paused": false, "eta": 1e300, "fixTime": -1e300,
        ]
        _ = Wire.apply(&fleet, Wire.json(object))
        let row = try #require(fleet.rows.values.first)
        for layout in BoardLayout.allCases {
            var view = BoardView()
            let frame = FrameRenderer(layout: layout, columns: 120, lines: 30, colours: false)
                .render(fleet, view: &view, header: BoardHeader(source: "t"), now: Wire.now)
            #expect(!frame.isEmpty)
            #expect(!frame.joined().contains("1000000000000000") && !frame.joined().contains("11574074074"))
        }
        #expect(BoardJSON.row(row, state: fleet.state(of: row, at: Wire.now)).contains(#""speed":1e+308"#))
    }

    /// A device id of the longest kind (64 characters) and a name of 64 wide characters keep every
    /// line of every layout at the terminal's width, at 80 and 160 columns.
    @Test(arguments: [80, 160])
    func longIdsAndWideNamesKeepTheColumns(columns: Int) throws {
        var fleet = Fleet()
        let id = String(repeating: "d", count: 64)
        _ = Wire.apply(&fleet, Wire.envelope(device: id, name: String(repeating: "車", count: 64)))
        _ = Wire.apply(&fleet, Wire.envelope(device: "van-7", name: "Van 7"))
        for layout in BoardLayout.allCases {
            var view = BoardView()
            let frame = FrameRenderer(layout: layout, columns: columns, lines: 20, colours: false)
                .render(fleet, view: &view, header: BoardHeader(source: "t"), now: Wire.now)
            #expect(frame.allSatisfy { TerminalText.width($0) == columns }, "\(layout) at \(columns)")
        }
        var view = BoardView()
        let compact = FrameRenderer(layout: .compact, columns: columns, lines: 20, colours: false)
            .render(fleet, view: &view, header: BoardHeader(source: "t"), now: Wire.now)
        let titles = try #require(compact.first { $0.hasPrefix("DEVICE") })
        let van = try #require(compact.first { $0.hasPrefix("van-7 ") })
        // The STATE column starts at the same place on every row.
        let stateColumn = try #require(titles.range(of: "STATE")).lowerBound.utf16Offset(in: titles)
        #expect(van.dropFirst(stateColumn).hasPrefix("ACTIVE"))
    }
}
