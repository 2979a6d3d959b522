import Foundation
import RouteKit
import RouteKitGPX
@_spi(RouteKitInternals) import RouteKitImport
import RouteKitIngest
import RouteKitSQLite
import Testing
import ZIPFoundation

/// Zip archives written byte by byte, so a test can put any number in any field (what a hostile upload does).
struct HandZip {
    struct Entry {
        var name: String
        var data: [UInt8]
        /// The sizes and offset written in the central directory; `nil`: the true ones. A value of 2^32 or more is
        /// written as 0xFFFFFFFF with the value in a zip64 extra field.
        var compressedSize: UInt64?
        var uncompressedSize: UInt64?
        var offset: UInt64?
        var crc: UInt32?
        var method: UInt16 = 0
    }
    var entries: [Entry] = []
    /// The entry count the end record states; `nil`: the true one.
    var statedCount: UInt16?
    /// Central directory size and offset the end record states; `nil`: the true ones.
    var statedDirectorySize: UInt32?
    var statedDirectoryOffset: UInt32?
    /// A zip64 locator pointing at this offset (with no zip64 end record there unless it is the true one).
    var zip64RecordOffset: UInt64?

    static func le16(_ v: UInt16) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8)] }
    static func le32(_ v: UInt32) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: v >> (8 * $0)) } }
    static func le64(_ v: UInt64) -> [UInt8] { (0..<8).map { UInt8(truncatingIfNeeded: v >> (8 * $0)) } }

    func bytes() -> [UInt8] {
        var out: [UInt8] = []
        var directory: [UInt8] = []
        for e in entries {
            let name = Array(e.name.utf8)
            let offset = UInt64(out.count)
            let crc = e.crc ?? InputFile.crc32(e.data)
            out += Self.le32(0x0403_4B50) + Self.le16(20) + Self.le16(0) + Self.le16(e.method) + [0, 0, 0x21, 0]
            out += Self.le32(crc) + Self.le32(UInt32(e.data.count)) + Self.le32(UInt32(e.data.count))
            out += Self.le16(UInt16(name.count)) + Self.le16(0) + name + e.data
            let sizes = [
                e.uncompressedSize ?? UInt64(e.data.count), e.compressedSize ?? UInt64(e.data.count),
                e.offset ?? offset,
            ]
            var extra: [UInt8] = []
            let wide = sizes.map { $0 > 0xFFFF_FFFE }
            for (v, w) in zip(sizes, wide) where w { extra += Self.le64(v) }
            if !extra.isEmpty { extra = Self.le16(1) + Self.le16(UInt16(extra.count)) + extra }
            func field(_ i: Int) -> [UInt8] { Self.le32(wide[i] ? 0xFFFF_FFFF : UInt32(sizes[i])) }
            directory += Self.le32(0x0201_4B50) + Self.le16(0x031E) + Self.le16(45) + Self.le16(0)
            directory += Self.le16(e.method) + [0, 0, 0x21, 0] + Self.le32(crc) + field(1) + field(0)
            directory += Self.le16(UInt16(name.count)) + Self.le16(UInt16(extra.count)) + Self.le16(0)
            directory += Self.le16(0) + Self.le16(0) + Self.le32(0o100644 << 16) + field(2) + name + extra
        }
        let directoryOffset = UInt32(out.count)
        out += directory
        if let zip64RecordOffset {
            out += Self.le32(0x0706_4B50) + Self.le32(0) + Self.le64(zip64RecordOffset) + Self.le32(1)
        }
        out += Self.le32(0x0605_4B50) + Self.le16(0) + Self.le16(0)
        let count = statedCount ?? UInt16(entries.count)
        out += Self.le16(count) + Self.le16(count)
        out += Self.le32(statedDirectorySize ?? UInt32(directory.count))
        out += Self.le32(statedDirectoryOffset ?? directoryOffset) + Self.le16(0)
        return out
    }

    /// Opens the archive and reads every entry; the error, if any (a trap would stop the test process).
    static func readAll(_ bytes: [UInt8], limits: ArchiveLimits = ArchiveLimits()) -> RouteKitError? {
        do {
            let archive = try ZipArchive(bytes: bytes, name: "hostile.zip", limits: limits)
            for path in archive.paths { _ = try archive.contents(of: path) }
            return nil
        } catch {
            return error
        }
    }
}

@Suite("zip reader: hostile numbers are errors, never traps")
struct ZipHardeningTests {
    let gpx = Array(gpxText(name: "a", points: 3).utf8)

