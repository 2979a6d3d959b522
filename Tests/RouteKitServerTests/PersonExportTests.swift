#if Server
    import AsyncHTTPClient
    import Foundation
    import Hummingbird
    import HummingbirdTesting
    import NIOCore
    import NIOHTTP1
    import RouteKit
    import RouteKitSQLite
    import RouteKitServer
    import RouteKitTesting
    import Testing
    import ZIPFoundation

    /// `GET /v1/export` over a real socket: the token's person's archive.
    @Suite("routekit serve: a person's archive (GET /v1/export)")
    struct PersonExportTests {
        /// A GPX file of 30 points a second apart from `hour`:10:00, each with a heart rate.
        static func heartRateGPX(name: String, hour: Int) -> String {
            var s = """
                <?xml version="1.0"?><gpx version="1.1" creator="t" xmlns="http://www.topografix.com/GPX/1/1" \
                xmlns:gpxtpx="http://www.garmin.com/xmlschemas/TrackPointExtension/v1"><trk><name>\(name)</name><trkseg>
                """
            for i in 0..<30 {
                let time = String(format: "2024-05-01T%02d:10:%02dZ", hour, i)
                s +=
                    "<trkpt lat=\"\(47.0 + Double(i) * 0.0001)\" lon=\"8.5\"><time>\(time)</time><extensions>"
                    + "<gpxtpx:TrackPointExtension><gpxtpx:hr>\(120 + i)</gpxtpx:hr></gpxtpx:TrackPointExtension>"
                    + "</extensions></trkpt>\n"
            }
            return s + "</trkseg></trk></gpx>\n"
        }

        /// A new folder.
        static func folder(_ name: String) throws -> String {
            let path = FileManager.default.temporaryDirectory.appendingPathComponent(
                "routekit-\(name)-\(UUID().uuidString)"
            ).path
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
            return path
        }

        static func upload(_ port: Int, _ token: String, _ text: String, name: String) async throws -> Int {
            var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)/v1/uploads?name=\(name)")
            request.method = .POST
            request.headers.add(name: "Authorization", value: "Bearer \(token)")
            request.body = .bytes(ByteBuffer(string: text))
            let response = try await HTTPClient.shared.execute(request, timeout: .seconds(60))
            _ = try await response.body.collect(upTo: 1 << 20)
            return Int(response.status.code)
        }

        /// `GET /v1/export` with `token`: the status, the headers wanted, and the body.
        static func export(_ port: Int, _ token: String) async throws -> (
            status: Int, contentType: String?, disposition: String?, length: String?, body: Data
        ) {
            var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)/v1/export")
            request.headers.add(name: "Authorization", value: "Bearer \(token)")
            let response = try await HTTPClient.shared.execute(request, timeout: .seconds(60))
            let body = try await response.body.collect(upTo: 64 << 20)
            return (
                Int(response.status.code), response.headers.first(name: "Content-Type"),
                response.headers.first(name: "Content-Disposition"), response.headers.first(name: "Content-Length"),
                Data(body.readableBytesView)
            )
        }

        /// An entry's bytes (ZIPFoundation checks its CRC-32 as it extracts).
        static func contents(_ archive: Archive, _ path: String) throws -> Data {
            let entry = try #require(archive[path], "no entry \(path)")
            var data = Data()
            _ = try archive.extract(entry) { data.append($0) }
            return data
        }

        static func manifest(_ archive: Archive) throws -> [String: Any] {
            let data = try contents(archive, "manifest.json")
            return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        }

        @Test(
            "the archive arrives as a valid zip (two workouts, their GPX and heart rate, a manifest), the spool folder is empty afterwards; another person's token gets their own, empty archive; an admin token 403"
        )
        func archive() async throws {
            let storeFolder = try Self.folder("export-store")
            let spool = try Self.folder("export-spool")
            defer {
                try? FileManager.default.removeItem(atPath: storeFolder)
                try? FileManager.default.removeItem(atPath: spool)
            }
            let f = try Fixture(storeFolder: storeFolder, spool: spool)
            let token = try await f.token()
            // A token of another person, and an admin token (no person).
            var otherToken = TokenText.make(name: "other", source: try Source(name: "phone"), scopes: [.read])
            let other = PersonID(UUID())
            otherToken.token.person = other
            let someoneElse = otherToken
            try await f.store.saveToken(someoneElse.token)
            var adminToken = TokenText.make(name: "admin", source: try Source(name: "ops"), scopes: [.admin])
            adminToken.token.person = nil
            let admin = adminToken
            try await f.store.saveToken(admin.token)
            // A token of the default person that may read another source only.
            let watchOnly = try await f.token(scopes: [.read], readable: ["watch"])

            try await f.app().test(.live) { client in
                let port = try #require(client.port)
                for (name, hour) in [("morning", 6), ("evening", 18)] {
                    let text = Self.heartRateGPX(name: name, hour: hour)
                    let status = try await Self.upload(port, token, text, name: name + ".gpx")
                    #expect(status == 201)
                }

                let answer = try await Self.export(port, token)
                #expect(answer.status == 200)
                #expect(answer.contentType == "application/zip")
                let disposition = answer.disposition ?? ""
                #expect(disposition.hasPrefix("attachment; filename=\"routekit-00000000-"), "\(disposition)")
                #expect(answer.length == String(answer.body.count))

                let archive = try Archive(data: answer.body, accessMode: .read)
                let names = archive.map(\.path)
                #expect(names.count == 7, "\(names)")
                #expect(names.last == "manifest.json")
                let manifest = try Self.manifest(archive)
                #expect(manifest["person"] as? String == PersonID.default.description)
                let counts = try #require(manifest["counts"] as? [String: Any])
                #expect(counts["workouts"] as? Int == 2)
                #expect(counts["samples"] as? Int == 60)
                let entries = try #require(manifest["entries"] as? [[String: Any]])
                for entry in entries {
                    let name = try #require(entry["path"] as? String)
                    let data = try Self.contents(archive, name)
                    #expect(entry["bytes"] as? Int == data.count, "\(name)")
                    if name.hasSuffix(".gpx") {
                        let problem = try GPXSchema.problem(Array(data), name: "route.gpx")
                        #expect(problem == nil)
                    }
                    if name.hasSuffix("heartRate.ndjson") {
                        let lines = String(decoding: data, as: UTF8.self).split(separator: "\n")
                        #expect(lines.count == 30, "\(name)")
                    }
                }

                // Nothing of the archive is left in the spool folder once it was sent.
                let left = try FileManager.default.contentsOfDirectory(atPath: spool)
                #expect(left.isEmpty, "\(left)")

                // Another person sees their own store: empty.
                let theirs = try await Self.export(port, someoneElse.text)
                #expect(theirs.status == 200)
                let theirArchive = try Archive(data: theirs.body, accessMode: .read)
                let theirNames = theirArchive.map(\.path)
                #expect(theirNames == ["manifest.json"])
                let theirManifest = try Self.manifest(theirArchive)
                #expect(theirManifest["person"] as? String == other.description)

                // A token that may read another source only: nothing of the phone's.
                let limited = try await Self.export(port, watchOnly)
                #expect(limited.status == 200)
                let limitedArchive = try Archive(data: limited.body, accessMode: .read)
                let limitedNames = limitedArchive.map(\.path)
                #expect(limitedNames == ["manifest.json"])
                let limitedManifest = try Self.manifest(limitedArchive)
                #expect(limitedManifest["sources"] as? [String] == ["watch"])

                // An admin token reads no one's objects; no token is 401.
                let refused = try await Self.export(port, admin.text)
                #expect(refused.status == 403)
                var anonymous = HTTPClientRequest(url: "http://127.0.0.1:\(port)/v1/export")
                anonymous.method = .GET
                let unauthenticated = try await HTTPClient.shared.execute(anonymous, timeout: .seconds(30))
                #expect(unauthenticated.status.code == 401)
                _ = try await unauthenticated.body.collect(upTo: 1 << 20)

                let afterAll = try FileManager.default.contentsOfDirectory(atPath: spool)
                #expect(afterAll.isEmpty, "\(afterAll)")
            }
        }
    }
#endif
