import Foundation
import Testing

@testable import Location

/// The GPX reader's XML tokenizer: what it reads, what it refuses, and that chunk boundaries change nothing.
@Suite struct XMLTokenizerTests {
    /// Records events as text: `<name a="v">`, `</name>`, and text pieces joined.
    struct Recorder: XMLHandler {
        var events: [String] = []
        var attributeNames: [StaticString] = ["lat", "lon", "a", "b"]

        mutating func startElement(_ name: XMLName, attributes: XMLAttributes) {
            var event = "<" + String(decoding: name.bytes, as: UTF8.self)
            for attribute in attributeNames {
                if let value = attributes.withValue(attribute, { String(decoding: $0, as: UTF8.self) }) {
                    event += " \(attribute)=\(value)"
                }
            }
            events.append(event + ">")
        }

        mutating func endElement(_ name: XMLName) {
            events.append("</" + String(decoding: name.bytes, as: UTF8.self) + ">")
        }

        mutating func text(_ bytes: UnsafeBufferPointer<UInt8>) {
            let piece = String(decoding: bytes, as: UTF8.self)
            if let last = events.last, last.hasPrefix("\"") {
                events[events.count - 1] = String(last.dropLast()) + piece + "\""
            } else {
                events.append("\"" + piece + "\"")
            }
        }
    }

    /// Tokenizes a document in chunks of `chunk` bytes: the events, or the error.
    static func tokenize(_ text: String, chunk: Int = .max) -> Result<[String], XMLError> {
        tokenize(Array(text.utf8), chunk: chunk)
    }

    static func tokenize(_ bytes: [UInt8], chunk: Int = .max) -> Result<[String], XMLError> {
        var tokenizer = XMLTokenizer()
        var recorder = Recorder()
        do throws(XMLError) {
            var start = 0
            while start < bytes.count {
                let end = min(bytes.count, start + min(chunk, bytes.count))
                try bytes[start..<end].withUnsafeBufferPointer { (piece) throws(XMLError) in
                    try tokenizer.feed(piece, to: &recorder)
                }
                start = end
            }
            try tokenizer.finish(to: &recorder)
            return .success(recorder.events)
        } catch {
            return .failure(error)
        }
    }