    @Test("a well-formed hand-made archive reads back byte for byte")
    func wellFormed() throws {
        let zip = HandZip(entries: [.init(name: "a.gpx", data: gpx), .init(name: "b/c.txt", data: Array("hi".utf8))])
        let archive = try ZipArchive(bytes: zip.bytes(), name: "ok.zip")
        #expect(archive.paths == ["a.gpx", "b/c.txt"])
        #expect(try archive.contents(of: "a.gpx") == gpx)
        #expect(try archive.contents(of: "b/c.txt") == Array("hi".utf8))
    }

    @Test(
        "zip64 sizes and offsets of 2^63 and more (the 134-byte upload that stopped the server) are compression errors",
        arguments: [UInt64(1) << 63, UInt64.max, UInt64(1) << 62, UInt64(Int64.max)])
    func zip64Sizes(value: UInt64) throws {
        for field in 0..<3 {
            var entry = HandZip.Entry(name: "a.gpx", data: gpx)
            switch field {
            case 0: entry.uncompressedSize = value
            case 1: entry.compressedSize = value
            default: entry.offset = value
            }
            let bytes = HandZip(entries: [entry]).bytes()
            let error = try #require(HandZip.readAll(bytes))
            #expect(error.code == .compression, "field \(field): \(error)")
            #expect(error.description.contains("hostile.zip"), "\(error)")
        }
    }

    @Test("the smallest such archive is about 134 bytes, and it names the field and value")
    func smallest() throws {
        let bytes = HandZip(entries: [.init(name: "a", data: [], uncompressedSize: UInt64(1) << 63)]).bytes()
        #expect(bytes.count < 160)
        let error = try #require(HandZip.readAll(bytes))
        #expect(error.message.contains("uncompressed size (9223372036854775808)"), "\(error)")
    }

    @Test("a central directory or zip64 record outside the archive is refused")
    func directoryOutside() throws {
        var zip = HandZip(entries: [.init(name: "a.gpx", data: gpx)])
        zip.statedDirectoryOffset = 0xFFFF_FFF0
        #expect(HandZip.readAll(zip.bytes())?.code == .compression)
        zip.statedDirectoryOffset = nil
        zip.statedDirectorySize = 0xFFFF_FFFF
        #expect(HandZip.readAll(zip.bytes())?.code == .compression)
        zip.statedDirectorySize = nil
        for offset in [UInt64(1) << 63, UInt64.max, 3] {
            zip.zip64RecordOffset = offset
            #expect(HandZip.readAll(zip.bytes())?.code == .compression, "zip64 record at \(offset)")
        }
    }

    @Test("more entries than the limit are refused when the archive is opened, naming the limit")
    func entryLimit() throws {
        var limits = ArchiveLimits()
        limits.maxEntries = 5
        let zip = HandZip(entries: (0..<6).map { .init(name: "e\($0).txt", data: [0x41]) })
        let error = try #require(HandZip.readAll(zip.bytes(), limits: limits))
        #expect(error.message.contains("6 entries, more than the limit of 5"), "\(error)")
        // The default: 10,000. An end record that claims 65,535 entries is refused before anything is read.
        #expect(ArchiveLimits().maxEntries == 10_000)
        var claims = HandZip(entries: [.init(name: "a.gpx", data: gpx)])
        claims.statedCount = 0xFFFF
        #expect(HandZip.readAll(claims.bytes())?.message.contains("65535 entries") == true)
    }

    @Test("an entry holding more or fewer bytes than its header states, or the wrong CRC, is refused")
    func sizesChecked() throws {
        let short = HandZip(entries: [.init(name: "a.gpx", data: gpx, uncompressedSize: 10)])
        #expect(HandZip.readAll(short.bytes())?.message.contains("more than the 10 bytes") == true)
        let long = HandZip(entries: [.init(name: "a.gpx", data: gpx, uncompressedSize: UInt64(gpx.count + 5))])
        #expect(HandZip.readAll(long.bytes())?.code == .compression)
        let crc = HandZip(entries: [.init(name: "a.gpx", data: gpx, crc: 1)])
        #expect(HandZip.readAll(crc.bytes())?.message.contains("CRC-32") == true)
        let method = HandZip(entries: [.init(name: "a.gpx", data: gpx, method: 12)])
        #expect(HandZip.readAll(method.bytes())?.message.contains("method 12") == true)
    }

    @Test("every byte of an archive replaced by 0x00, 0x7F, 0x80 or 0xFF: an error or the right bytes, never a trap")
    func mutations() throws {
        let dir = try Zip.folder()
        let path = dir + "/m.zip"
        try Zip.make(path, [("a.gpx", gpx), ("b.txt", Array("some text".utf8))])
        let original = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        var failures = 0
        for i in original.indices {
            for value: UInt8 in [0x00, 0x7F, 0x80, 0xFF] where original[i] != value {
                var bytes = original
                bytes[i] = value
                if HandZip.readAll(bytes) != nil { failures += 1 }
            }
        }
        // Most single-byte changes (sizes, CRC, signatures, data) are caught.
        #expect(failures > original.count)
        try? FileManager.default.removeItem(atPath: dir)
    }
}

