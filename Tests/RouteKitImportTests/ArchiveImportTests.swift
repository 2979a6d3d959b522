import Foundation
import RouteKit
import RouteKitFIT
import RouteKitGPX
@_spi(RouteKitInternals) import RouteKitImport
import RouteKitIngest
import RouteKitSQLite
import RouteKitTCX
import Testing
import ZIPFoundation

/// Zip files made in the test (ZIPFoundation), in a temporary folder.
enum Zip {
    static func folder() throws -> String {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("routekit-zip-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir.path
    }

    static func make(_ path: String, _ entries: [(String, [UInt8])], compression: CompressionMethod = .deflate) throws {
        let archive = try Archive(url: URL(fileURLWithPath: path), accessMode: .create)
        for (name, bytes) in entries {
            let data = Data(bytes)
            try archive.addEntry(
                with: name, type: .file, uncompressedSize: Int64(data.count), compressionMethod: compression
            ) { position, size in
                data.subdata(in: Int(position)..<Int(position) + size)
            }
        }
    }

    static func gzip(_ text: String) throws -> [UInt8] { try gzip(bytes: Array(text.utf8)) }

    static func gzip(bytes: [UInt8]) throws -> [UInt8] {
        let dir = try folder()
        let path = dir + "/x"
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/bin/gzip")
        p.arguments = ["-n", path]
        try p.run()
        p.waitUntilExit()
        return Array(try Data(contentsOf: URL(fileURLWithPath: path + ".gz")))
    }
}

func gpxText(name: String, type: String = "running", points: Int = 20, hour: Int = 6) -> String {
    var s = """
        <?xml version="1.0"?><gpx version="1.1" creator="t" xmlns="http://www.topografix.com/GPX/1/1">\
        <trk><name>\(name)</name><type>\(type)</type><trkseg>
        """
    for i in 0..<points {
        s += "<trkpt lat=\"\(47.0 + Double(i) * 0.0001)\" lon=\"8.5\"><time>2024-05-01T0\(hour):00:\(10 + i)Z</time></trkpt>\n"
    }
    return s + "</trkseg></trk></gpx>\n"
}

/// A FIT activity of `records` positioned records, one a second (a file_id, a record definition, the records, the CRC).
func fitActivity(records: Int) -> [UInt8] {
    func u32(_ v: UInt32) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: v >> (8 * $0)) } }
    let start: UInt32 = 1_000_000_000
    var data: [UInt8] = [0x40, 0, 0, 0, 0, 2, 0, 1, 0x00, 4, 4, 0x86, 0x00, 4] + u32(start)
    data += [0x41, 0, 0, 20, 0, 3, 253, 4, 0x86, 0, 4, 0x85, 1, 4, 0x85]
    for i in 0..<records {
        data += [0x01] + u32(start + UInt32(i)) + u32(UInt32(596_523_235 + i * 1000)) + u32(83_519_065)
    }
    let size = UInt32(data.count)
    var header: [UInt8] = [14, 0x20, 0x54, 0x08] + u32(size) + Array(".FIT".utf8)
    let hc = header.withUnsafeBytes { FITCRC.update(0, $0) }
    header += [UInt8(hc & 0xFF), UInt8(hc >> 8)]
    let out = header + data
    let c = out.withUnsafeBytes { FITCRC.update(0, $0) }
    return out + [UInt8(c & 0xFF), UInt8(c >> 8)]
}

let tcxText = """
              <?xml version="1.0" encoding="UTF-8"?>
    <TrainingCenterDatabase xmlns="http://www.garmin.com/xmlschemas/TrainingCenterDatabase/v2">
    <Activities><Activity Sport="Running"><Id>2024-05-02T07:00:00Z</Id>
    <Lap StartTime="2024-05-02T07:00:00Z"><TotalTimeSeconds>2</TotalTimeSeconds><DistanceMeters>10</DistanceMeters>
    <Track>
    <Trackpoint><Time>2024-05-02T07:00:00Z</Time><Position><LatitudeDegrees>47.1</LatitudeDegrees><LongitudeDegrees>8.1</LongitudeDegrees></Position><HeartRateBpm><Value>120</Value></HeartRateBpm></Trackpoint>
    <Trackpoint><Time>2024-05-02T07:00:01Z</Time><Position><LatitudeDegrees>47.2</LatitudeDegrees><LongitudeDegrees>8.2</LongitudeDegrees></Position><HeartRateBpm><Value>121</Value></HeartRateBpm></Trackpoint>
    </Track></Lap></Activity></Activities></TrainingCenterDatabase>
    """

