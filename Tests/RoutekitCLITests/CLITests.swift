import Foundation
import RouteKitTesting
import Testing

/// Runs the built `routekit` executable end to end.
enum CLI {
    static let executable: URL? = {
        // The test bundle sits in the build folder next to the executable.
        let candidates = [
            URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent(),
            URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().deletingLastPathComponent(),
            URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
                .appendingPathComponent(".build/debug"),
        ]
        return candidates.map { $0.appendingPathComponent("routekit") }.first {
            FileManager.default.isExecutableFile(atPath: $0.path)
        }
    }()

    static let corpus: String? = {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("shared/gpx-corpus").path
        return FileManager.default.fileExists(atPath: path) ? path : nil
    }()

    struct Result {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    /// Runs any executable and returns its standard output.
    static func runRaw(_ executable: URL, _ arguments: [String]) throws -> String {
        try runChildProcess(executable, arguments).output
    }

    static func run(_ arguments: [String]) throws -> Result {
        guard let executable else { throw CocoaError(.fileNoSuchFile) }
        let r = try runChildProcess(executable, arguments)
        return Result(status: r.status, stdout: r.output, stderr: r.errorOutput)
    }

    static func temporaryFile(_ name: String, _ contents: String) throws -> String {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("routekit-cli-\(UUID().uuidString)-\(name)")
        try contents.write(to: url, atomically: true, encoding: .utf8)
        return url.path
    }
}

@Suite("routekit command line", .enabled(if: CLI.executable != nil, "the routekit executable was not found next to the tests"))
struct CLITests {
    static let good = """
        <?xml version="1.0"?><gpx version="1.1" creator="t" xmlns="http://www.topografix.com/GPX/1/1"
          xmlns:gpxtpx="http://www.garmin.com/xmlschemas/TrackPointExtension/v1"><trk><name>T</name><trkseg>
        <trkpt lat="47.1" lon="8.1"><ele>400</ele><time>2024-05-01T06:00:00Z</time><extensions><gpxtpx:TrackPointExtension><gpxtpx:hr>120</gpxtpx:hr></gpxtpx:TrackPointExtension></extensions></trkpt>
        <trkpt lat="47.2" lon="8.2"><ele>401</ele><time>2024-05-01T06:00:01Z</time></trkpt>
        </trkseg></trk></gpx>
        """

    @Test("inspect --json prints one object per file; a bad file fails with line and column and exit code 1")
    func inspectJSON() throws {
        let good = try CLI.temporaryFile("good.gpx", Self.good)
        let bad = try CLI.temporaryFile("bad.gpx", "<gpx xmlns=\"http://www.topografix.com/GPX/1/1\">\n<trk>\n</gpx>")
        let result = try CLI.run(["inspect", "--json", good, bad, good])
        #expect(result.status == 1)
        let lines = result.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 3)
        let objects = try lines.map { try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] ?? [:] }
        #expect(objects[0]["status"] as? String == "ok")
        #expect(objects[0]["points"] as? Int == 2)
        #expect((objects[0]["series"] as? [String: Int])?["heartRate"] == 1)
        #expect(objects[0]["error"] is NSNull)
        #expect(objects[1]["status"] as? String == "failed")
        let error = try #require(objects[1]["error"] as? [String: Any])
        #expect(error["code"] as? String == "malformedXML")
        #expect(error["line"] as? Int == 3)
        #expect(error["column"] as? Int == 1)
        #expect(objects[2]["status"] as? String == "ok")
    }

    @Test("inspect names the failed files at the end and keeps going")
    func inspectText() throws {
        let bad = try CLI.temporaryFile("bad.gpx", "not xml")
        let good = try CLI.temporaryFile("good.gpx", Self.good)
        let result = try CLI.run(["inspect", bad, good])
        #expect(result.status == 1)
        #expect(result.stdout.contains("track points 2"))
        #expect(result.stderr.contains("1 of 2 files failed"))
        #expect(result.stderr.contains("bad.gpx:1:1"))
    }

    @Test("convert writes GPX, GeoJSON and CSV; a failed convert leaves no output behind")
    func convert() throws {
        let input = try CLI.temporaryFile("in.gpx", Self.good)
        let gpx = input + ".out.gpx"
        let geojson = input + ".geojson"
        let csv = input + ".csv"
        #expect(try CLI.run(["convert", input, "-o", gpx]).status == 0)
        #expect(try String(contentsOfFile: gpx, encoding: .utf8).contains("<gpxtpx:hr>120</gpxtpx:hr>"))
        #expect(try CLI.run(["convert", input, "-o", geojson]).status == 0)
        let json = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: geojson))) as? [String: Any]
        #expect(json?["type"] as? String == "FeatureCollection")
        #expect(try CLI.run(["convert", input, "-o", csv]).status == 0)
        let rows = try String(contentsOfFile: csv, encoding: .utf8).split(separator: "\n")
        #expect(rows.count == 3)
        #expect(rows[1].hasPrefix("trkpt,0,0,0,2024-05-01T06:00:00Z,47.1,8.1,400,"))
        let bad = try CLI.temporaryFile("bad.gpx", Self.good.replacingOccurrences(of: "</trkseg>", with: ""))
        let out = bad + ".out.gpx"
        let failed = try CLI.run(["convert", bad, "-o", out])
        #expect(failed.status == 1)
        #expect(!FileManager.default.fileExists(atPath: out))
        #expect(failed.stderr.contains("does not match"))
    }

    @Test("usage errors exit with 64 and --help teaches")
    func usage() throws {
        #expect(try CLI.run(["inspect"]).status == 64)
        let help = try CLI.run(["convert", "--help"])
        #expect(help.status == 0)
        #expect(help.stdout.contains("Examples"))
    }

    @Test("routekit --version prints the OpenAPI document's info.version")
    func versionMatchesOpenAPI() throws {
        let document = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Sources/RouteKitServer/openapi.yaml")
        let text = try String(contentsOf: document, encoding: .utf8)
        // info.version is the document's only key `version` two spaces in (the first lines: `info:` and its keys).
        let prefix = "  version: "
        let line = try #require(text.split(separator: "\n").first { $0.hasPrefix(prefix) })
        let documented = line.dropFirst(prefix.count).trimmingCharacters(in: .whitespaces)
        #expect(!documented.isEmpty)
        let result = try CLI.run(["--version"])
        #expect(result.status == 0)
        let printed = result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(printed == documented)
    }

    @Test("every malformed corpus file exits 1, never a signal", .enabled(if: CLI.corpus != nil, "corpus not found"))
    func corpusMalformed() throws {
        let dir = try #require(CLI.corpus) + "/malformed"
        let files = try FileManager.default.contentsOfDirectory(atPath: dir).sorted().map { dir + "/" + $0 }
        let result = try CLI.run(["inspect", "--json"] + files)
        #expect(result.status == 1)
        #expect(result.stdout.split(separator: "\n").count == files.count)
        #expect(!result.stdout.contains("\"status\":\"ok\""))
    }
}

