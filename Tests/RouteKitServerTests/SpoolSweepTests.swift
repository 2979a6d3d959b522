#if Server
    import Foundation
    import Testing

    @testable import RouteKitServer

    @Suite("temporary files of stopped servers")
    struct SpoolSweepTests {
        @Test("a new server removes the upload folders and exports of processes that are gone, and nothing else")
        func sweep() throws {
            let fixture = try Fixture()
            // A process that has ended: its id names no running process (ids are reused only after wrapping).
            let ended = Process()
            ended.executableURL = URL(fileURLWithPath: "/bin/true")
            try ended.run()
            ended.waitUntilExit()
            let gone = ended.processIdentifier
            let uuid = { UUID().uuidString.lowercased() }
            let host = Spool.host
            let stale = [
                "routekit-upload-\(host)-\(gone)-\(uuid())", "routekit-export-\(host)-\(gone)-\(uuid()).gpx",
                "routekit-export-\(host)-\(gone)-\(uuid()).geojson", "routekit-export-\(host)-\(gone)-\(uuid()).zip",
                "routekit-export-\(host)-\(gone)-\(uuid()).entry",
            ]
            let kept = [
                Spool.name(Spool.uploadPrefix),  // this process (a server in it may be uploading)
                "routekit-upload-\(host)-1-\(uuid())",  // a running process
                "routekit-upload-0badc0de-\(gone)-\(uuid())",  // another host's process
                "routekit-upload-\(host)-\(gone)-\(uuid()).bak",  // not exactly our name
                "routekit-export-\(host)-\(gone)-\(uuid()).txt", "routekit-upload-\(uuid())",
                "routekit-upload-\(host)-\(gone)-notes", "store.sqlite-extra",
            ]
            for name in stale + kept {
                let path = fixture.folder + "/" + name
                if name.contains(".") || name.contains("-extra") {
                    try Data("x".utf8).write(to: URL(fileURLWithPath: path))
                } else {
                    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
                    try Data("<gpx/>".utf8).write(to: URL(fileURLWithPath: path + "/upload.gpx"))
                }
            }
            #expect(Spool.owner(of: Spool.name(Spool.uploadPrefix)) == getpid())
            #expect(Spool.owner(of: Spool.name(Spool.exportPrefix, suffix: ".csv")) == getpid())
            _ = fixture.app()
            let left = Set(try FileManager.default.contentsOfDirectory(atPath: fixture.folder))
            for name in stale { #expect(!left.contains(name), "\(name) removed") }
            for name in kept { #expect(left.contains(name), "\(name) kept") }
        }
    }
#endif
