import Board
import Foundation
import FuzzSupport
import LiveActivity

private let topics = TopicTree()
private let board = BoardDecoder(topics: topics, ownTracks: OwnTracksInput(staleAfter: 3600))
private let activityTopic = "myeline/van-7/activities/trip-0"
private let statusTopic = "myeline/van-7/status"
private let ownTracksTopic = "owntracks/jane/phone"
private let now = Date(timeIntervalSince1970: 1_700_000_000)

/// libFuzzer entry point: one payload as an activity envelope, as a status and as an OwnTracks
/// message (`--owntracks`), through the wire codec and the board (decoder, fleet, renderer, JSON
/// lines), as the aggregator receives it.
///
/// Besides not crashing or hanging: an envelope or status that decodes can be encoded again, a
/// refusal names its problem, and whatever the board accepts it can show.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let bytes = FuzzSupport.bytes(data, count)
    do {
        FuzzSupport.checkRoundTrip(
            try WireCodec.decode(ActivityEnvelope<LocationActivityAttributes>.self, from: Data(bytes)))
    } catch {
        FuzzSupport.checkRefusal(error)
    }
    var fleet = Fleet()
    for topic in [activityTopic, statusTopic, ownTracksTopic] {
        let input = board.decode(topic: topic, payload: bytes)
        if case .rejected(let rejection) = input { precondition(!rejection.reason.isEmpty) }
        fleet.apply(input, now: now)
    }
    for layout in BoardLayout.allCases {
        var view = BoardView()
        let frame = FrameRenderer(layout: layout, columns: 120, lines: 30, colours: false)
            .render(fleet, view: &view, header: BoardHeader(source: "fuzz"), now: now)
        precondition(frame.count <= 30)
    }
    for row in fleet.rows.values {
        precondition(!BoardJSON.row(row, state: fleet.state(of: row, at: now)).contains("\n"))
    }
    return 0
}
