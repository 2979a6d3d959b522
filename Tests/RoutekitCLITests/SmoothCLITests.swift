import Foundation
import RouteKit
import RouteKitGPX
import Testing

@Suite(
    "routekit smooth",
    .enabled(if: CLI.executable != nil, "the routekit executable was not found next to the tests"))
struct SmoothCLITests {
    @Test("smooth file to file: a subsequence of the track's points with their values, valid GPX, JSON metrics")
    func fileToFile() throws {
        let fixture = try StoreFixture()
        defer { fixture.remove() }
        let input = try fixture.write("in.gpx", SyntheticGPX.text(name: "run", points: 3000))
        let output = fixture.directory + "/out.gpx"
        let result = try CLI.run(["smooth", input, "-o", output, "--json", "--tolerance", "3"])
        #expect(result.status == 0, "\(result.stderr)")
        let report = try #require(try StoreCLI.objects(result.stdout).first)
        #expect(
            Set(report.keys) == [
                "route", "newRoute", "syncVersion", "pointsIn", "pointsOut", "maxDeviationMetres",
                "smoothingRmsMetres", "lengthInMetres", "lengthOutMetres",
            ])
        #expect(report["pointsIn"] as? Int == 3000)
        let pointsOut = try #require(report["pointsOut"] as? Int)
        #expect(pointsOut < 3000 && pointsOut >= 2)  // the synthetic track is nearly straight
        #expect((report["maxDeviationMetres"] as? Double ?? 99) <= 3.001)
        let before = try GPXDocument(path: input).tracks[0].segments.flatMap(\.points)
        let after = try GPXDocument(path: output).tracks[0].segments.flatMap(\.points)
        #expect(after.count == pointsOut)
        // A subsequence by time, each with its original heart rate and time.
        var i = 0
        for p in after {
            while i < before.count && before[i].location.timestamp != p.location.timestamp { i += 1 }
            #expect(i < before.count, "an output point's time is not an input point's")
            if i < before.count { #expect(p.values[.heartRate] == before[i].values[.heartRate]) }
        }
        #expect(after.first?.location.timestamp == before.first?.location.timestamp)
        #expect(after.last?.location.timestamp == before.last?.location.timestamp)
        // Without simplification every point stays, coordinates smoothed, every other field as it was.
        let smoothed = try CLI.run(["smooth", input, "-o", output, "--stages", "outliers,smoothing"])
        #expect(smoothed.status == 0, "\(smoothed.stderr)")
        let all = try GPXDocument(path: output).tracks[0].segments.flatMap(\.points)
        #expect(all.count == 3000)
        #expect(zip(all, before).allSatisfy { $0.location.timestamp == $1.location.timestamp })
        #expect(zip(all, before).allSatisfy { $0.values == $1.values })
        #expect(zip(all, before).contains { $0.location.latitude != $1.location.latitude }, "coordinates smoothed")
        let missing = try CLI.run(["smooth", fixture.directory + "/none.gpx", "-o", output])
        #expect(missing.status == 1)
        let badStage = try CLI.run(["smooth", input, "-o", output, "--stages", "sharpening"])
        #expect(badStage.status == 64)
    }
}
