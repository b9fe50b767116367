import DirectJSON
import LiveActivity

extension TripAccumulator.Snapshot {
    /// The snapshot's JSON, written without `JSONEncoder`: the bytes `JSONEncoder` with `.sortedKeys`
    /// gives (slashes escaped, nil optionals left out, every number in its form), which `JSONDecoder`
    /// reads back as this snapshot. Nil when a number is not finite, which `JSONEncoder` refuses too.
    ///
    /// The agent saves a running activity's totals with its record at every fix (issue 24);
    /// `SnapshotDirectJSONTests` hold this to `JSONEncoder`'s bytes.
    public func directJSON() -> [UInt8]? {
        var json = DirectJSONWriter(
            capacity: 320 + (destination?.name.utf8.count ?? 0) + (status?.utf8.count ?? 0), escapingSlashes: true)
        // The keys in the order `.sortedKeys` gives them, the nested objects' too.
        if let destination {
            json.member("destination") { json in
                json.member("latitude", number: destination.latitude)
                json.member("longitude", number: destination.longitude)
                json.member("name", string: destination.name)
            }
        }
        json.member("distance", number: distance)
        json.member("elapsed", number: elapsed)
        if let lastCounted {
            json.member("lastCounted") { json in
                json.member("latitude", number: lastCounted.latitude)
                json.member("longitude", number: lastCounted.longitude)
            }
        }
        json.member("lastCountedAccuracy", number: lastCountedAccuracy)
        json.member("paused", bool: paused)
        json.member("relevanceScore", number: relevanceScore)
        json.member("startDistance", number: startDistance)
        json.member("status", string: status)
        return json.finish()
    }
}
