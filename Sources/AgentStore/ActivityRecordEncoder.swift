import FoundationEssentials

/// The file bytes of one activity's records (``ActivityStateStore``'s format), written without
/// `JSONEncoder` but for the attributes, whose JSON it keeps and reuses while they stay equal: an
/// activity's attributes do not change during it, and its record is saved at every fix (issue 24:
/// `JSONEncoder` was 22 % of the agent's instructions, for this record alone).
///
/// ``ActivityRecordFiles`` keeps one for each open record, and the agent's journal one for each
/// activity it saves (``ActivityStateStore/save(_:durable:encoder:)``); `ActivityRecordEncoderTests`
/// hold its bytes to `JSONEncoder`'s and to what `JSONDecoder` reads back.
public struct ActivityRecordEncoder<Attributes: Codable & Equatable & Sendable>: Sendable {
    /// The last attributes encoded, and their JSON.
    private var attributes: (value: Attributes, json: [UInt8])?

    /// An encoder that has encoded nothing yet.
    public init() {}

    /// The file's bytes for `activity`: the header, then the JSON body, padded with spaces to
    /// `length` bytes in all when it is shorter.
    ///
    /// - Throws: `AgentStoreError` with `.encoding` when the attributes do not encode as JSON or a
    ///   date is not finite (nothing is written then).
    public mutating func encode(_ activity: PersistedActivity<Attributes>, paddedTo length: Int = 0)
        throws(AgentStoreError) -> [UInt8]
    {
        let json: [UInt8]
        if let attributes, attributes.value == activity.attributes {
            json = attributes.json
        } else {
            json = try activity.attributesJSON()
            attributes = (activity.attributes, json)
        }
        return try ActivityStateStore<Attributes>.encode(activity, attributesJSON: json, paddedTo: length)
    }
}

extension ActivityRecordEncoder {
    /// The file's bytes as ``ActivityStateStore`` wrote them before its records were written
    /// directly: the whole record through `JSONEncoder` with sorted keys. The reference that
    /// `ActivityRecordEncoderTests` and the benchmarks hold ``encode(_:paddedTo:)`` to; the agent
    /// does not call it.
    ///
    /// - Throws: `EncodingError` when `JSONEncoder` refuses the record.
    @_spi(Benchmarks)
    public static func encodeWithJSONEncoder(_ activity: PersistedActivity<Attributes>, paddedTo length: Int = 0)
        throws -> [UInt8]
    {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let body = Array(try encoder.encode(activity))
        return ActivityStateStore<Attributes>.file(body: body, paddedTo: length)
    }
}
