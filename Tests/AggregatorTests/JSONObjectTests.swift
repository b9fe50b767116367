import Board
import Foundation
import Testing
import TestSupport

/// The hand-written JSON lines write what `JSONSerialization` (`.sortedKeys`,
/// `.withoutEscapingSlashes`) wrote before them, byte for byte.
struct JSONObjectTests {
    static func serialized(_ object: [String: Any]) throws -> String {
        let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
        return String(decoding: data, as: UTF8.self)
    }

    static let strings = [
        "", "plain", "Vehicle 1000", "quote \" and backslash \\", "a/b", "tab\tnew\nline\rret",
        "\u{0}\u{1}\u{8}\u{B}\u{C}\u{1F}\u{7F}", "Grüße, 東京 🚐", "e\u{301}",
    ]

    static let numbers: [Double] = [
        0, -0.0, 1, -1, 60, 12.5, 52.51007, 13.4, 0.1, 1e-7, 123_456_789.125, 1_700_000_000, 1_700_000_000.123,
        1e16, 1e21, -273.15, Double.leastNonzeroMagnitude, Double.greatestFiniteMagnitude,
    ]

    @Test(arguments: strings)
    func stringsAreEscapedAsBefore(_ text: String) throws {
        var object = JSONObject()
        object[text] = .string(text)
        #expect(object.text == (try Self.serialized([text: text])))
    }

    @Test(arguments: numbers)
    func numbersAreWrittenAsBefore(_ number: Double) throws {
        var object = JSONObject()
        object["n"] = .number(number)
        #expect(object.text == (try Self.serialized(["n": number])))
    }

    /// Numbers as the wire carries them (decimals of a few digits: coordinates, times, distances), and
    /// any bit pattern: the short-decimal path and `description` write the same text.
    @Test func everyKindOfNumberIsWrittenAsBefore() throws {
        var generator = SeededGenerator(seed: 42)
        var numbers: [Double] = [0.001, 0.00099, 999_999_999_999_999.9, 1e15, 0x1p53, 0x1p53 + 2, -0x1p53, 0.3, 2.675]
        for _ in 0..<3_000 {
            let whole = Int64.random(in: -2_000_000_000...2_000_000_000, using: &generator)
            let fraction = Int.random(in: 0...999_999_999, using: &generator)
            let digits = Int.random(in: 1...9, using: &generator)
            numbers.append(Double("\(whole).\(String(fraction).prefix(digits))")!)
            numbers.append(Double(bitPattern: generator.next()))
            numbers.append(Double.random(in: -1e6...1e6, using: &generator))
        }
        for number in numbers where number.isFinite {
            var object = JSONObject()
            object["n"] = .number(number)
            #expect(object.text == (try Self.serialized(["n": number])), "\(number)")
        }
    }

    @Test func integersBooleansAndNestedObjectsAreWrittenAsBefore() throws {
        var inner = JSONObject()
        inner["title"] = .string("Entered depot")
        inner["body"] = .string("Van 7 entered depot at 10:00.")
        var object = JSONObject()
        object["seq"] = .int(Int.max)
        object["min"] = .int(Int.min)
        object["paused"] = .bool(false)
        object["ok"] = .bool(true)
        object["alert"] = .object(inner)
        let expected = try Self.serialized([
            "seq": Int.max, "min": Int.min, "paused": false, "ok": true,
            "alert": ["title": "Entered depot", "body": "Van 7 entered depot at 10:00."],
        ])
        #expect(object.text == expected)
        #expect(JSONObject().text == "{}")
    }

    /// Every key the board writes, in the order `JSONSerialization` sorted them.
    @Test func theBoardsKeysAreSortedAsBefore() throws {
        let keys = [
            "device", "activity", "state", "name", "event", "seq", "timestamp", "relevance-score", "fix", "distance",
            "elapsed", "paused", "change", "vehicle", "driver", "destination", "latitude", "longitude", "altitude",
            "speed", "course", "horizontalAccuracy", "satellites", "fixTime", "progress", "eta", "stale-date",
            "dismissal-date", "alert", "status", "since", "reason", "activities", "rejected", "warning", "active",
            "stale", "ended", "offline", "title", "body", "sound",
        ]
        var object = JSONObject()
        for (index, key) in keys.enumerated() { object[key] = .int(index) }
        let expected = try Self.serialized(Dictionary(uniqueKeysWithValues: keys.enumerated().map { ($1, $0) }))
        #expect(object.text == expected)
    }

    @Test func settingNilRemovesAKey() {
        var object = JSONObject()
        object["a"] = .int(1)
        object["b"] = .int(2)
        object["a"] = nil
        #expect(object.text == "{\"b\":2}")
    }

    @Test(arguments: RowState.allCases) func aRowsStateIsItsNameInLowerCase(_ state: RowState) throws {
        let row = try #require(Wire.sampleFleet().rows.values.first)
        let line = try JSONSerialization.jsonObject(with: Data(BoardJSON.row(row, state: state).utf8))
        #expect((line as? [String: Any])?["state"] as? String == state.rawValue.lowercased())
    }

    /// The activity line, written member by member in a fixed order, is what `JSONSerialization`
    /// writes for the same object with sorted keys: every key in its place.
    @Test func activityLinesAreSortedAsJSONSerializationSortsThem() throws {
        let fleet = Wire.sampleFleet()
        for row in fleet.rows.values {
            for line in [
                BoardJSON.row(row, state: .active, change: "updated", fleet: fleet), BoardJSON.row(row, state: .stale),
            ] {
                let object = try JSONSerialization.jsonObject(with: Data(line.utf8))
                let again = try JSONSerialization.data(
                    withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
                #expect(String(decoding: again, as: UTF8.self) == line)
            }
        }
    }
}
