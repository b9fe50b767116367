import Foundation
import Testing
import TestSupport

@testable import LiveActivity
@_spi(Fuzzing) @testable import MyelineWire

/// The envelope and the status written without `JSONEncoder` (``WireJSONEncodable``) against
/// `JSONEncoder` (``ContentJSON``'s, what ``WireCodec`` used for them before): the same bytes for
/// every value, hence the same payload for every consumer; every optional present and absent,
/// hostile strings, extreme numbers, then random envelopes and statuses. And ``WireCodec``'s verdict
/// on them (sent, or refused with the same message as before).
struct DirectEncodingTests {
    typealias Envelope = ActivityEnvelope<LocationActivityAttributes>
    typealias State = LocationActivityAttributes.ContentState

    static let device = try! DeviceID("van-7")
    static let t0 = Date(timeIntervalSince1970: 1_700_000_000.123)
    static let depot = LocationActivityAttributes.Destination(name: "Depot North", latitude: 44.1, longitude: -121.2)

    static func envelope(
        activity: String = "0f5c8e1a-3b7d-4c2e-9a6f-1d2e3f4a5b6c", event: EnvelopeEvent = .update, seq: Int = 7,
        timestamp: Date = t0, attributes: LocationActivityAttributes = .init(deviceID: device, name: "Van 7"),
        state: State = Fixtures.fullState, staleDate: Date? = t0.addingTimeInterval(180), relevanceScore: Double = 0,
        dismissalDate: Date? = nil, alert: AlertConfiguration? = nil
    ) -> Envelope {
        Envelope(
            header: EnvelopeHeader(
                device: device, activity: activity, attributesType: LocationActivityAttributes.typeName, event: event,
                seq: seq),
            timestamp: timestamp, attributes: attributes,
            content: ActivityContent(state: state, staleDate: staleDate, relevanceScore: relevanceScore),
            dismissalDate: dismissalDate, alert: alert)
    }

    static func status(
        state: StatusMessage.State = .online, since: Date? = t0, reason: StatusMessage.Reason? = nil,
        version: String = "0.1.0", dropped: UInt64? = nil, instance: String? = nil, storageError: String? = nil,
        clockOffset: Int? = nil, powerLosses: UInt64? = nil
    ) -> StatusMessage {
        StatusMessage(
            device: device, state: state, since: since, reason: reason, version: version, dropped: dropped,
            instance: instance, storageError: storageError, clockOffset: clockOffset, powerLosses: powerLosses)
    }

