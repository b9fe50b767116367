import Foundation
import LiveActivity
import MyelineWire

/// The activity envelope of the benchmarks: the full update of docs/topics.md ("An update with a position,
/// a stale date and an alert", every key present), for any device, seq and relevance score.
public enum SampleEnvelope {
    /// The topics of the benchmarks' fleet, under the default prefix `myeline`.
    public static let topics = TopicTree()
    /// The activity id of every sample envelope.
    public static let activityID = "3f2b8c1e-0d4a-4e59-9a57-2f1c7b5d9e10"
    /// The board's clock in the benchmarks: 40 s after the envelope's timestamp, before its stale date.
    public static let now = Date(timeIntervalSince1970: 1_700_000_100)

    /// The id of the `index`th device of a fleet: `dev-00042`.
    public static func device(_ index: Int) -> String {
        String(format: "dev-%05d", index)
    }

    /// The envelope's topic, `myeline/DEVICE/activities/ACTIVITY`.
    public static func topic(device: String) -> String {
        topics.activity(device: try! DeviceID(device), activityID: activityID)
    }

    /// The envelope of `device` with `seq` and `relevance`, decoded and checked by `WireCodec` as a
    /// receiver would.
    public static func envelope(
        device: String, seq: Int = 2, relevance: Double = 0
    ) -> ActivityEnvelope<LocationActivityAttributes> {
        let json = """
            {"activity":"\(activityID)",\
            "alert":{"body":"\(device) is 5 minutes from Depot North","sound":"chime","title":"Arriving"},\
            "attributes":{"destination":{"latitude":52.5651,"longitude":13.3343,"name":"Depot North"},\
            "deviceID":"\(device)","driver":"Ana","name":"Van \(device)","vehicle":"B-MY 1234"},\
            "attributes-type":"location",\
            "content-state":{"altitude":34.5,"course":87.5,"distance":1234.5,"elapsed":600,"eta":1700001800,\
            "fix":"3d","fixTime":1700000059.5,"horizontalAccuracy":4.8,"latitude":52.520008,\
            "longitude":13.404954,"paused":false,"progress":0.25,"satellites":9,"speed":12.25},\
            "device":"\(device)","event":"update","relevance-score":\(relevance),"schema":"myeline.activity.v1",\
            "seq":\(seq),"stale-date":1700000120.123,"timestamp":1700000060.123}
            """
        return try! WireCodec.decode(ActivityEnvelope<LocationActivityAttributes>.self, from: Data(json.utf8))
    }

    /// The envelope as an agent publishes it: the bytes of `WireCodec.encode`.
    public static func payload(device: String, seq: Int = 2, relevance: Double = 0) -> [UInt8] {
        Array(try! WireCodec.encode(envelope(device: device, seq: seq, relevance: relevance)))
    }
}
