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
}
