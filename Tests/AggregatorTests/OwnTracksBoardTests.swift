import Board
import Foundation
import Interop
import LiveActivity
import MyelineWire
import Testing

/// OwnTracks devices on the board (`--owntracks`): a row per `owntracks/USER/DEVICE`, stale from its
/// `tst`, offline from its `lwt`, and phones' broken messages shown as far as they are valid or
/// counted as rejected, never a crash.
struct OwnTracksBoardTests {
    static let tst = 1_709_294_400
    static let decoder = BoardDecoder(topics: TopicTree(prefix: .default), ownTracks: OwnTracksInput(staleAfter: 600))
    static let key = ActivityKey(device: try! DeviceID("owntracks.jane.phone"), activity: "owntracks")

    static func apply(_ fleet: inout Fleet, _ topic: String, _ payload: String, at seconds: Int = tst) -> Fleet.Change {
        fleet.apply(
            decoder.decode(topic: topic, payload: Array(payload.utf8)),
            now: Date(timeIntervalSince1970: TimeInterval(seconds)))
    }

    /// One message from a phone and what the board makes of it.
    struct Case: CustomTestStringConvertible, Sendable {
        let name: String
        let topic: String
        let payload: String
        /// The row's accuracy (metres), tracker id and speed (m/s) when shown; nil when rejected.
        let shown: (accuracy: Double?, trackerID: String?, speed: Double?)?
        var testDescription: String { name }
    }

