import DirectJSON
import FoundationEssentials
import LiveActivity

/// A wire type that writes itself as ``WireCodec`` sends it without `JSONEncoder`: the bytes
/// ``ContentJSON``'s encoder gives (keys sorted, slashes unescaped, dates in seconds rounded to
/// milliseconds, absent optionals omitted, numbers in `JSONEncoder`'s forms).
///
/// The agent's payloads other than its track points (an activity's envelope at every heartbeat,
/// its status after each connection): through `JSONEncoder` they were the only use of its encoder
/// left in a steady agent, whose code (about a mebibyte of pages) came back into memory at the
/// first heartbeat (issue 24). A type's `writeMembers(to:)` writes the keys its `encode(to:)`
/// writes, in `.sortedKeys`' order; `DirectEncodingTests` hold it to `JSONEncoder`'s bytes.
protocol WireJSONEncodable: Encodable {
    /// Writes the value's members into the object `json` is writing, keys in sorted order.
    func writeMembers(to json: inout DirectJSONWriter)
}

extension WireJSONEncodable {
    /// The value as a JSON object; nil when a number is not finite (`JSONEncoder` then says why).
    func directJSON(capacity: Int) -> [UInt8]? {
        var json = DirectJSONWriter(capacity: capacity, escapingSlashes: false)
        writeMembers(to: &json)
        return json.finish()
    }
}

extension DirectJSONWriter {
    /// `"name":` and the value's object, unless it is nil.
    mutating func member(_ name: StaticString, _ value: (some WireJSONEncodable)?) {
        guard let value else { return }
        member(name) { value.writeMembers(to: &$0) }
    }

    /// `"name":` and the date as ``ContentJSON`` writes it (seconds since 1970, rounded to
    /// milliseconds), unless it is nil.
    mutating func member(_ name: StaticString, date: Date?) {
        member(name, number: date.map(ContentJSON.seconds))
    }
}

extension ActivityEnvelope: WireJSONEncodable
where Attributes: WireJSONEncodable, Attributes.ContentState: WireJSONEncodable {
    /// The envelope's keys, the header's among them, as `encode(to:)` writes them.
    func writeMembers(to json: inout DirectJSONWriter) {
        json.member("activity", string: header.activity)
        json.member("alert", alert)
        json.member("attributes", attributes)
        json.member("attributes-type", string: header.attributesType)
        json.member("content-state", content.state)
        json.member("device", string: header.device.rawValue)
        json.member("dismissal-date", date: dismissalDate)
        json.member("event", string: header.event.rawValue)
        json.member("relevance-score", number: content.relevanceScore)
        json.member("schema", string: Self.schema)
        json.member("seq", integer: header.seq)
        json.member("stale-date", date: content.staleDate)
        json.member("timestamp", date: timestamp)
    }
}

extension AlertConfiguration: WireJSONEncodable {
    func writeMembers(to json: inout DirectJSONWriter) {
        json.member("body", string: body)
        json.member("sound", string: sound)
        json.member("title", string: title)
    }
}

extension LocationActivityAttributes: WireJSONEncodable {
    func writeMembers(to json: inout DirectJSONWriter) {
        json.member("destination", destination)
        json.member("deviceID", string: deviceID.rawValue)
        json.member("driver", string: driver)
        json.member("name", string: name)
        json.member("vehicle", string: vehicle)
    }
}

extension LocationActivityAttributes.Destination: WireJSONEncodable {
    func writeMembers(to json: inout DirectJSONWriter) {
        json.member("latitude", number: latitude)
        json.member("longitude", number: longitude)
        json.member("name", string: name)
    }
}

extension LocationActivityAttributes.ContentState: WireJSONEncodable {
    func writeMembers(to json: inout DirectJSONWriter) {
        json.member("altitude", number: altitude)
        json.member("course", number: course)
        json.member("destination", destination)
        json.member("distance", number: distance)
        json.member("elapsed", number: elapsed)
        json.member("eta", date: eta)
        json.member("fix", string: fix.rawValue)
        json.member("fixTime", date: fixTime)
        json.member("horizontalAccuracy", number: horizontalAccuracy)
        json.member("latitude", number: latitude)
        json.member("longitude", number: longitude)
        json.member("paused", bool: paused)
        json.member("progress", number: progress)
        json.member("satellites", integer: satellites)
        json.member("speed", number: speed)
        json.member("status", string: status)
    }
}

extension StatusMessage: WireJSONEncodable {
    func writeMembers(to json: inout DirectJSONWriter) {
        json.member("clock-offset", integer: clockOffset)
        json.member("device", string: device.rawValue)
        json.member("dropped", integer: dropped)
        json.member("instance", string: instance)
        json.member("power-losses", integer: powerLosses)
        json.member("reason", string: reason?.rawValue)
        json.member("schema", string: Self.schema)
        json.member("since", date: since)
        json.member("state", string: state.rawValue)
        json.member("storage-error", string: storageError)
        json.member("version", string: version)
    }
}
