import AggregatorWeb
import ArgumentParser
import Foundation
import TestSupport
import Testing

@testable import Aggregator

/// `--http` and the `web.*` keys: off by default, read from flags and the file, mistakes named.
struct WebMapCommandTests {
    @Test func theMapIsOffUnlessAsked() async throws {
        try await withTemporaryDirectory { directory in
            let (configuration, _) = try await AggregatorCommand.parse([]).load(
                environment: [:], defaultFile: "\(directory)/none")
            #expect(configuration.web == nil)
        }
    }

    @Test func flagsAndTheFileSetTheMap() async throws {
        try await withTemporaryDirectory { directory in
            let file = "\(directory)/aggregator.yaml"
            try "web:\n  listen: 0.0.0.0:8443\n  trail-length: 20\n  max-clients: 4\n  tiles-attribution: Mine\n"
                .write(toFile: file, atomically: true, encoding: .utf8)
            let command = try AggregatorCommand.parse(["--config", file, "--http", "9000", "--tiles", "none"])
            let (configuration, _) = try await command.load(environment: [:])
            let web = try #require(configuration.web)
            #expect(web.host == "127.0.0.1" && web.port == 9000)
            #expect(web.tiles == nil)
            #expect(web.trailLength == 20 && web.maximumClients == 4 && web.tilesAttribution == "Mine")
        }
    }

    @Test(arguments: [
        (["--http", "8080:x"], "web.listen (from --http): \"8080:x\" is not PORT, HOST:PORT or [IPv6]:PORT"),
        (["--http", "80", "--tiles", "ftp://x/{z}/{x}/{y}"], "web.tiles (from --tiles)"),
        (["--http", "80", "--tiles", "https://a;b/{z}/{x}/{y}"], "web.tiles (from --tiles)"),
        (["--http", "80", "--trail-length", "20000"], "web.trail-length (from --trail-length)"),
    ])
    func mistakesNameTheirKey(arguments: [String], message: String) async throws {
        try await withTemporaryDirectory { directory in
            let command = try AggregatorCommand.parse(arguments)
            let error = await #expect(throws: ValidationError.self) {
                try await command.load(environment: [:], defaultFile: "\(directory)/none")
            }
            #expect(AggregatorCommand.exitCode(for: error!) == .validationFailure)
            #expect(error?.message.hasPrefix(message) == true, "\(error?.message ?? "")")
        }
    }

    @Test(arguments: [["--once", "--http", "8080"], ["--json", "--http", "8080"]])
    func aReadingPrintedOnceAndHttpExcludeEachOther(arguments: [String]) {
        let error = #expect(throws: (any Error).self) { try AggregatorCommand.parseAsRoot(arguments) }
        #expect(AggregatorCommand.exitCode(for: error!) == .validationFailure)
    }

    /// With the map served and no terminal (systemd, a pipe), nothing goes to standard output unless
    /// `--follow` or `--json` asks for lines; the full-screen board on a terminal is unchanged.
    @Test(arguments: [
        // (flags, map served, standard output a terminal, presentation)
        ([String](), true, false, Presentation.mapOnly),
        ([], true, true, .board),
        ([], false, false, .followPlain),
        ([], false, true, .board),
        (["--follow"], true, false, .followPlain),
        (["--follow"], true, true, .followPlain),
        (["--follow", "--json"], true, false, .followJSON),
        (["--once"], true, false, .once),
        (["--once", "--json"], true, true, .onceJSON),
        (["--json"], true, false, .onceJSON),
    ])
    func theTerminalAndTheMap(flags: [String], map: Bool, interactive: Bool, expected: Presentation) throws {
        #expect(try AggregatorCommand.parse(flags).presentation(map: map, interactive: interactive) == expected)
    }

    /// A reading printed once does not serve the map (web.listen in the file shared with the
    /// service must not make a cron job's `--once` take, or fail on, the service's port).
    @Test(arguments: [
        (Presentation.board, true), (.followPlain, true), (.followJSON, true), (.mapOnly, true), (.once, false),
        (.onceJSON, false),
    ])
    func whichPresentationsServeTheMap(presentation: Presentation, serves: Bool) {
        #expect(presentation.servesMap == serves)
    }

    @Test func anEmptyTokenFileIsRefused() async throws {
        try await withTemporaryDirectory { directory in
            try "\n".write(toFile: "\(directory)/token", atomically: true, encoding: .utf8)
            var settings = WebSettings()
            settings.tokenFile = "\(directory)/token"
            #expect(throws: (any Error).self) { try settings.loadToken() }
            settings.tokenFile = "\(directory)/missing"
            #expect(throws: (any Error).self) { try settings.loadToken() }
        }
    }
}