let stravaCSV = """
    Activity ID,Activity Date,Activity Name,Activity Type,Activity Description,Elapsed Time,Distance,\
    Max Heart Rate,Relative Effort,Commute,Activity Private Note,Activity Gear,Filename,Athlete Weight,\
    Bike Weight,Elapsed Time,Moving Time,Distance,Max Speed
    101,"May 1, 2024, 6:00:10 AM","Lunch, with friends",Ride,"a\nb",19,0.2,,,false,,,activities/1.gpx.gz,,,19.0,19.0,200.0,1
    102,"May 2, 2024, 7:00:00 AM",Track session,Run,,2,0.01,,,false,,,activities/2.tcx,,,2.0,2.0,10.0,1
    103,"May 3, 2024, 8:00:00 AM",Yoga,Yoga,,3600,0,,,false,,,,,,3600.0,3600.0,0,0

    """

@Suite("archives and Strava exports")
struct ArchiveImportTests {
    func store() throws -> SQLiteStore {
        try SQLiteStore(path: try Zip.folder() + "/store.sqlite")
    }

    func run(_ importer: RouteImporter, _ path: String) async -> [ImportResult] {
        var out: [ImportResult] = []
        await importer.importPath(path) { out.append($0) }
        return out
    }

    func stravaEntries(prefix: String) throws -> [(String, [UInt8])] {
        [
            (prefix + "activities.csv", Array(stravaCSV.utf8)),
            (prefix + "activities/1.gpx.gz", try Zip.gzip(gpxText(name: "file's own name", type: "running"))),
            (prefix + "activities/2.tcx", Array(tcxText.utf8)),
            (
                prefix + "routes/9.gpx",
                Array(
                    gpxText(name: "planned", points: 5).replacingOccurrences(of: "<time>", with: "<desc>").replacingOccurrences(
                        of: "</time>", with: "</desc>"
                    ).utf8)
            ),
            (prefix + "media/photo.jpg", [0xFF, 0xD8, 0xFF]),
            (prefix + "profile.csv", Array("a,b\n".utf8)),
        ]
    }

    @Test("a Strava export zip: activities named and typed from activities.csv, a manual one, a planned route")
    func stravaZip() async throws {
        let dir = try Zip.folder()
        let zip = dir + "/export_1234.zip"
        try Zip.make(zip, try stravaEntries(prefix: "export_1234/"))
        let store = try store()
        let importer = RouteImporter(store: store)
        let results = await run(importer, zip)
        func result(_ suffix: String) -> ImportResult? { results.first { $0.file.hasSuffix(suffix) } }

        #expect(results.allSatisfy { $0.error == nil }, "\(results.compactMap(\.error))")
        let gpx = try #require(result("!export_1234/activities/1.gpx.gz"))
        #expect(gpx.status == .imported)
        #expect(gpx.tracks.first?.locations == 20)
        let gpxWorkout = try #require(gpx.tracks.first?.workout)
        let w = try #require(await store.workout(id: gpxWorkout))
        #expect(w.metadata["name"] == .string("Lunch, with friends"))
        #expect(w.metadata["stravaActivityID"] == .string("101"))
        #expect(w.activityType == .cycling)  // the CSV's Ride wins over the file's running
        let tcx = try #require(result("activities/2.tcx"))
        #expect(tcx.status == .imported)
        #expect(tcx.tracks.first?.locations == 2)
        let manual = try #require(result("activities.csv#103"))
        #expect(manual.status == .imported)
        let manualWorkout = try #require(manual.tracks.first?.workout)
        let yoga = try #require(await store.workout(id: manualWorkout))
        #expect(yoga.sync?.identifier == "strava-103")
        #expect(yoga.metadata["name"] == .string("Yoga"))
        #expect(yoga.start?.iso8601 == "2024-05-03T08:00:00Z")
        let planned = try #require(result("routes/9.gpx"))
        #expect(planned.status == .imported)
        #expect(planned.tracks.first?.route == nil)  // a planned route is not a recording
        #expect(!results.contains { $0.file.contains("media/") || $0.file.contains("profile.csv") })

        // Again: nothing new.
        let again = await run(importer, zip)
        #expect(again.filter { $0.status != .unchanged }.isEmpty, "\(again.map { ($0.file, $0.status) })")
        #expect(again.count == results.count)
    }