@Suite("Strava export: hostile numbers")
struct StravaHardeningTests {
    @Test("a manual activity's Elapsed Time of 1e300 imports without an end, never a trap")
    func hugeElapsedTime() async throws {
        let csv = stravaCSV.replacingOccurrences(of: "3600,0,,,false,,,,,,3600.0,", with: "1e300,0,,,false,,,,,,1e300,")
        #expect(csv != stravaCSV)
        let dir = try Zip.folder()
        let zip = dir + "/export.zip"
        try Zip.make(zip, [("activities.csv", Array(csv.utf8))])
        let store = try SQLiteStore(path: dir + "/store.sqlite")
        var results: [ImportResult] = []
        await RouteImporter(store: store).importPath(zip) { results.append($0) }
        let manual = try #require(results.first { $0.file.hasSuffix("activities.csv#103") })
        #expect(manual.status == .imported, "\(String(describing: manual.error))")
        let id = try #require(manual.tracks.first?.workout)
        let yoga = try #require(try await store.workout(id: id))
        #expect(yoga.start?.iso8601 == "2024-05-03T08:00:00Z")
        #expect(yoga.end == nil)
        try? FileManager.default.removeItem(atPath: dir)
    }
}

@Suite("archives: large entries read as streams")
struct StreamedEntryTests {
    @Test("GPX, gzip GPX and TCX entries past the size for streaming import as they do whole", arguments: [1, 2])
    func streamedLikeWhole(jobs: Int) async throws {
        let dir = try Zip.folder()
        let zip = dir + "/big.zip"
        let padding = String(repeating: " ", count: 300_000)
        try Zip.make(
            zip,
            [
                ("a.gpx", Array(gpxText(name: "plain", points: 30).replacingOccurrences(of: "<trkseg>", with: "<trkseg>" + padding).utf8)),
                ("b.gpx.gz", try Zip.gzip(gpxText(name: "zipped", points: 25, hour: 7))),
                ("c.tcx", Array(tcxText.replacingOccurrences(of: "<Track>", with: "<Track>" + padding).utf8)),
            ])
        func run(streamingPast threshold: Int) async throws -> [(String, ImportResult.Status, Int, [String])] {
            let store = try SQLiteStore(path: dir + "/store-\(threshold)-\(jobs).sqlite")
            let importer = RouteImporter(store: store)
            importer.jobs = jobs
            importer.streamedEntryBytes = threshold
            var results: [ImportResult] = []
            await importer.importPath(zip) { results.append($0) }
            return results.map { ($0.file, $0.status, $0.tracks.first?.locations ?? -1, $0.warnings) }
        }
        let whole = try await run(streamingPast: 1 << 30)
        let streamed = try await run(streamingPast: 0)
        #expect(whole.map(\.0) == streamed.map(\.0))
        #expect(whole.map(\.1) == streamed.map(\.1))
        #expect(whole.map(\.2) == [30, 25, 2])
        #expect(streamed.map(\.2) == [30, 25, 2])
        #expect(streamed[1].3.contains("the entry is gzip-compressed; it was decompressed as it was read"))
        try? FileManager.default.removeItem(atPath: dir)
    }

    @Test("a streamed entry that is corrupt past its start fails alone, naming the entry")
    func corruptStreamedEntry() async throws {
        let dir = try Zip.folder()
        let zip = dir + "/bad.zip"
        let gpx = Array(gpxText(name: "plain", points: 2000).utf8)
        try Zip.make(zip, [("a.gpx", gpx), ("b.gpx", Array(gpxText(name: "ok", points: 5).utf8))], compression: .none)
        var bytes = Array(try Data(contentsOf: URL(fileURLWithPath: zip)))
        // A byte in the middle of a.gpx's data: its CRC no longer matches.
        bytes[30 + 5 + gpx.count / 2] ^= 0x20
        try Data(bytes).write(to: URL(fileURLWithPath: zip))
        let store = try SQLiteStore(path: dir + "/store.sqlite")
        let importer = RouteImporter(store: store)
        importer.streamedEntryBytes = 0
        var results: [ImportResult] = []
        await importer.importPath(zip) { results.append($0) }
        #expect(results.count == 2)
        #expect(results.first?.status == .failed)
        #expect(results.first?.error?.file?.hasSuffix("bad.zip!a.gpx") == true, "\(String(describing: results.first?.error))")
        #expect(results.last?.status == .imported)
        try? FileManager.default.removeItem(atPath: dir)
    }
}
