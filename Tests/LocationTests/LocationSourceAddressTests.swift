import Testing

@testable import Location

/// Parsing `--source` values.
@Suite struct LocationSourceAddressTests {
    @Test(arguments: [
        ("gpsd://localhost", LocationSourceAddress.gpsd(host: "localhost", port: 2947, device: nil)),
        ("gpsd://localhost/", .gpsd(host: "localhost", port: 2947, device: nil)),
        ("gpsd://10.0.0.5:3000", .gpsd(host: "10.0.0.5", port: 3000, device: nil)),
        ("gpsd://pi.local/dev/ttyACM0", .gpsd(host: "pi.local", port: 2947, device: "/dev/ttyACM0")),
        (
            "GPSD://[::1]:2948/dev/serial/by-id/usb-u-blox",
            .gpsd(host: "::1", port: 2948, device: "/dev/serial/by-id/usb-u-blox")
        ),
        ("/var/lib/myeline/trip.nmea", .file(path: "/var/lib/myeline/trip.nmea")),
        ("trip.gpx", .file(path: "trip.gpx")),
        ("file:///tmp/ride%201.gpx", .file(path: "/tmp/ride 1.gpx")),
        ("  \t/tmp/padded.nmea \t", .file(path: "/tmp/padded.nmea")),
        ("file:///tmp/%E2%82%ACuro%2fx.gpx", .file(path: "/tmp/€uro/x.gpx")),
        ("file:///tmp/100%25.gpx", .file(path: "/tmp/100%.gpx")),
        ("file:///tmp/bad%zz.gpx", .file(path: "/tmp/bad%zz.gpx")),
        (
            "gpsd://localhost/dev/serial/by-id/usb%20GPS",
            .gpsd(host: "localhost", port: 2947, device: "/dev/serial/by-id/usb GPS")
        ),
    ])
    func parses(text: String, expected: LocationSourceAddress) throws {
        #expect(try LocationSourceAddress(parsing: text) == expected)
    }

    @Test(arguments: [
        ("", "empty location source"),
        ("gpsd://", "no host"),
        ("gpsd://localhost:99999", "invalid gpsd port '99999'"),
        ("gpsd://localhost:abc/dev/x", "invalid gpsd port 'abc'"),
        ("gpsd://[::1/dev/x", "closing ']'"),
        ("tcp://localhost:2947", "unsupported location source scheme 'tcp'"),
        ("file://relative.gpx", "absolute path"),
    ])
    func rejectsWithAMessageNamingTheValue(text: String, message: String) {
        #expect {
            try LocationSourceAddress(parsing: text)
        } throws: { error in
            guard let error = error as? LocationError else { return false }
            return error.code == .invalidSource && error.message.contains(message)
                && (text.isEmpty || error.message.contains("gpsd://HOST[:PORT][/DEVICE]")
                    || error.message.contains(text))
        }
    }

    /// As Foundation's `removingPercentEncoding` did: a malformed escape, a cut one or bytes that
    /// are not UTF-8 give nil (and the address keeps the text as written).
    @Test(
        arguments: [
            ("a%20b", "a b"), ("%e2%82%ac", "€"), ("plain", "plain"), ("", ""), ("%zz", nil), ("%2", nil), ("%", nil),
            ("%ff", nil), ("%C3", nil),
        ] as [(String, String?)])
    func decodesPercentEscapes(text: String, expected: String?) {
        #expect(LocationSourceAddress.percentDecoded(text) == expected)
    }

    @Test func describesItselfInTheFormItParses() throws {
        for text in ["gpsd://localhost:2947", "gpsd://[::1]:2948/dev/ttyACM0", "/tmp/a.nmea"] {
            #expect(try LocationSourceAddress(parsing: text).description == text)
        }
    }

    @Test func makesTheSourceItNames() throws {
        let gpsd = try LocationSourceAddress(parsing: "gpsd://127.0.0.1:3001/dev/ttyS0").makeSource()
        let configuration = try #require(gpsd as? GpsdSource).configuration
        #expect(configuration.host == "127.0.0.1" && configuration.port == 3001 && configuration.device == "/dev/ttyS0")
        #expect(configuration.watchCommand == "?WATCH={\"enable\":true,\"json\":true,\"device\":\"/dev/ttyS0\"};\n")
        #expect(try LocationSourceAddress(parsing: "/tmp/x.nmea").makeSource() is FileSource)
    }
}
