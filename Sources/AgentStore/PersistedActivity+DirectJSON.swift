import DirectJSON
import FoundationEssentials

extension PersistedActivity {
    /// The record's JSON written without `JSONEncoder`, around `attributesJSON` (``attributesJSON()``'s
    /// bytes): the bytes `JSONEncoder` with `.sortedKeys` gives for the whole record, what
    /// ``ActivityStateStore`` wrote before (issue 24), so that files of old and new agents read
    /// alike. Slashes escaped, `tripTotals` in base64, dates as seconds since 2001 (the default
    /// strategies), no `dismissalDate` while it is nil. Nil when a date is not finite, which
    /// `JSONEncoder` refuses too.
    func directJSON(attributesJSON: [UInt8]) -> [UInt8]? {
        var json = DirectJSONWriter(
            capacity: 200 + activityID.utf8.count + attributesType.utf8.count + attributesJSON.count
                + tripTotals.count * 4 / 3,
            escapingSlashes: true)
        json.member("activityID", string: activityID)
        json.member("attributes", json: attributesJSON)
        json.member("attributesType", string: attributesType)
        json.member("dismissalDate", number: dismissalDate?.timeIntervalSinceReferenceDate)
        json.member("lastSeq", integer: lastSeq)
        json.member("startedAt", number: startedAt.timeIntervalSinceReferenceDate)
        json.member("trackSeq", integer: trackSeq)
        json.member("tripTotals", string: tripTotals.base64EncodedString())
        return json.finish()
    }

    /// The attributes' JSON as they stand in the record: `JSONEncoder`'s, keys sorted.
    ///
    /// - Throws: `AgentStoreError` with `.encoding` when they do not encode.
    func attributesJSON() throws(AgentStoreError) -> [UInt8] {
        do {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            return Array(try encoder.encode(attributes))
        } catch {
            throw AgentStoreError(
                .encoding, "the activity \(activityID) could not be encoded as JSON: its attributes: \(error)")
        }
    }
}
