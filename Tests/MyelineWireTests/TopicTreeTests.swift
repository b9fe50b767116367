import LiveActivity
import MyelineWire
import Testing
import TestSupport

@Suite("Device ids, topic prefixes and topics")
struct TopicTreeTests {
    @Test(arguments: ["van-7", "a", "0", "pi4.garage_2", String(repeating: "x", count: 64)])
    func validDeviceID(_ value: String) throws {
        #expect(try DeviceID(value).rawValue == value)
        #expect(try DeviceID(value).description == value)
    }

    @Test(arguments: [
        "Van 7", "", "van/7", "van+7", "van#7", "-van", ".van", "_van", "VAN", "vän", "van\n",
        String(repeating: "x", count: 65),
    ])
    func invalidDeviceID(_ value: String) {
        let error = #expect(throws: ActivityError.self) { try DeviceID(value) }
        #expect(error?.code == .invalidDeviceID)
        #expect(error?.message == "invalid device id \(String(reflecting: value)): \(Fixtures.idRule)")
    }

    @Test("the device id message names the value and the fix")
    func deviceIDMessage() {
        let error = #expect(throws: ActivityError.self) { try DeviceID("Van 7") }
        #expect(
            error?.message
                == "invalid device id \"Van 7\": use 1-64 characters a-z, 0-9, '.', '_' or '-', "
                + "starting with a letter or digit")
    }

    @Test(arguments: ["myeline", "fleet/eu", "a/b/c", "Fleet 1", "été"])
    func validTopicPrefix(_ value: String) throws {
        #expect(try TopicPrefix(value).rawValue == value)
    }

    @Test(arguments: [
        ("", "it is empty; use one or more levels such as \"myeline\" or \"fleet/eu\""),
        ("/myeline", "it has an empty level; remove leading, trailing and doubled '/'"),
        ("myeline/", "it has an empty level; remove leading, trailing and doubled '/'"),
        ("fleet//eu", "it has an empty level; remove leading, trailing and doubled '/'"),
        ("fleet/+", "it contains a wildcard '+' or '#'; remove it"),
        ("fleet/#", "it contains a wildcard '+' or '#'; remove it"),
        ("fle+et", "it contains a wildcard '+' or '#'; remove it"),
        ("fleet\0", "it contains a NUL character; remove it"),
        ("$SYS", "it starts with '$', which brokers reserve for their own topics; remove it"),
    ])
    func invalidTopicPrefix(_ value: String, _ problem: String) {
        let error = #expect(throws: ActivityError.self) { try TopicPrefix(value) }
        #expect(error?.code == .invalidTopicPrefix)
        #expect(error?.message == "invalid topic prefix \(String(reflecting: value)): \(problem)")
    }

    @Test("topics and filters under the default and a custom prefix")
    func topics() throws {
        let device = try DeviceID("van-7")
        let tree = TopicTree()
        #expect(tree.prefix == .default)
        #expect(tree.status(device: device) == "myeline/van-7/status")
        #expect(tree.activity(device: device, activityID: "trip-1") == "myeline/van-7/activities/trip-1")
        #expect(tree.track(device: device, activityID: "trip-1") == "myeline/van-7/activities/trip-1/track")
        #expect(tree.command(device: device) == "myeline/van-7/cmd")
        #expect(tree.commandResult(device: device) == "myeline/van-7/cmd/result")
        #expect(tree.allStatus == "myeline/+/status")
        #expect(tree.allActivities == "myeline/+/activities/+")
        #expect(tree.allTracks == "myeline/+/activities/+/track")
        #expect(tree.allCommandResults == "myeline/+/cmd/result")

        let custom = TopicTree(prefix: try TopicPrefix("fleet/eu"))
        #expect(custom.status(device: device) == "fleet/eu/van-7/status")
        #expect(custom.allActivities == "fleet/eu/+/activities/+")
    }

    /// Received topics and what they route to, written as `kind device [activity]`.
    @Test(
        arguments: [
            ("fleet/eu/van-7/status", "status van-7"),
            ("fleet/eu/van-7/activities/trip-1", "activity van-7 trip-1"),
            ("fleet/eu/van-7/activities/trip-1/track", "track van-7 trip-1"),
            ("fleet/eu/van-7/cmd", "command van-7"),
            ("fleet/eu/van-7/cmd/result", "commandResult van-7"),
            ("myeline/van-7/status", nil),
            ("fleet/eu", nil),
            ("fleet/eu/", nil),
            ("fleet/eu/van-7", nil),
            ("fleet/eu/van-7/", nil),
            ("fleet/eu/van-7/status/extra", nil),
            ("fleet/eu/Van-7/status", nil),
            ("fleet/eu/van-7/activities", nil),
            ("fleet/eu/van-7/activities/", nil),
            ("fleet/eu/van-7/activities/Trip/track", nil),
            ("fleet/eu/van-7/activities/trip-1/points", nil),
            ("fleet/eu/van-7/cmd/other", nil),
            ("fleet/europe/van-7/status", nil),
            ("fleet/eux/van-7/status", nil),
            ("fleet/euvan-7/status", nil),
            ("fleet/eu//status", nil),
            ("fleet/eu/vän/status", nil),
            ("fleet/eu/van-7/\u{301}status", nil),
            ("fleet/eu/van-7/activities//track", nil),
            ("fleet/eu/van-7/activities/trip-1/track/x", nil),
            ("fleet/eu/van-7/activities/trip-1/track/x/y", nil),
        ] as [(String, String?)])
    func route(_ topic: String, _ expected: String?) throws {
        let tree = TopicTree(prefix: try TopicPrefix("fleet/eu"))
        #expect(tree.route(topic).map(Self.summary) == expected)
    }

    private static func summary(_ route: TopicTree.Route) -> String {
        switch route {
        case .status(let device): "status \(device)"
        case .activity(let device, let activityID): "activity \(device) \(activityID)"
        case .track(let device, let activityID): "track \(device) \(activityID)"
        case .command(let device): "command \(device)"
        case .commandResult(let device): "commandResult \(device)"
        }
    }

    @Test("every topic built routes back to what built it")
    func routeRoundTrip() throws {
        let device = try DeviceID("pi.4_b")
        let tree = TopicTree(prefix: try TopicPrefix("a/b"))
        let id = "3f2b8c1e-0d4a-4e59-9a57-2f1c7b5d9e10"
        #expect(tree.route(tree.status(device: device)) == .status(device: device))
        #expect(tree.route(tree.activity(device: device, activityID: id)) == .activity(device: device, activityID: id))
        #expect(tree.route(tree.track(device: device, activityID: id)) == .track(device: device, activityID: id))
        #expect(tree.route(tree.command(device: device)) == .command(device: device))
        #expect(tree.route(tree.commandResult(device: device)) == .commandResult(device: device))
    }
}