    static let location = #""_type":"location","lat":52.5,"lon":13.4,"tst":1709294400"#
    static let cases: [Case] = [
        Case(
            name: "a full location", topic: "owntracks/jane/phone",
            payload: #"{\#(location),"acc":12,"tid":"JP","vel":36,"batt":80,"conn":"w"}"#,
            shown: (12, "JP", 10)),
        Case(
            name: "wrong optional fields are left out", topic: "owntracks/jane/phone",
            payload: #"{\#(location),"acc":"12","tid":["J"],"vel":-5}"#, shown: (nil, nil, nil)),
        Case(
            name: "an upper-case user and device", topic: "owntracks/Jane/Phone", payload: "{\(location)}",
            shown: (nil, nil, nil)),
        Case(
            name: "no lat", topic: "owntracks/jane/phone", payload: #"{"_type":"location","lon":1,"tst":1709294400}"#,
            shown: nil),
        Case(
            name: "tst as a string", topic: "owntracks/jane/phone",
            payload: #"{"_type":"location","lat":1,"lon":1,"tst":"1709294400"}"#, shown: nil),
        Case(
            name: "a fractional tst (docs: whole seconds)", topic: "owntracks/jane/phone",
            payload: #"{"_type":"location","lat":52.5,"lon":13.4,"tst":1709294400.5}"#, shown: nil),
        Case(name: "not JSON", topic: "owntracks/jane/phone", payload: "\u{0}\u{1}garbage", shown: nil),
        Case(name: "no _type", topic: "owntracks/jane/phone", payload: #"{"lat":1,"lon":1,"tst":1}"#, shown: nil),
        Case(
            name: "a waypoint on the location topic", topic: "owntracks/jane/phone",
            payload: #"{"_type":"waypoint","desc":"home","tst":1}"#, shown: nil),
        Case(
            name: "user and device too long for a board id",
            topic: "owntracks/\(String(repeating: "u", count: 60))/phone",
            payload: "{\(location)}", shown: nil),
    ]

    @Test("a phone's message is shown as far as it is valid, or counted as rejected", arguments: cases)
    func hostile(_ entry: Case) throws {
        var fleet = Fleet()
        let change = Self.apply(&fleet, entry.topic, entry.payload)
        guard let shown = entry.shown else {
            guard case .rejected(let rejection) = change else {
                Issue.record("not rejected: \(change)")
                return
            }
            #expect(rejection.topic == entry.topic)
            #expect(fleet.rejectedCount == 1)
            #expect(fleet.rows.isEmpty)
            return
        }
        #expect(fleet.rejectedCount == 0)
        #expect(fleet.rows.count == 1)
        let row = try #require(fleet.rows.values.first)
        #expect(row.content?.latitude == 52.5)
        #expect(row.content?.longitude == 13.4)
        #expect(row.content?.horizontalAccuracy == shown.accuracy)
        #expect(row.attributes?.driver == shown.trackerID)
        #expect(row.content?.speed == shown.speed)
        #expect(row.timestamp == Date(timeIntervalSince1970: TimeInterval(Self.tst)))
    }

    @Test("upper-case levels are lower-cased into the board's id, the name keeps them")
    func key() throws {
        var fleet = Fleet()
        _ = Self.apply(&fleet, "owntracks/Jane/My Phone", "{\(Self.location)}")
        let row = try #require(fleet.rows.values.first)
        #expect(row.key.device.rawValue == "owntracks.jane.my-phone")
        #expect(row.attributes?.name == "Jane/My Phone")
    }

    @Test("the row is active, stale once tst is older than stale-after, offline after its lwt, back with a location")
    func lifecycle() throws {
        var fleet = Fleet()
        _ = Self.apply(&fleet, "owntracks/jane/phone", "{\(Self.location)}")
        let row = try #require(fleet.rows[Self.key])
        #expect(fleet.state(of: row, at: Date(timeIntervalSince1970: TimeInterval(Self.tst + 599))) == .active)
        #expect(fleet.state(of: row, at: Date(timeIntervalSince1970: TimeInterval(Self.tst + 600))) == .stale)

        #expect(
            Self.apply(&fleet, "owntracks/jane/phone", #"{"_type":"lwt","tst":1709290000}"#) == .status(Self.key.device)
        )
        #expect(fleet.state(of: row, at: Date(timeIntervalSince1970: TimeInterval(Self.tst))) == .offline)

        // The same fix again is outdated; a newer one brings the phone back.
        #expect(Self.apply(&fleet, "owntracks/jane/phone", "{\(Self.location)}") == .unchanged)
        #expect(fleet.outdatedCount == 1)
        let newer = #"{"_type":"location","lat":52.6,"lon":13.5,"tst":1709294460}"#
        #expect(Self.apply(&fleet, "owntracks/jane/phone", newer) == .updated(Self.key))
        let back = try #require(fleet.rows[Self.key])
        #expect(back.content?.latitude == 52.6)
        #expect(fleet.state(of: back, at: Date(timeIntervalSince1970: TimeInterval(Self.tst + 60))) == .active)
    }

    @Test("an empty retained message, as remove-integrations or mosquitto_pub -r -n sends it, removes the row")
    func cleared() {
        var fleet = Fleet()
        _ = Self.apply(&fleet, "owntracks/jane/phone", "{\(Self.location)}")
        #expect(fleet.rows[Self.key] != nil)
        #expect(Self.apply(&fleet, "owntracks/jane/phone", "") == .removed(Self.key))
        #expect(fleet.rows.isEmpty)
        #expect(fleet.rejectedCount == 0)
        // Clearing a device the board never showed changes nothing and is not an error.
        #expect(Self.apply(&fleet, "owntracks/bob/phone", "") == .unchanged)
        #expect(fleet.rejectedCount == 0)
    }

    @Test("without --owntracks, OwnTracks topics are rejected like any foreign topic")
    func off() {
        var fleet = Fleet()
        let decoder = BoardDecoder(topics: TopicTree(prefix: .default))
        let change = fleet.apply(
            decoder.decode(topic: "owntracks/jane/phone", payload: Array("{\(Self.location)}".utf8)), now: Date())
        guard case .rejected = change else {
            Issue.record("not rejected: \(change)")
            return
        }
        #expect(fleet.rows.isEmpty)
    }
}