    @Test("entries imported two at a time give the same results in the same order", arguments: [2, 3])
    func parallelEntries(jobs: Int) async throws {
        let dir = try Zip.folder()
        let zip = dir + "/export.zip"
        var entries = try stravaEntries(prefix: "")
        // More activities than workers, so that they finish out of order.
        var csv = stravaCSV
        for i in 0..<8 {
            csv += "\(300 + i),\"May 5, 2024, 6:00:00 AM\",R\(i),Run,,19,0.2,,,false,,,activities/x\(i).gpx,,,19,19,200,1\n"
            entries.append(("activities/x\(i).gpx", Array(gpxText(name: "x\(i)", points: 10 + i * 5, hour: 8).utf8)))
        }
        entries[0] = ("activities.csv", Array(csv.utf8))
        try Zip.make(zip, entries)
        func summary(_ results: [ImportResult]) -> [String] {
            results.map { "\($0.file) \($0.status) \($0.tracks.map(\.locations)) \($0.warnings)" }
        }
        let one = await run(RouteImporter(store: try store()), zip)
        let parallel = RouteImporter(store: try store())
        parallel.jobs = jobs
        let many = await run(parallel, zip)
        #expect(one.count == 13)
        #expect(one.allSatisfy { $0.error == nil })
        #expect(summary(one) == summary(many))
        let again = await run(parallel, zip)
        #expect(again.allSatisfy { $0.status == .unchanged })
    }

