import Foundation
import RouteKit
import RouteKitIngest
import Testing

@testable import RouteKitGPX

/// A gzip GPX file (or gzip bytes) of one member is decompressed in one call and read from memory; anything else is
/// streamed through zlib as before. Both must give the same events, warnings and errors.
@Suite("gzip GPX decompressed whole")
struct WholeGzipTests {
    static func text(points: Int) -> String {
        var s = """
            <?xml version="1.0"?><gpx version="1.1" creator="t" xmlns="http://www.topografix.com/GPX/1/1">\
            <trk><name>whole</name><trkseg>
            """
        for i in 0..<points {
            s += "<trkpt lat=\"\(47.0 + Double(i) * 0.0001)\" lon=\"8.5\"><ele>\(400 + i % 50)</ele>"
            s += "<time>2024-05-01T06:\(String(format: "%02d", i / 60 % 60)):\(String(format: "%02d", i % 60))Z</time></trkpt>\n"
        }
        return s + "</trkseg></trk></gpx>\n"
    }

    /// gzip of `text` made by /bin/gzip, as a file in a new folder.
    static func gzipFile(_ text: String, in dir: String, name: String) throws -> String {
        let path = dir + "/" + name
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/bin/gzip")
        p.arguments = ["-n", "-f", path]
        try p.run()
        p.waitUntilExit()
        return path + ".gz"
    }

    /// Every event as text, and the reader's bytes read at the end.
    static func events(_ reader: GPXReader) throws -> (events: [String], bytesRead: Int, whole: Bool) {
        var out: [String] = []
        while let e = try reader.next() { out.append(String(describing: e)) }
        return (out, reader.bytesRead, reader.decompressedWhole)
    }

    @Test("a one-member .gpx.gz file: decompressed whole, the same events as streaming, progress in compressed bytes")
    func file() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("rk-whole-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let text = Self.text(points: 3_000)
        let gz = try Self.gzipFile(text, in: dir, name: "a.gpx")
        let compressed = Array(try Data(contentsOf: URL(fileURLWithPath: gz)))

        let whole = try Self.events(try GPXReader(path: gz))
        #expect(whole.whole, "one member: decompressed in one call")
        #expect(whole.bytesRead == compressed.count, "progress counts the compressed file")
        #expect(whole.events.first?.contains("gzip-compressed") == true, "the gzip warning comes first, as before")
        // The same bytes streamed (two members: the first half and the rest, so not one member) give the same events.
        let cut = text.utf8.count / 2
        let half1 = try Self.gzipFile(String(decoding: Array(text.utf8)[..<cut], as: UTF8.self), in: dir, name: "h1")
        let half2 = try Self.gzipFile(String(decoding: Array(text.utf8)[cut...], as: UTF8.self), in: dir, name: "h2")
        let twoMembers =
            Array(try Data(contentsOf: URL(fileURLWithPath: half1)))
            + Array(try Data(contentsOf: URL(fileURLWithPath: half2)))
        let two = dir + "/two.gpx.gz"
        try Data(twoMembers).write(to: URL(fileURLWithPath: two))
        let streamed = try Self.events(try GPXReader(path: two))
        #expect(!streamed.whole, "two members: streamed through zlib")
        #expect(streamed.events == whole.events)
        #expect(streamed.bytesRead == twoMembers.count)
        // In memory too, with any chunk size.
        for chunk in [1, 7, nil] {
            let memory = try Self.events(GPXReader(bytes: compressed, name: gz, chunkSize: chunk))
            #expect(memory.whole && memory.events == whole.events, "chunk \(String(describing: chunk))")
        }
    }

    @Test("a truncated .gpx.gz file is streamed and fails as before, after the points read before the cut")
    func truncated() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("rk-whole-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let gz = try Self.gzipFile(Self.text(points: 3_000), in: dir, name: "t.gpx")
        var bytes = Array(try Data(contentsOf: URL(fileURLWithPath: gz)))
        bytes.removeLast(bytes.count / 3)
        try Data(bytes).write(to: URL(fileURLWithPath: gz))
        let reader = try GPXReader(path: gz)
        var points = 0
        let error = #expect(throws: RouteKitError.self) {
            while let e = try reader.next() {
                if case .trackPoints(let batch) = e { points += batch.count }
            }
        }
        #expect(error?.code == .compression && error?.file == gz)
        #expect(!reader.decompressedWhole)
        #expect(points > 0, "what decompressed before the cut was read")
    }
}