    @Test func readsElementsAttributesTextAndReferences() throws {
        let document = """
            \u{FEFF}<?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE gpx [<!ENTITY x "y>z"> <!-- ]> --> <!ATTLIST a b CDATA "]">]>
            <!-- a comment with <tags> -->
            <?xml-stylesheet href="a.xsl"?>
            <gpx:gpx xmlns:gpx="urn:x"><a b='1 &amp; 2' a="&#x33;&#52;">x &lt;&gt;&amp;&apos;&quot; &#233;&x;<![CDATA[<raw> & ]]></a><gpx:e/></gpx:gpx>
            <!-- after -->
            """
        let events = try Self.tokenize(document).get()
        #expect(
            events == [
                "<gpx:gpx>", #"<a a=34 b=1 & 2>"#, #""x <>&'" é&x;<raw> & ""#, "</a>", "<gpx:e>", "</gpx:e>",
                "</gpx:gpx>",
            ])
    }

    @Test func chunkBoundariesChangeNothing() throws {
        let document = """
            <?xml version="1.0"?><!DOCTYPE gpx><gpx a="1"><!-- c --><b>t&amp;u&#65;<![CDATA[v]]></b><?pi x?></gpx>
            """
        let whole = try Self.tokenize(document).get()
        for size in 1...12 { #expect(try Self.tokenize(document, chunk: size).get() == whole, "chunks of \(size)") }
    }

    @Test func everyGPXFileDecodesTheSameFedOneByteAtATime() throws {
        let files = try FileManager.default.contentsOfDirectory(atPath: TestData.path("gpx")).filter {
            $0.hasSuffix(".gpx")
        }
        #expect(files.count == 12)
        for file in files {
            let bytes = try TestData.bytes("gpx/\(file)")
            var whole = GPXDecoder(yielding: .track)
            var wholePoints: [GPXPoint] = []
            bytes.withUnsafeBufferPointer { whole.decode(chunk: $0, into: &wholePoints) }
            whole.finish(into: &wholePoints)
            var bytewise = GPXDecoder(yielding: .track)
            var points: [GPXPoint] = []
            for byte in bytes { [byte].withUnsafeBufferPointer { bytewise.decode(chunk: $0, into: &points) } }
            bytewise.finish(into: &points)
            #expect(points == wholePoints, "\(file)")
            #expect(bytewise.statistics == whole.statistics, "\(file)")
        }
    }

    /// Found by FuzzGPX: text before the root with a control character after it was counted as
    /// binary when the document came whole, and not when a chunk ended between the two.
    @Test(arguments: ["x\u{1}<gpx/>", "<gpx/>x\u{1}", "\u{1}x<gpx/>", "<gpx>\u{1}</gpx>&\u{1}"])
    func statisticsDoNotDependOnChunks(document: String) {
        let bytes = Array(document.utf8)
        var whole = GPXDecoder(yielding: .track)
        var points: [GPXPoint] = []
        bytes.withUnsafeBufferPointer { whole.decode(chunk: $0, into: &points) }
        whole.finish(into: &points)
        var bytewise = GPXDecoder(yielding: .track)
        for byte in bytes { [byte].withUnsafeBufferPointer { bytewise.decode(chunk: $0, into: &points) } }
        bytewise.finish(into: &points)
        #expect(bytewise.statistics == whole.statistics && bytewise.xmlError == whole.xmlError)
    }

    /// Documents that are not well-formed, each refused with a message.
    @Test(arguments: [
        ("", "no root element"),
        ("   ", "no root element"),
        ("hello", "text before the root element"),
        ("<a>", "ends before its root element does"),
        ("<a><b></a>", "does not match"),
        ("<a></b>", "does not match"),
        ("</a>", "without a start tag"),
        ("<a></a><b/>", "a second root element"),
        ("<a></a>text", "text after the root element"),
        (#"<a b="1" b="2"/>"#, "an attribute given twice"),
        (#"<a b=1/>"#, "without quotes"),
        (#"<a b="1/>"#, "ends inside a tag"),
        (#"<a b="<"/>"#, "'<' in an attribute value"),
        (#"<a b="1"c="2"/>"#, "without white space"),
        ("<a b/>", "without a value"),
        ("<a>&;</a>", "empty entity reference"),
        ("<a>&#xZZ;</a>", "invalid character reference"),
        ("<a>&#0;</a>", "does not allow"),
        ("<a>& b</a>", "starts no entity reference"),
        ("<a><!-- x -- y --></a>", "'--' inside a comment"),
        ("<a><!-- open</a>", "ends inside a tag"),
        ("<a><![CDATA[open</a>", "ends inside a tag"),
        ("<![CDATA[x]]><a/>", "CDATA section outside the root element"),
        ("<a><?xml version='1.0'?></a>", "not at the start"),
        ("<a><!DOCTYPE a></a>", "DOCTYPE after the root element"),
        ("<a><!ELEMENT a></a>", "starts no comment"),
        ("<a>1 < 2</a>", "starts no tag"),
        ("<1a/>", "starts no tag"),
        ("<?xml version=\"1.0\"", "does not end"),
    ])
    func refusesWhatIsNotWellFormed(document: String, message: String) {
        switch Self.tokenize(document) {
        case .success(let events): Issue.record("accepted: \(events)")
        case .failure(let error): #expect(error.message.contains(message), "\(error)")
        }
        // The same, a byte at a time.
        switch Self.tokenize(document, chunk: 1) {
        case .success(let events): Issue.record("accepted a byte at a time: \(events)")
        case .failure(let error): #expect(error.message.contains(message), "a byte at a time: \(error)")
        }
    }

    @Test func boundsWhatItHolds() throws {
        // A tag still unfinished after 1 MiB, elements nested deeper than 100,000.
        let hugeAttribute = "<a b=\"" + String(repeating: "x", count: 2 * XMLTokenizer.maximumMarkupLength) + "\"/>"
        #expect(throws: XMLError.self) { _ = try Self.tokenize(hugeAttribute, chunk: 65_536).get().count }
        let deep = String(repeating: "<a>", count: XMLTokenizer.maximumDepth + 1)
        #expect(throws: XMLError.self) { _ = try Self.tokenize(deep, chunk: 65_536).get().count }
        // Long text is handed over as it comes, never held whole.
        let longText = "<a>" + String(repeating: "t", count: 3 << 20) + "</a>"
        #expect(try Self.tokenize(longText, chunk: 65_536).get().count == 3)
    }
}