@Suite("convert never destroys files", .enabled(if: CLI.executable != nil, "the routekit executable was not found"))
struct ConvertSafetyTests {
    @Test("the output may not be the input, directly or through a link")
    func sameFile() throws {
        let input = try CLI.temporaryFile("same.gpx", CLITests.good)
        let before = try Data(contentsOf: URL(fileURLWithPath: input))
        let link = input + ".link.gpx"
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: input)
        for output in [input, link] {
            let result = try CLI.run(["convert", input, "-o", output])
            #expect(result.status == 1)
            #expect(result.stderr.contains("the output is the input file"))
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: input)) == before)
    }

    @Test("a failed conversion leaves an existing output as it was and no temporary file")
    func existingOutputKept() throws {
        let output = try CLI.temporaryFile("existing.csv", "keep me\n")
        let directory = (output as NSString).deletingLastPathComponent
        let bad = try CLI.temporaryFile("bad.gpx", "<gpx")
        for input in [bad, bad + ".missing"] {
            #expect(try CLI.run(["convert", input, "-o", output]).status == 1)
            #expect(try String(contentsOfFile: output, encoding: .utf8) == "keep me\n")
        }
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: directory).filter {
            $0.hasSuffix(".tmp") && $0.contains("existing.csv")
        }
        #expect(leftovers.isEmpty)
    }

    @Test("a route before a waypoint is reordered into valid GPX 1.1")
    func reorder() throws {
        let input = try CLI.temporaryFile(
            "order.gpx",
            "<gpx xmlns=\"http://www.topografix.com/GPX/1/1\"><rte><rtept lat=\"1\" lon=\"2\"/></rte><wpt lat=\"3\" lon=\"4\"/></gpx>")
        let result = try CLI.run(["convert", input, "-o", "-"])
        #expect(result.status == 0)
        let text = result.stdout
        let wpt = try #require(text.range(of: "<wpt"))
        let rte = try #require(text.range(of: "<rte>"))
        #expect(wpt.lowerBound < rte.lowerBound)
    }
}

@Suite(
    "routekit import on a full disk", .enabled(if: CLI.executable != nil, "the routekit executable was not found"),
    .enabled(if: SmallDisk.unavailableReason == nil, "\(SmallDisk.unavailableReason ?? "")"))
struct FullDiskCLITests {
    @Test("a store on a full disk: exit 1, naming the store and the full disk; what was imported before stays")
    func fullDisk() throws {
        let disk = try SmallDisk.mount(megabytes: 8)
        defer { disk.unmount() }
        let store = disk.path + "/routes.sqlite"
        let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let sample = repository.appendingPathComponent("sample-routes/morning-run.gpx").path
        let first = try CLI.run(["import", "--store", store, sample])
        #expect(first.status == 0, "\(first.stderr)")
        disk.fill()
        var big = #"<?xml version="1.0"?><gpx version="1.1" creator="t" xmlns="http://www.topografix.com/GPX/1/1"><trk><trkseg>"#
        for i in 0..<40_000 {
            big +=
                #"<trkpt lat="\#(47.0 + Double(i) * 0.00001)" lon="8.5"><ele>\#(i % 50)</ele><time>2024-05-02T\#(String(format: "%02d", i / 3600)):\#(String(format: "%02d", i / 60 % 60)):\#(String(format: "%02d", i % 60))Z</time></trkpt>"#
        }
        big += "</trkseg></trk></gpx>"
        let file = try CLI.temporaryFile("big.gpx", big)
        defer { try? FileManager.default.removeItem(atPath: file) }
        let full = try CLI.run(["import", "--store", store, file])
        #expect(full.status == 1)
        let said = full.stdout + full.stderr
        #expect(said.contains(store), "\(said.prefix(600))")
        #expect(said.contains("full"), "\(said.prefix(600))")
        #expect(!said.contains("47.0"), "a coordinate in an error")
        disk.free()
        let listed = try CLI.run(["workouts", "--store", store])
        #expect(listed.status == 0)
        #expect(listed.stdout.contains("running"), "\(listed.stdout)")
    }
}
