import Board
import Foundation
import FuzzSupport
import LiveActivity
@_spi(Fuzzing) import MyelineWire

private let topics = TopicTree()
private let board = BoardDecoder(topics: topics, ownTracks: OwnTracksInput(staleAfter: 3600))
private let activityTopic = "myeline/van-7/activities/trip-0"
private let statusTopic = "myeline/van-7/status"
private let ownTracksTopic = "owntracks/jane/phone"
private let now = Date(timeIntervalSince1970: 1_700_000_000)

/// libFuzzer entry point: one payload as an activity envelope, as a status, as a track point and as
/// an OwnTracks message (`--owntracks`), through the wire codec and the board (decoder, fleet, renderer, JSON
/// lines, plain lines, device lines), as the aggregator receives it.
///
/// Besides not crashing or hanging: an envelope or status that decodes can be encoded again, a
/// refusal names its problem, whatever the board accepts it can show (envelopes of other attributes
/// types included), and the fast paths of the decode (``WireJSON``'s readers without Codable, then
/// Codable over its parse) give what `JSONDecoder` gives: the same envelope (as a `location` one and
/// as one of any type) or status, or a refusal by both.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let bytes = FuzzSupport.bytes(data, count)
    checkAgreement(ActivityEnvelope<LocationActivityAttributes>.self, bytes)
    checkAgreement(AnyActivityEnvelope.self, bytes)
    checkAgreement(StatusMessage.self, bytes)
    checkAgreement(TrackPoint.self, bytes)
    do {
        FuzzSupport.checkRoundTrip(
            try WireCodec.decode(ActivityEnvelope<LocationActivityAttributes>.self, from: Data(bytes)))
    } catch {
        FuzzSupport.checkRefusal(error)
    }
    // A track point, read without Codable and written without JSONEncoder (the agent's path).
    do {
        FuzzSupport.checkRoundTrip(try WireCodec.decode(TrackPoint.self, from: Data(bytes)))
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
        let state = fleet.state(of: row, at: now)
        precondition(!BoardJSON.row(row, state: state, fleet: fleet).contains("\n"))
        let health = fleet.health(of: row.key.device)
        let plain = PlainText.row(row, state: state, status: fleet.devices[row.key.device], health: health, now: now)
        precondition(!plain.contains("\n") && !plain.contains("\u{1B}"))
    }
    // Devices too: their JSON and plain lines, and a frame of only the offline or unhealthy ones.
    for device in fleet.devices.keys {
        precondition(!BoardJSON.device(device, fleet: fleet).contains("\n"))
        precondition(!PlainText.device(device, fleet: fleet, now: now).contains("\u{1B}"))
    }
    var unhealthy = BoardView(rows: .unhealthy)
    _ = FrameRenderer(layout: .compact, columns: 80, lines: 10, colours: false)
        .render(fleet, view: &unhealthy, header: BoardHeader(source: "fuzz"), now: now)
    return 0
}

/// The payload decoded as the board decodes it (fast paths first) and by `JSONDecoder` alone: the
/// same value, or refused by both.
private func checkAgreement<Payload: Decodable & Equatable & WirePayload>(_ type: Payload.Type, _ bytes: [UInt8]) {
    let fast = try? WireCodec.decode(type, from: bytes)
    let reference = try? WireCodec.decodeWithJSONDecoder(type, from: bytes)
    precondition(fast == reference, "\(Payload.schema): the fast path and JSONDecoder disagree")
}
