import Foundation
import RouteKitTesting
import Testing

@Suite(
    "routekit render",
    .enabled(if: CLI.executable != nil, "the routekit executable was not found next to the tests"))
struct RenderCLITests {
    static let samples = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("sample-routes").path

    func bytes(_ path: String) throws -> [UInt8] { Array(try Data(contentsOf: URL(fileURLWithPath: path))) }

    @Test(
        "cairo is opened only when a PNG is drawn: --version and an SVG start without it",
        .enabled(if: FileManager.default.fileExists(atPath: "/usr/bin/env"), "no /usr/bin/env"))
    func cairoOnDemand() throws {
        let executable = try #require(CLI.executable)
        let env = URL(fileURLWithPath: "/usr/bin/env")
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("routekit-cairo-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        // The dynamic loader names every library it loads (glibc's LD_DEBUG=libs, on standard error).
        func loaded(_ arguments: [String]) throws -> String {
            let r = try runChildProcess(env, ["LD_DEBUG=libs", executable.path] + arguments)
            #expect(r.status == 0, "\(arguments)")
            return r.errorOutput
        }
        let version = try loaded(["--version"])
        #expect(version.contains("libswiftCore"), "LD_DEBUG=libs printed nothing: the check below would pass blindly")
        #expect(!version.contains("libcairo"))
        let svg = try loaded(["render", Self.samples + "/lunch-ride.gpx", "-o", directory.path + "/ride.svg"])
        #expect(!svg.contains("libcairo"))
        let png = try loaded(["render", Self.samples + "/lunch-ride.gpx", "-o", directory.path + "/ride.png"])
        #expect(png.contains("libcairo.so"))
        #expect(try bytes(directory.path + "/ride.png").starts(with: [0x89, 0x50, 0x4E, 0x47]))
    }

    @Test("a smoothed route from the store: SVG (valid XML, raw under current, the processing's caption) and PNG")
    func storeRoute() throws {
        let fixture = try StoreFixture()
        defer { fixture.remove() }
        let imported = try CLI.run(["import", "--store", fixture.store, Self.samples + "/lunch-ride.gpx"])
        #expect(imported.status == 0, "\(imported.stderr)")
        let smoothed = try CLI.run(["smooth", "--all", "--store", fixture.store])
        #expect(smoothed.status == 0, "\(smoothed.stderr)")
        let routes = try StoreCLI.objects(try CLI.run(["routes", "--json", "--store", fixture.store]).stdout)
        let route = try #require(routes.first?["uuid"] as? String)
        let workout = try #require(routes.first?["workout"] as? String)

        let svg = fixture.directory + "/ride.svg"
        let r = try CLI.run(["render", route, "-o", svg, "--store", fixture.store, "--size", "1000x800"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("wrote \(svg) (svg, 1000x800"))
        let text = String(decoding: try bytes(svg), as: UTF8.self)
        if let xmllint = GPXSchema.xmllint {
            #expect(try runChildProcess(URL(fileURLWithPath: xmllint), ["--noout", svg]).status == 0)
        }
        #expect(text.contains("stroke=\"#8c959f\""), "the raw recording drawn faint")
        #expect(text.contains("5,400 → "), "the caption gives the points in and out")
        #expect(text.contains(">Heart rate (bpm)<") && text.contains(">Elevation (m)<"))
        // The workout's uuid draws its current route: the same picture.
        let byWorkout = fixture.directory + "/workout.svg"
        #expect(try CLI.run(["render", workout, "-o", byWorkout, "--store", fixture.store, "--size", "1000x800"]).status == 0)
        #expect(try bytes(byWorkout) == bytes(svg))
        // Only the current version.
        let current = fixture.directory + "/current.svg"
        #expect(try CLI.run(["render", route, "-o", current, "--versions", "current", "--store", fixture.store]).status == 0)
        #expect(!String(decoding: try bytes(current), as: UTF8.self).contains("stroke=\"#8c959f\""))

        let png = fixture.directory + "/ride.png"
        let p = try CLI.run(["render", route, "-o", png, "--store", fixture.store, "--size", "640x480"])
        #expect(p.status == 0, "\(p.stderr)")
        let header = try bytes(png)
        #expect(Array(header.prefix(8)) == [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
        // IHDR: width and height, big-endian, at bytes 16–23.
        let width = header[16..<20].reduce(0) { $0 << 8 | Int($1) }
        let height = header[20..<24].reduce(0) { $0 << 8 | Int($1) }
        #expect(width == 640 && height == 480)
        // The same input gives the same bytes.
        let again = fixture.directory + "/again.png"
        #expect(try CLI.run(["render", route, "-o", again, "--store", fixture.store, "--size", "640x480"]).status == 0)
        #expect(try bytes(again) == header)
    }

    @Test("a GPX file, a heatmap of the store, and errors that say what is wrong")
    func fileHeatmapAndErrors() throws {
        let fixture = try StoreFixture()
        defer { fixture.remove() }
        let svg = fixture.directory + "/run.svg"
        let r = try CLI.run(["render", Self.samples + "/morning-run.gpx", "-o", svg])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(String(decoding: try bytes(svg), as: UTF8.self).contains("2,700 points"))
        let stdout = try CLI.run(["render", Self.samples + "/morning-run.gpx", "-o", "-"])
        #expect(stdout.status == 0 && stdout.stdout.hasPrefix("<?xml"))

        #expect(try CLI.run(["import", "--store", fixture.store, Self.samples]).status == 0)
        let heat = fixture.directory + "/heat.png"
        let h = try CLI.run(["render", "--heatmap", "-o", heat, "--store", fixture.store, "--size", "300x200"])
        #expect(h.status == 0, "\(h.stderr)")
        #expect(h.stderr.contains("heatmap: 3 routes, 9900 points"))
        #expect(try bytes(heat).count > 100)
        let cycling = try CLI.run([
            "render", "--heatmap", "-o", heat, "--store", fixture.store, "--activity", "cycling",
        ])
        #expect(cycling.stderr.contains("heatmap: 1 routes, 5400 points"), "\(cycling.stderr)")
        let none = try CLI.run([
            "render", "--heatmap", "-o", heat, "--store", fixture.store, "--from", "2030-01-01T00:00:00Z",
        ])
        #expect(none.status == 1 && none.stderr.contains("no current route matches"))

        // Usage errors: exit 64, with the reason.
        for (arguments, reason) in [
            (["render", "--heatmap", Self.samples + "/morning-run.gpx", "-o", heat], "give no route"),
            (["render", "--heatmap", "-o", fixture.directory + "/heat.svg"], "PNG only"),
            (["render", Self.samples + "/morning-run.gpx", "-o", "-", "--format", "png"], "PNG goes to a file"),
            (["render", Self.samples + "/morning-run.gpx", "-o", svg, "--versions", "newest"], "--versions"),
            (["render", "-o", svg], "give a route"),
        ] {
            let e = try CLI.run(arguments)
            #expect(e.status == 64, "\(arguments)")
            #expect(e.stderr.contains(reason), "\(e.stderr)")
        }
        // Input errors: exit 1, naming what is at fault; nothing written.
        let badSize = try CLI.run(["render", Self.samples + "/morning-run.gpx", "-o", svg, "--size", "20x20"])
        #expect(badSize.status == 1 && badSize.stderr.contains("picture width 20 is outside 64…8192"))
        let missing = try CLI.run([
            "render", "0C1D9E1E-0000-4000-8000-000000000000", "-o", fixture.directory + "/x.svg", "--store", fixture.store,
        ])
        #expect(missing.status == 1 && missing.stderr.contains("no route or workout"))
        #expect(!FileManager.default.fileExists(atPath: fixture.directory + "/x.svg"))
        let track = try CLI.run(["render", Self.samples + "/morning-run.gpx", "-o", svg, "--track", "2"])
        #expect(track.status == 1 && track.stderr.contains("has 1 track(s), not 2"), "\(track.stderr)")
        let notGPX = try fixture.write("notes.gpx", "hello")
        let broken = try CLI.run(["render", notGPX, "-o", svg])
        #expect(broken.status == 1 && broken.stderr.contains("notes.gpx:1:1"), "\(broken.stderr)")
    }
}
