import Foundation
import RouteKitTesting
import Testing

/// TCX from the command line: `routekit import --json`, `inspect` and `convert` on real and inline files.
@Suite(
    "routekit and TCX files", .serialized,
    .enabled(if: CLI.executable != nil, "the routekit executable was not found next to the tests"))
struct TCXCLITests {
    /// `../shared/format-corpus` beside the repository, if it is there.
    static let corpus: String? = {
        let repo = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let path = repo.deletingLastPathComponent().appendingPathComponent("shared/format-corpus").path
        return FileManager.default.fileExists(atPath: path + "/index.json") ? path : nil
    }()

    static let ns = "http://www.garmin.com/xmlschemas/TrainingCenterDatabase/v2"

    /// An indoor run: three trackpoints with heart rate, the middle one with a position.
    static let inline = """
        <?xml version="1.0" encoding="UTF-8"?>
        <TrainingCenterDatabase xmlns="\(ns)"><Activities><Activity Sport="Running">
        <Id>2024-05-01T06:00:00Z</Id><Lap StartTime="2024-05-01T06:00:00Z"><Track>
        <Trackpoint><Time>2024-05-01T06:00:01Z</Time><HeartRateBpm><Value>100</Value></HeartRateBpm></Trackpoint>
        <Trackpoint><Time>2024-05-01T06:00:02Z</Time><Position><LatitudeDegrees>47.1</LatitudeDegrees>
        <LongitudeDegrees>8.1</LongitudeDegrees></Position><HeartRateBpm><Value>101</Value></HeartRateBpm></Trackpoint>
        <Trackpoint><Time>2024-05-01T06:00:03Z</Time><HeartRateBpm><Value>102</Value></HeartRateBpm></Trackpoint>
        </Track></Lap></Activity></Activities></TrainingCenterDatabase>
        """

    @Test(
        "a corpus TCX imports with --json: Strava's leading whitespace warned, every position stored; again unchanged",
        .enabled(if: corpus != nil, "../shared/format-corpus is absent"))
    func corpusImport() throws {
        let corpus = try #require(Self.corpus)
        let f = try StoreFixture()
        defer { f.remove() }
        // Garmin Training Center's history.tcx: 1,202 of 1,205 trackpoints have a position (the index's probe).
        let history = corpus + "/GPSBabel__gpsbabel__reference__track__history.tcx"
        let strava = corpus + "/sports-alliance__sports-lib__src__specs__fixtures__runs__tcx__6281425038.tcx"
        let objects = try f.json(["import", history, strava])
        try #require(objects.count == 2)
        #expect(objects[0]["status"] as? String == "imported")
        #expect(try StoreCLI.firstRoute(objects[0])["locations"] as? Int == 1202)
        #expect(objects[1]["status"] as? String == "imported")
        #expect(try StoreCLI.firstRoute(objects[1])["locations"] as? Int ?? 0 > 1000)
        let warnings = objects[1]["warnings"] as? [String] ?? []
        #expect(warnings.contains { $0.contains("whitespace character(s) before the XML declaration") }, "\(warnings)")
        let again = try f.json(["import", history, strava])
        #expect(again.map { $0["status"] as? String } == ["unchanged", "unchanged"])
    }

    @Test("a folder's .tcx and .tcx.gz files are found and imported; inspect and convert read TCX")
    func folderInspectConvert() throws {
        let f = try StoreFixture()
        defer { f.remove() }
        let folder = f.directory + "/exports"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let file = folder + "/run.tcx"
        try Self.inline.write(toFile: file, atomically: true, encoding: .utf8)
        try "not an export".write(toFile: folder + "/notes.txt", atomically: true, encoding: .utf8)
        // The same run, gzip-compressed: found, and the same activity.
        let copy = folder + "/run-copy.tcx"
        try Self.inline.write(toFile: copy, atomically: true, encoding: .utf8)
        let gzip = try runChildProcess(URL(fileURLWithPath: "/usr/bin/env"), ["gzip", copy])
        try #require(gzip.status == 0, "gzip: \(gzip.output)")
        let objects = try f.json(["import", folder])
        try #require(objects.count == 2)
        #expect(objects[0]["file"] as? String == copy + ".gz")
        #expect(objects[0]["status"] as? String == "imported")
        #expect(try StoreCLI.firstRoute(objects[0])["locations"] as? Int == 1)
        #expect(objects[1]["file"] as? String == file)
        #expect(objects[1]["status"] as? String == "unchanged")

        let inspect = try CLI.run(["inspect", "--json", file])
        #expect(inspect.status == 0, "\(inspect.stderr)")
        let report = try #require(try StoreCLI.objects(inspect.stdout).first)
        #expect(report["tracks"] as? Int == 1)
        #expect(report["points"] as? Int == 1)
        #expect((report["warnings"] as? [String])?.contains { $0.hasPrefix("2 trackpoint(s) without a position") } == true)

        let out = f.directory + "/run.gpx"
        let convert = try CLI.run(["convert", file, "-o", out])
        #expect(convert.status == 0, "\(convert.stderr)")
        let gpx = try String(contentsOfFile: out, encoding: .utf8)
        #expect(gpx.contains("<trkpt lat=\"47.1\" lon=\"8.1\">"))
        #expect(gpx.contains("<time>2024-05-01T06:00:02Z</time>"))
    }