    /// GPX entries read ahead (gzip or plain), a TCX, a truncated gzip, malformed GPX and an entry past the limit.
    @Test("entries read ahead give the results each gives alone, in order")
    func readAhead() async throws {
        let dir = try Zip.folder()
        let zip = dir + "/mixed.zip"
        let good = try Zip.gzip(gpxText(name: "g1", points: 30))
        let truncated = Array(try Zip.gzip(gpxText(name: "g2", points: 300, hour: 9)).dropLast(40))
        let malformed = gpxText(name: "bad", hour: 5).replacingOccurrences(of: "</trkpt>", with: "</trkpx>")
        let large = try Zip.gzip(gpxText(name: "large", points: 2000, hour: 4))
        let names = ["a.gpx.gz", "b.gpx", "c.tcx", "d.gpx.gz", "e.gpx.gz", "f.gpx", "g.gpx.gz", "h.gpx.gz", "i.gpx"]
        try Zip.make(
            zip,
            [
                (names[0], good), (names[1], Array(gpxText(name: "plain", hour: 7).utf8)), (names[2], Array(tcxText.utf8)),
                (names[3], truncated), (names[4], try Zip.gzip(gpxText(name: "g3", hour: 3))),
                (names[5], Array(malformed.utf8)), (names[6], large),
                (names[7], try Zip.gzip(gpxText(name: "g4", hour: 2))),
                (names[8], Array(gpxText(name: "last plain", hour: 1).utf8)),
            ])
        var limits = ArchiveLimits()
        limits.maxEntryBytes = 100_000  // the large entry decompresses to about 200 KB
        func importer() throws -> RouteImporter {
            let importer = RouteImporter(store: try store())
            importer.archiveLimits = limits
            return importer
        }
        let results = await run(try importer(), zip)
        #expect(results.map(\.file) == names.map { "\(zip)!\($0)" })
        // Each entry alone, as it was read before entries were read ahead: decompressed first (with the limit), then
        // read by the importer of its format.
        var alone: [ImportResult] = []
        let archive = try ZipArchive(path: zip, limits: limits)
        for name in names {
            let label = "\(zip)!\(name)"
            var bytes = try archive.contents(of: name)
            var warnings: [String] = []
            if InputFile.isGzip(bytes) {
                do {
                    bytes = try InputFile.gunzip(bytes, name: label, limit: limits.maxEntryBytes)
                } catch {
                    alone.append(ImportResult(file: label, status: .failed, error: error))
                    continue
                }
                warnings = ["the entry is gzip-compressed; it was decompressed in memory"]
            }
            let store = try store()
            var result =
                name.hasSuffix(".tcx")
                ? await TCXImporter(store: store).importBytes(bytes, name: label)
                : await GPXImporter(store: store).importBytes(bytes, name: label)
            result.warnings = warnings + result.warnings
            alone.append(result)
        }
        func summary(_ r: ImportResult) -> String {
            "\(r.status) \(r.tracks.map(\.locations)) \(r.warnings) \(r.error.map { "\($0.code) \($0)" } ?? "-")"
        }
        #expect(results.map(summary) == alone.map(summary))
        #expect(
            results.map(\.status) == [
                .imported, .imported, .imported, .failed, .imported, .failed, .failed, .imported, .imported,
            ])
        #expect(results[0].warnings.first == "the entry is gzip-compressed; it was decompressed in memory")
        #expect(results[3].error?.code == .compression && results[3].warnings.isEmpty)
        #expect(results[5].error?.code == .malformedXML && results[5].error?.line != nil)
        #expect(results[6].error?.message == "the decompressed data is larger than 100,000 bytes")
        #expect(results[6].error?.file == "\(zip)!\(names[6])")
    }

    @Test("the same export unpacked into a folder imports the same way")
    func stravaFolder() async throws {
        let dir = try Zip.folder() + "/export_1"
        for (path, bytes) in try stravaEntries(prefix: "") {
            let url = URL(fileURLWithPath: dir + "/" + path)
            try FileManager.default.createDirectory(
                at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(bytes).write(to: url)
        }
        #expect(RouteImporter.kind(of: dir) == .stravaFolder)
        let results = await run(RouteImporter(store: try store()), dir)
        #expect(results.filter { $0.status == .imported }.count == 4)
        #expect(results.allSatisfy { $0.error == nil })
    }

    @Test("a Strava export's files larger than streamedEntryBytes stream, with their row's name and type (zip and folder)")
    func stravaStreamed() async throws {
        let dir = try Zip.folder()
        let zip = dir + "/export_1.zip"
        try Zip.make(zip, try stravaEntries(prefix: ""))
        let folder = dir + "/export_2"
        for (path, bytes) in try stravaEntries(prefix: "") {
            let url = URL(fileURLWithPath: folder + "/" + path)
            try FileManager.default.createDirectory(
                at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(bytes).write(to: url)
        }
        for path in [zip, folder] {
            let store = try store()
            let importer = RouteImporter(store: store)
            importer.streamedEntryBytes = 64
            let results = await run(importer, path)
            #expect(results.allSatisfy { $0.error == nil }, "\(results.compactMap(\.error))")
            let gpx = try #require(results.first { $0.file.hasSuffix("activities/1.gpx.gz") })
            #expect(gpx.tracks.first?.locations == 20)
            if path == zip { #expect(gpx.warnings.contains { $0.contains("decompressed as it was read") }) }
            let gpxWorkout = try #require(gpx.tracks.first?.workout)
            let w = try #require(await store.workout(id: gpxWorkout))
            #expect(w.metadata["name"] == .string("Lunch, with friends"))
            #expect(w.activityType == .cycling)  // the CSV's Ride wins over the file's running
            let tcx = try #require(results.first { $0.file.hasSuffix("activities/2.tcx") })
            #expect(tcx.tracks.first?.locations == 2)
            let tcxWorkout = try #require(tcx.tracks.first?.workout)
            let t = try #require(await store.workout(id: tcxWorkout))
            #expect(t.metadata["name"] == .string("Track session"))
        }
    }

    @Test("a FIT entry larger than streamedEntryBytes is read as a stream (twice) and stores what the file does")
    func fitStreamed() async throws {
        let dir = try Zip.folder()
        let fit = fitActivity(records: 3000)
        try Zip.make(dir + "/fit.zip", [("a.fit", fit), ("b.fit.gz", try Zip.gzip(bytes: fit))])
        try Data(fit).write(to: URL(fileURLWithPath: dir + "/a.fit"))
        let direct = await run(RouteImporter(store: try store()), dir + "/a.fit")
        #expect(direct.first?.tracks.first?.locations == 3000)
        let importer = RouteImporter(store: try store())
        importer.streamedEntryBytes = 1024
        let results = await run(importer, dir + "/fit.zip")
        #expect(results.count == 2)
        for r in results {
            #expect(r.error == nil, "\(String(describing: r.error))")
            #expect(r.tracks.first?.locations == 3000)
        }
        #expect(results.last?.warnings.contains { $0.contains("decompressed as it was read") } == true)
    }

    @Test("a small gzip entry that inflates past streamedEntryBytes is inflated as it is read, not into memory")
    func smallGzipEntryStreamed() async throws {
        let dir = try Zip.folder()
        let gz = try Zip.gzip(gpxText(name: "padded", points: 50) + String(repeating: " ", count: 200_000))
        try Zip.make(dir + "/a.zip", [("a.gpx.gz", gz)])
        let importer = RouteImporter(store: try store())
        importer.streamedEntryBytes = 50_000
        let results = await run(importer, dir + "/a.zip")
        let r = try #require(results.first)
        #expect(r.error == nil, "\(String(describing: r.error))")
        #expect(r.tracks.first?.locations == 50)
        #expect(r.warnings.contains { $0.contains("decompressed as it was read") })
    }

    @Test("a plain archive: every activity file by content, nested archives one level deep, other entries counted")
    func plainArchive() async throws {
        let dir = try Zip.folder()
        let inner = dir + "/inner.zip"
        try Zip.make(inner, [("deep/b.gpx", Array(gpxText(name: "b", hour: 7).utf8))])
        let innerBytes = Array(try Data(contentsOf: URL(fileURLWithPath: inner)))
        let innermost = dir + "/innermost.zip"
        try Zip.make(innermost, [("x.zip", innerBytes)])
        let zip = dir + "/all.zip"
        try Zip.make(
            zip,
            [
                ("a.bin", Array(gpxText(name: "a").utf8)),  // the name does not say GPX: the content does
                ("nested/inner.zip", innerBytes),
                ("too-deep.zip", Array(try Data(contentsOf: URL(fileURLWithPath: innermost)))),
                ("notes.txt", Array("hello".utf8)),
            ])
        let results = await run(RouteImporter(store: try store()), zip)
        let imported = results.filter { $0.status == .imported }.map(\.file)
        #expect(imported.contains(zip + "!nested/inner.zip!deep/b.gpx"))
        // a.bin is not skipped by name: it is not a known extension, so it is counted with notes.txt.
        #expect(results.contains { $0.file == zip && $0.warnings.contains { $0.contains("2 entries") } })
        let deep = try #require(results.first { $0.file.hasSuffix("too-deep.zip!x.zip") })
        #expect(deep.status == .failed)
        #expect(deep.error?.code == .compression)
    }

    @Test("a zip bomb is refused with a clear error; the other entries still import")
    func zipBomb() async throws {
        let dir = try Zip.folder()
        let zip = dir + "/bomb.zip"
        try Zip.make(
            zip,
            [
                ("ok.gpx", Array(gpxText(name: "ok").utf8)),
                ("bomb.gpx", [UInt8](repeating: 0x20, count: 8 << 20)),  // 8 MiB of spaces: about 1000× smaller
            ])
        let results = await run(RouteImporter(store: try store()), zip)
        let bomb = try #require(results.first { $0.file.hasSuffix("!bomb.gpx") })
        #expect(bomb.status == .failed)
        #expect(bomb.error?.code == .compression)
        #expect(bomb.error?.message.contains("zip bomb") == true)
        #expect(results.first { $0.file.hasSuffix("!ok.gpx") }?.status == .imported)

        var limits = ArchiveLimits()
        limits.maxEntryBytes = 1000
        let archive = try ZipArchive(path: zip, limits: limits)
        #expect(throws: RouteKitError.self) { try archive.contents(of: "ok.gpx") }
    }

    @Test("a file that claims to be a zip but is not fails with a compression error")
    func notAZip() async throws {
        let path = try Zip.folder() + "/broken.zip"
        try Data([0x50, 0x4B, 0x03, 0x04, 1, 2, 3]).write(to: URL(fileURLWithPath: path))
        let results = await run(RouteImporter(store: try store()), path)
        #expect(results.count == 1)
        #expect(results.first?.status == .failed)
        #expect(results.first?.error?.code == .compression)
    }
}

@Suite("zip entries' checksums")
struct ZipChecksumTests {
    @Test("an entry whose data does not match its CRC-32 is refused, naming the archive and entry; the others read")
    func corruptEntry() throws {
        let dir = try Zip.folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/export.zip"
        let good = Array(gpxText(name: "good").utf8)
        let bad = Array(gpxText(name: "bad-entry-marker", points: 30).utf8)
        try Zip.make(path, [("good.gpx", good), ("bad.gpx", bad)], compression: .none)
        // Stored entries: flip one byte of the second entry's data in place.
        var bytes = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        let marker = Array("bad-entry-marker".utf8)
        let at = try #require(
            (0...(bytes.count - marker.count)).first { bytes[$0..<($0 + marker.count)].elementsEqual(marker) })
        bytes[at] ^= 0x20
        try Data(bytes).write(to: URL(fileURLWithPath: path))

        let archive = try ZipArchive(path: path)
        #expect(try archive.contents(of: "good.gpx") == good)
        let e = #expect(throws: RouteKitError.self) { try archive.contents(of: "bad.gpx") }
        #expect(e?.code == .compression)
        #expect(e?.file == "\(path)!bad.gpx")
        #expect(e?.message.contains("CRC-32") == true)
    }
}