    /// Expects the direct bytes to be `JSONEncoder`'s.
    static func expectSameBytes(_ value: some WireJSONEncodable, sourceLocation: SourceLocation = #_sourceLocation) {
        let direct = value.directJSON(capacity: 16)
        let reference = try? ContentJSON.encoder.encode(value)
        guard let direct, let reference else {
            Issue.record(
                "direct: \(direct != nil), JSONEncoder: \(reference != nil) for \(value)",
                sourceLocation: sourceLocation)
            return
        }
        #expect(
            String(decoding: direct, as: UTF8.self) == String(decoding: reference, as: UTF8.self),
            sourceLocation: sourceLocation)
    }

    /// Expects ``WireCodec/encode(_:)`` to say what it said when it wrote with `JSONEncoder`: the
    /// bytes `JSONEncoder` writes when receivers' decode takes them, otherwise the decode's refusal.
    static func expectSameVerdict<Payload: WireJSONEncodable & Codable & WirePayload & Equatable>(
        _ payload: Payload, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let encoded = Result { () throws(ActivityError) in try WireCodec.encode(payload) }
        guard let reference = try? ContentJSON.encoder.encode(payload) else {
            #expect(throws: ActivityError.self, sourceLocation: sourceLocation) { try encoded.get() }
            return
        }
        let decoded = Result { () throws(ActivityError) in
            try WireCodec.decodeWithJSONDecoder(Payload.self, from: Array(reference))
        }
        switch (decoded, encoded) {
        case (.success, .success(let data)):
            #expect(data == reference, sourceLocation: sourceLocation)
        case (.failure(let refusal), .failure(let error)):
            #expect(
                error.message.replacing("cannot encode", with: "invalid", maxReplacements: 1) == refusal.message,
                sourceLocation: sourceLocation)
        default:
            Issue.record("decode: \(decoded), encode: \(encoded) for \(payload)", sourceLocation: sourceLocation)
        }
    }

    @Test func theAgentsEnvelopesAreWrittenAsJSONEncoderWritesThem() throws {
        let attributes = try Fixtures.attributes()
        for envelope in [
            Self.envelope(event: .start, seq: 1, attributes: attributes, state: State()),
            Self.envelope(attributes: attributes),
            Self.envelope(
                attributes: attributes, staleDate: nil, relevanceScore: 50,
                alert: AlertConfiguration(title: "Arriving", body: "5 minutes from Depot North", sound: "chime")),
            Self.envelope(alert: AlertConfiguration(title: "", body: "")),
            Self.envelope(event: .end, seq: 9, dismissalDate: Self.t0.addingTimeInterval(3600)),
        ] {
            Self.expectSameBytes(envelope)
            // What WireCodec sends, and what receivers read back through it.
            let bytes = try WireCodec.encode(envelope)
            #expect(Array(bytes) == envelope.directJSON(capacity: 1024))
            #expect(try WireCodec.decode(Envelope.self, from: bytes) == envelope)
        }
    }

    @Test func everyOptionalOfTheContentIsWrittenOrLeftOutAsJSONEncoderDoes() {
        for mask in 0..<(1 << 11) {
            func bit(_ n: Int) -> Bool { mask & (1 << n) != 0 }
            let state = State(
                latitude: bit(0) ? -33.8688 : nil, longitude: bit(0) ? 151.2093 : nil, altitude: bit(1) ? -12 : nil,
                speed: bit(2) ? 0 : nil, course: bit(3) ? 360 : nil, horizontalAccuracy: bit(4) ? 0.5 : nil,
                fix: bit(0) ? .fix3D : .noFix, satellites: bit(5) ? 0 : nil, fixTime: bit(6) ? Self.t0 : nil,
                distance: 12.5, elapsed: 60, paused: bit(7), progress: bit(8) ? 0.25 : nil,
                eta: bit(8) ? Self.t0.addingTimeInterval(900) : nil, destination: bit(9) ? Self.depot : nil,
                status: bit(10) ? "Out for delivery" : nil)
            Self.expectSameBytes(Self.envelope(state: state, staleDate: bit(1) ? nil : Self.t0))
        }
        for mask in 0..<8 {
            let attributes = LocationActivityAttributes(
                deviceID: Self.device, name: "Van 7", vehicle: mask & 1 == 0 ? nil : "KX-123",
                driver: mask & 2 == 0 ? nil : "Ana", destination: mask & 4 == 0 ? nil : Self.depot)
            Self.expectSameBytes(Self.envelope(attributes: attributes))
        }
    }

    @Test func everyOptionalOfTheStatusIsWrittenOrLeftOutAsJSONEncoderDoes() {
        for mask in 0..<(1 << 7) {
            func bit(_ n: Int) -> Bool { mask & (1 << n) != 0 }
            let status = Self.status(
                state: bit(0) ? .online : .offline, since: bit(1) ? Self.t0 : nil,
                reason: bit(2) ? .connectionLost : nil, dropped: bit(3) ? 1_200 : nil,
                instance: bit(4) ? "4f1c9a2e" : nil,
                storageError: bit(5) ? "/var/lib/myeline/journal: No space left on device" : nil,
                clockOffset: bit(6) ? -3_600 : nil, powerLosses: bit(6) ? 2 : nil)
            Self.expectSameBytes(status)
            Self.expectSameVerdict(status)
        }
        Self.expectSameBytes(StatusMessage.will(device: Self.device, instance: "4f1c9a2e"))
    }

    @Test(arguments: JSONSamples.hostileStrings)
    func hostileStringsAreEscapedAsJSONEncoderEscapesThem(_ text: String) {
        var state = Fixtures.fullState
        state.status = text
        state.destination = .init(name: text, latitude: 0, longitude: 0)
        let attributes = LocationActivityAttributes(
            deviceID: Self.device, name: text, vehicle: text, driver: text, destination: state.destination)
        Self.expectSameBytes(
            Self.envelope(
                activity: text, attributes: attributes, state: state,
                alert: AlertConfiguration(title: text, body: text, sound: text)))
        Self.expectSameBytes(
            Self.status(
                reason: StatusMessage.Reason(rawValue: text), version: text, instance: text, storageError: text))
    }

    @Test(arguments: JSONSamples.extremeNumbers)
    func extremeNumbersAreWrittenAsJSONEncoderWritesThem(_ value: Double) {
        let state = State(
            latitude: value, longitude: value, altitude: value, speed: value, course: value, horizontalAccuracy: value,
            fix: .fix2D, fixTime: Date(timeIntervalSince1970: value), distance: value, elapsed: value,
            progress: value, eta: Date(timeIntervalSince1970: value),
            destination: .init(name: "x", latitude: value, longitude: value))
        Self.expectSameBytes(
            Self.envelope(
                timestamp: Date(timeIntervalSince1970: value), state: state,
                staleDate: Date(timeIntervalSince1970: value), relevanceScore: value,
                dismissalDate: Date(timeIntervalSince1970: value)))
        Self.expectSameBytes(Self.status(since: Date(timeIntervalSince1970: value)))
    }

    @Test(arguments: [Int.min, -1, 0, 1, 9, 1_000_000, Int(Int32.max) + 1, Int.max])
    func integersAreWrittenAsJSONEncoderWritesThem(_ value: Int) {
        var state = Fixtures.fullState
        state.satellites = value
        Self.expectSameBytes(Self.envelope(seq: value, state: state))
        let unsigned = UInt64(truncatingIfNeeded: value)
        Self.expectSameBytes(Self.status(dropped: unsigned, clockOffset: value, powerLosses: unsigned))
    }

    @Test(arguments: JSONSamples.nonFiniteNumbers)
    func nonFiniteNumbersAreLeftToJSONEncoderAndRefusedAsBefore(_ value: Double) {
        var state = Fixtures.fullState
        state.speed = value
        #expect(Self.envelope(state: state).directJSON(capacity: 1024) == nil)
        #expect(Self.envelope(relevanceScore: value).directJSON(capacity: 1024) == nil)
        #expect(Self.envelope(staleDate: Date(timeIntervalSince1970: value)).directJSON(capacity: 1024) == nil)
        #expect(Self.status(since: Date(timeIntervalSince1970: value)).directJSON(capacity: 1024) == nil)
        // What WireCodec says is JSONEncoder's error, as it was.
        let error = #expect(throws: ActivityError.self) { try WireCodec.encode(Self.envelope(state: state)) }
        #expect(
            error?.message.hasPrefix(
                "cannot encode myeline.activity.v1 payload: 'content-state.speed': Unable to encode")
                == true)
    }

    @Test func whatReceiversWouldRefuseIsStillRefusedNamingTheKey() {
        var state = Fixtures.fullState
        state.latitude = 91
        let latitude = #expect(throws: ActivityError.self) { try WireCodec.encode(Self.envelope(state: state)) }
        #expect(
            latitude?.message
                == "cannot encode myeline.activity.v1 payload: 'content-state.latitude': 91 is outside -90...90")
        let destination = LocationActivityAttributes.Destination(name: "Nowhere", latitude: 0, longitude: 181)
        let attributes = LocationActivityAttributes(deviceID: Self.device, name: "Van 7", destination: destination)
        let longitude = #expect(throws: ActivityError.self) {
            try WireCodec.encode(Self.envelope(attributes: attributes))
        }
        #expect(
            longitude?.message
                == "cannot encode myeline.activity.v1 payload: 'attributes.destination.longitude': 181 is outside -180...180"
        )
        let version = #expect(throws: ActivityError.self) { try WireCodec.encode(Self.status(version: "")) }
        #expect(version?.message.hasPrefix("cannot encode myeline.status.v1 payload: 'version'") == true)
        for envelope in [
            Self.envelope(activity: "Not An Id"), Self.envelope(seq: 0), Self.envelope(event: .end),
            Self.envelope(dismissalDate: Self.t0), Self.envelope(relevanceScore: -1),
        ] {
            Self.expectSameVerdict(envelope)
        }
    }

    @Test func randomEnvelopesAndStatusesAreWrittenAndJudgedAsBefore() throws {
        var random = SeededGenerator(seed: 35)
        func maybe<Value>(_ value: @autoclosure () -> Value) -> Value? {
            Bool.random(using: &random) ? value() : nil
        }
        func number() -> Double { JSONSamples.randomDouble(using: &random) }
        func text() -> String { JSONSamples.randomString(using: &random) }
        func date() -> Date { Date(timeIntervalSince1970: number()) }
        for _ in 0..<2_000 {
            let hasPosition = Bool.random(using: &random)
            let state = State(
                latitude: hasPosition ? number() : nil, longitude: hasPosition ? number() : nil,
                altitude: maybe(number()), speed: maybe(number()), course: maybe(number()),
                horizontalAccuracy: maybe(number()), fix: FixMode.allCases.randomElement(using: &random)!,
                satellites: maybe(Int.random(in: -5...1_000, using: &random)), fixTime: maybe(date()),
                distance: number(),
                elapsed: number(), paused: Bool.random(using: &random), progress: maybe(number()), eta: maybe(date()),
                destination: maybe(.init(name: text(), latitude: number(), longitude: number())), status: maybe(text()))
            let attributes = LocationActivityAttributes(
                deviceID: Self.device, name: text(), vehicle: maybe(text()), driver: maybe(text()),
                destination: maybe(.init(name: text(), latitude: number(), longitude: number())))
            let event = EnvelopeEvent.allCases.randomElement(using: &random)!
            let envelope = Self.envelope(
                activity: Bool.random(using: &random) ? "trip-\(Int.random(in: 0..<100, using: &random))" : text(),
                event: event, seq: Int.random(in: -1...100_000, using: &random), timestamp: date(),
                attributes: attributes,
                state: state, staleDate: maybe(date()), relevanceScore: number(),
                dismissalDate: event == .end ? date() : maybe(date()),
                alert: maybe(AlertConfiguration(title: text(), body: text(), sound: maybe(text()))))
            Self.expectSameBytes(envelope)
            Self.expectSameVerdict(envelope)
            let status = Self.status(
                state: Bool.random(using: &random) ? .online : .offline, since: maybe(date()),
                reason: maybe(StatusMessage.Reason(rawValue: text())), version: text(),
                dropped: maybe(random.next()), instance: maybe(text()), storageError: maybe(text()),
                clockOffset: maybe(Int(truncatingIfNeeded: random.next())), powerLosses: maybe(random.next()))
            Self.expectSameBytes(status)
            Self.expectSameVerdict(status)
        }
    }
}