    /// A course: two trackpoints with heart rate, a course point.
    static let course = """
        <?xml version="1.0" encoding="UTF-8"?>
        <TrainingCenterDatabase xmlns="\(ns)"><Courses><Course><Name>Loop</Name><Track>
        <Trackpoint><Time>2024-05-01T06:00:01Z</Time><Position><LatitudeDegrees>47.1</LatitudeDegrees>
        <LongitudeDegrees>8.1</LongitudeDegrees></Position><HeartRateBpm><Value>100</Value></HeartRateBpm></Trackpoint>
        <Trackpoint><Time>2024-05-01T06:00:02Z</Time><Position><LatitudeDegrees>47.2</LatitudeDegrees>
        <LongitudeDegrees>8.2</LongitudeDegrees></Position><HeartRateBpm><Value>101</Value></HeartRateBpm></Trackpoint>
        </Track><CoursePoint><Name>Top</Name><Position><LatitudeDegrees>47.2</LatitudeDegrees>
        <LongitudeDegrees>8.2</LongitudeDegrees></Position><PointType>Summit</PointType></CoursePoint>
        </Course></Courses></TrainingCenterDatabase>
        """

    @Test("a course: inspect says so (text and JSON); import counts its route and locations, marks it a course")
    func course() throws {
        let f = try StoreFixture()
        defer { f.remove() }
        let file = try f.write("loop.tcx", Self.course)
        let text = try CLI.run(["inspect", file])
        #expect(text.status == 0, "\(text.stderr)")
        #expect(text.stdout.contains("course \"Loop\""), "\(text.stdout)")
        let json = try CLI.run(["inspect", "--json", file])
        let report = try #require(try StoreCLI.objects(json.stdout).first)
        let courses = try #require(report["courses"] as? [[String: Any]])
        #expect(courses.count == 1)
        #expect(courses.first?["name"] as? String == "Loop")
        #expect(courses.first?["sport"] is NSNull)
        // An activity is no course: no `courses` key.
        let run = try f.write("run.tcx", Self.inline)
        let activity = try #require(try StoreCLI.objects(try CLI.run(["inspect", "--json", run]).stdout).first)
        #expect(activity["courses"] == nil)

        let imported = try f.run(["import", file])
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(imported.stdout.contains("1 route(s), 2 location(s)"), "\(imported.stdout)")
        let workouts = try f.workouts()
        try #require(workouts.count == 1)
        let metadata = workouts[0]["metadata"] as? [String: Any] ?? [:]
        #expect(metadata["course"] as? Bool == true)
        #expect(metadata["name"] as? String == "Loop")
        let again = try f.json(["import", file])
        #expect(again.first?["status"] as? String == "unchanged")
    }

    @Test("malformed TCX fails with its line and column in the JSON error")
    func malformed() throws {
        let f = try StoreFixture()
        defer { f.remove() }
        let file = try f.write("broken.tcx", Self.inline.replacingOccurrences(of: "</Lap>", with: "</Lapp>"))
        let objects = try f.json(["import", file], status: 1)
        try #require(objects.count == 1)
        #expect(objects[0]["status"] as? String == "failed")
        let error = try #require(objects[0]["error"] as? [String: Any])
        #expect(error["code"] as? String == "malformedXML")
        #expect(error["line"] as? Int == 8)
        #expect(error["column"] as? Int != nil)
    }
}
