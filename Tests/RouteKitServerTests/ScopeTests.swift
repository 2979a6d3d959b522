#if Server
    import AsyncHTTPClient
    import Foundation
    import Hummingbird
    import HummingbirdTesting
    import NIOCore
    import NIOHTTP1
    import RouteKit
    import RouteKitServer
    import RouteKitSQLite
    import RouteKitTesting
    import Testing
    import ZIPFoundation

    @Suite("API token scopes narrowed per object type: read:workouts, read:routes, read:heartRate, …")
    struct ScopeParsingTests {
        @Test("the stored text of read, write and admin keeps its meaning; narrowed scopes sort after the plain ones")
        func storedText() throws {
            let old = try APIToken.scopes(from: "read,write,admin")
            let expected: Set<APIScope> = [.read, .write, .admin]
            #expect(old == expected)
            let token = APIToken(
                id: UUID(), name: "t", source: try Source(name: "phone"), scopes: old,
                secretHash: String(repeating: "ab", count: 32), created: Date())
            #expect(token.scopesText == "read,write,admin")
            let narrowed = APIToken(
                id: UUID(), name: "t", source: try Source(name: "phone"),
                scopes: [.writing(.routes), .reading(.quantity(.heartRate)), .read, .reading(.workouts)],
                secretHash: String(repeating: "ab", count: 32), created: Date())
            #expect(narrowed.scopesText == "read,read:workouts,read:heartRate,write:routes")
            let again = try APIToken.scopes(from: narrowed.scopesText)
            #expect(again == narrowed.scopes)
            // Spaces separate words too (a JWT's habit), empty words are nothing.
            let spaced = try APIToken.scopes(from: "read:routes  read:power,")
            let spacedExpected: Set<APIScope> = [.reading(.routes), .reading(.quantity(.power))]
            #expect(spaced == spacedExpected)
        }

        @Test("a word that is no scope is an invalidArgument error naming the word")
        func unknownWords() {
            for word in ["read:speed", "admin:routes", "root", "read:", "Read"] {
                do throws(RouteKitError) {
                    _ = try TokenGrant(parsing: "read,\(word)")
                    Issue.record("'\(word)' was taken for a scope")
                } catch {
                    #expect(error.code == .invalidArgument, "\(word)")
                    #expect(error.message.contains("'\(word)'"), "\(error.message)")
                }
            }
        }

        @Test("read means every type; read:TYPE one; plain read and write are needed where a door asks for them")
        func questions() throws {
            let narrowed = try TokenGrant(parsing: "read:workouts,read:routes")
            #expect(narrowed.mayRead(.routes))
            #expect(narrowed.mayRead(.workouts))
            #expect(!narrowed.mayRead(.effort))
            #expect(!narrowed.mayRead(quantity: .heartRate))
            #expect(!narrowed.mayWrite(.workouts))
            #expect(narrowed.readsAnything)
            #expect(!narrowed.readsEverything)
            #expect(!narrowed.allows(.read))
            #expect(narrowed.allows(.reading(.routes)))
            let full = try TokenGrant(parsing: "read")
            #expect(full.mayRead(quantity: .heartRate))
            #expect(full.mayRead(quantity: .power))
            #expect(full.mayRead(.effort))
            #expect(full.readsEverything)
            #expect(!full.writesAnything)
            #expect(full.allows(.reading(.quantity(.depth))))
            let writer = try TokenGrant(parsing: "write:heartRate")
            #expect(writer.mayWrite(quantity: .heartRate))
            #expect(!writer.mayWrite(quantity: .power))
            #expect(!writer.readsAnything)
            let quantities = QuantityType.all.map { "read:" + $0.identifier }
            let words = ["read:workouts", "read:routes", "read:effort"] + quantities
            let every = try TokenGrant(parsing: words.joined(separator: ","))
            #expect(every.readsEverything)
        }

        @Test("what a grant may not read is left out: recorded totals of unreadable quantities, their zone settings")
        func redaction() throws {
            let grant = try TokenGrant(parsing: "read:workouts,read:power")
            let lap = WorkoutEvent(
                kind: .lap, start: nil,
                metadata: [MetadataKey.averageHeartRate: .double(150), MetadataKey.averagePower: .double(210)])
            let workout = Workout(
                activityType: .cycling, start: nil, end: nil, source: try Source(name: "phone"), events: [lap],
                metadata: [MetadataKey.maximumHeartRate: .double(181), "name": .string("ride")])
            let seen = grant.redacted(workout)
            #expect(seen.metadata[MetadataKey.maximumHeartRate] == nil)
            #expect(seen.metadata["name"] == .string("ride"))
            let lapSeen = try #require(seen.events.first)
            #expect(lapSeen.metadata[MetadataKey.averageHeartRate] == nil)
            #expect(lapSeen.metadata[MetadataKey.averagePower] == .double(210))
            let settings = ZoneSettings(maximumHeartRate: 190, restingHeartRate: 50, age: 40, ftp: 250)
            let settingsSeen = grant.redacted(settings)
            #expect(settingsSeen.maximumHeartRate == nil)
            #expect(settingsSeen.age == nil)
            #expect(settingsSeen.ftp == 250)
            let full = TokenGrant([.read])
            #expect(full.redacted(workout) == workout)
        }
    }

    /// The doors of `routekit serve` over a real socket, for a token that may read workouts and routes but not heart
    /// rate, beside one with plain `read`.
    @Suite("routekit serve: scopes narrowed per type, over a socket")
    struct ScopeServerTests {
        /// An answer: status, `ETag`, body.
        struct Answer {
            var status: Int
            var etag: String?
            var body: Data

            var text: String { String(decoding: body, as: UTF8.self) }
            var object: [String: Any] {
                (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] ?? [:]
            }
        }

        static func send(
            _ port: Int, _ token: String, _ path: String, method: NIOHTTP1.HTTPMethod = .GET, body: String? = nil
        ) async throws -> Answer {
            var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)\(path)")
            request.method = method
            request.headers.add(name: "Authorization", value: "Bearer \(token)")
            if let body {
                request.headers.add(name: "Content-Type", value: "application/json")
                request.body = .bytes(ByteBuffer(string: body))
            }
            let response = try await HTTPClient.shared.execute(request, timeout: .seconds(60))
            let bytes = try await response.body.collect(upTo: 64 << 20)
            return Answer(
                status: Int(response.status.code), etag: response.headers.first(name: "ETag"),
                body: Data(bytes.readableBytesView))
        }

        /// The workout and route an upload's answer names.
        static func uploaded(_ answer: Answer) throws -> (workout: String, route: String) {
            let results = try #require(answer.object["results"] as? [[String: Any]])
            let routes = try #require(results.first?["routes"] as? [[String: Any]])
            let first = try #require(routes.first)
            let workout = try #require(first["workout"] as? String)
            let route = try #require(first["route"] as? String)
            return (workout, route)
        }

        /// Uploads a run with heart rate (`run.gpx`) with `token`: the answer (201 expected), its workout and route.
        static func uploadRun(_ port: Int, _ token: String) async throws -> (
            answer: Answer, workout: String, route: String
        ) {
            let gpx = PersonExportTests.heartRateGPX(name: "run", hour: 6)
            let upload = try await send(port, token, "/v1/uploads?name=run.gpx", method: .POST, body: gpx)
            #expect(upload.status == 201, "\(upload.text)")
            let (workout, route) = try uploaded(upload)
            return (upload, workout, route)
        }

        @Test(
            "read:workouts read:routes on a run with heart rate: stats without heart-rate figures or zones, series 404, GPX without hr, feed and archive without the series; read still sees all"
        )
        func withoutHeartRate() async throws {
            let storeFolder = try PersonExportTests.folder("scopes-store")
            let spool = try PersonExportTests.folder("scopes-spool")
            defer {
                try? FileManager.default.removeItem(atPath: storeFolder)
                try? FileManager.default.removeItem(atPath: spool)
            }
            let f = try Fixture(storeFolder: storeFolder, spool: spool)
            let writer = try await f.token(scopes: [.write])
            let reader = try await f.token(scopes: [.read])
            let narrowed = try await f.token(scopes: [.reading(.workouts), .reading(.routes)])
            let heartOnly = try await f.token(scopes: [.reading(.quantity(.heartRate))])

            try await f.app().test(.live) { client in
                let port = try #require(client.port)
                let (_, workout, route) = try await Self.uploadRun(port, writer)

                // Statistics: every figure of the route, none of heart rate (not even zones asked for).
                let fullStats = try await Self.send(port, reader, "/v1/workouts/\(workout)/stats?maxHr=190")
                #expect(fullStats.status == 200)
                let fullHeartRate = fullStats.object["heartRate"] as? [String: Any]
                #expect(fullHeartRate?["max"] as? Double == 149)
                let fullZones = fullStats.object["zones"] as? [[String: Any]]
                #expect(fullZones?.count == 5)
                let stats = try await Self.send(port, narrowed, "/v1/workouts/\(workout)/stats?maxHr=190")
                #expect(stats.status == 200)
                let body = stats.object
                #expect((body["distanceMetres"] as? Double ?? 0) > 100)
                #expect(body["heartRate"] is NSNull)
                #expect(body["zones"] is NSNull)
                #expect(body["zoneConfiguration"] is NSNull)

                // Series: not listed, and 404 as if absent.
                let fullTypes = try await Self.send(port, reader, "/v1/workouts/\(workout)/series")
                #expect(fullTypes.text.contains("heartRate"))
                let types = try await Self.send(port, narrowed, "/v1/workouts/\(workout)/series")
                #expect(types.status == 200)
                let listed = types.object["types"] as? [Any]
                #expect(listed?.isEmpty == true)
                let fullSeries = try await Self.send(port, reader, "/v1/workouts/\(workout)/series/heartRate")
                #expect(fullSeries.status == 200)
                #expect(fullSeries.text.split(separator: "\n").count == 30)
                let series = try await Self.send(port, narrowed, "/v1/workouts/\(workout)/series/heartRate")
                #expect(series.status == 404)
                let absent = try await Self.send(port, reader, "/v1/workouts/\(workout)/series/power")
                #expect(absent.status == 404)

                // The GPX export: the route's points, no heart rate; a tag of its own.
                let fullGPX = try await Self.send(port, reader, "/v1/routes/\(route)/export?format=gpx")
                #expect(fullGPX.status == 200)
                #expect(fullGPX.text.contains("<gpxtpx:hr>"))
                let exported = try await Self.send(port, narrowed, "/v1/routes/\(route)/export?format=gpx")
                #expect(exported.status == 200)
                #expect(exported.text.contains("<trkpt"))
                #expect(!exported.text.contains("<gpxtpx:hr>"))
                #expect(exported.etag != nil)
                #expect(exported.etag != fullGPX.etag)

                // The profile: no heart rate.
                let fullProfile = try await Self.send(port, reader, "/v1/routes/\(route)/profile")
                #expect(fullProfile.object["heartRate"] is [String: Any])
                let profile = try await Self.send(port, narrowed, "/v1/routes/\(route)/profile")
                #expect(profile.status == 200)
                #expect(profile.object["heartRate"] is NSNull)
                #expect(profile.etag != fullProfile.etag)

                // The feed: the workout and the route, never the series.
                let fullFeed = try await Self.send(port, reader, "/v1/changes?types=all")
                let fullObjects = fullFeed.object["addedObjects"] as? [[String: Any]] ?? []
                #expect(fullObjects.contains { $0["type"] as? String == "series" })
                let feed = try await Self.send(port, narrowed, "/v1/changes?types=all")
                #expect(feed.status == 200)
                let objects = feed.object["addedObjects"] as? [[String: Any]] ?? []
                #expect(objects.contains { $0["type"] as? String == "workout" })
                #expect(!objects.contains { $0["type"] as? String == "series" })
                let added = feed.object["added"] as? [Any]
                #expect(added?.count == 1)
                // Its anchors are sealed: they cannot count the commits of what it may not read.
                let sealed = feed.object["anchor"] as? String ?? ""
                #expect(sealed.hasPrefix("s1."))
                let plain = fullFeed.object["anchor"] as? String ?? ""
                #expect(!plain.hasPrefix("s1."))

                // The archive: the workout and its route's GPX, no series entry and no hr in the GPX.
                let fullArchive = try Archive(
                    data: try await Self.send(port, reader, "/v1/export").body, accessMode: .read)
                let fullNames = fullArchive.map(\.path)
                #expect(fullNames.contains { $0.hasSuffix("series/heartRate.ndjson") })
                let answer = try await Self.send(port, narrowed, "/v1/export")
                #expect(answer.status == 200)
                let archive = try Archive(data: answer.body, accessMode: .read)
                let names = archive.map(\.path)
                #expect(names.contains("workouts/\(workout)/workout.json"), "\(names)")
                #expect(!names.contains { $0.contains("/series/") }, "\(names)")
                let gpxName = "workouts/\(workout)/route-\(route).gpx"
                #expect(names.contains(gpxName), "\(names)")
                let archivedGPX = String(decoding: try PersonExportTests.contents(archive, gpxName), as: UTF8.self)
                #expect(archivedGPX.contains("<trkpt"))
                #expect(!archivedGPX.contains("<gpxtpx:hr>"))
                let manifest = try PersonExportTests.manifest(archive)
                let counts = manifest["counts"] as? [String: Any]
                #expect(counts?["samples"] as? Int == 0)

                // A token of heart rate alone lists no workouts, reads no route; its feed is its series.
                let refused = try await Self.send(port, heartOnly, "/v1/workouts")
                #expect(refused.status == 403)
                #expect(refused.text.contains("read:workouts"))
                let noRoute = try await Self.send(port, heartOnly, "/v1/routes/\(route)")
                #expect(noRoute.status == 403)
                let heartFeed = try await Self.send(port, heartOnly, "/v1/changes?types=all")
                #expect(heartFeed.status == 200)
                let heartObjects = heartFeed.object["addedObjects"] as? [[String: Any]] ?? []
                #expect(heartObjects.count == 1)
                #expect(heartObjects.first?["quantity"] as? String == "heartRate")
                let heartRoutes = heartFeed.object["added"] as? [Any]
                #expect(heartRoutes?.isEmpty == true)

                // Writes: an upload needs write:workouts and write:routes.
                let readerUpload = try await Self.send(
                    port, narrowed, "/v1/uploads?name=b.gpx", method: .POST,
                    body: PersonExportTests.heartRateGPX(name: "run", hour: 6))
                #expect(readerUpload.status == 403)
            }
        }

        /// The `warnings` of an upload's first result.
        static func warnings(_ answer: Answer) -> [String] {
            let results = answer.object["results"] as? [[String: Any]]
            return results?.first?["warnings"] as? [String] ?? []
        }

        @Test(
            "an upload without write:heartRate stores the workout and every point of its route but no heart rate, and says so; write keeps it"
        )
        func uploadWithoutWritingHeartRate() async throws {
            let f = try Fixture()
            let narrowed = try await f.token(source: "watch", scopes: [.read, .writing(.workouts), .writing(.routes)])
            let full = try await f.token(source: "phone", scopes: [.read, .write])
            try await f.app().test(.live) { client in
                let port = try #require(client.port)
                let (upload, workout, route) = try await Self.uploadRun(port, narrowed)
                let warnings = Self.warnings(upload)
                let leftOut = "heartRate samples and totals were left out: this token may not write heartRate"
                #expect(warnings.filter { $0 == leftOut }.count == 1, "\(warnings)")

                // The route whole, its points without heart rate; the workout without a heart-rate series.
                let locations = try await Self.send(port, narrowed, "/v1/routes/\(route)/locations")
                #expect(locations.status == 200)
                #expect(locations.text.split(separator: "\n").count == 30)
                let types = try await Self.send(port, narrowed, "/v1/workouts/\(workout)/series")
                #expect(types.status == 200)
                let listed = types.object["types"] as? [Any]
                #expect(listed?.isEmpty == true, "\(types.text)")
                let exported = try await Self.send(port, narrowed, "/v1/routes/\(route)/export?format=gpx")
                #expect(exported.text.contains("<trkpt"))
                #expect(!exported.text.contains("<gpxtpx:hr>"))

                // The same file with plain write (another source: not the same track) keeps its heart rate.
                let gpx = PersonExportTests.heartRateGPX(name: "run", hour: 6)
                let kept = try await Self.send(port, full, "/v1/uploads?name=run.gpx", method: .POST, body: gpx)
                #expect(kept.status == 201, "\(kept.text)")
                #expect(!Self.warnings(kept).contains { $0.contains("left out") }, "\(Self.warnings(kept))")
                let (keptWorkout, _) = try Self.uploaded(kept)
                let keptTypes = try await Self.send(port, full, "/v1/workouts/\(keptWorkout)/series")
                #expect(keptTypes.text.contains("heartRate"), "\(keptTypes.text)")
            }
        }

        @Test(
            "read:workouts without read:routes: a workout's route and location counts are null, no route id in it, its stats or splits; read sees them"
        )
        func withoutReadingRoutes() async throws {
            let f = try Fixture()
            let writer = try await f.token(scopes: [.write])
            let reader = try await f.token(scopes: [.read])
            let workoutsOnly = try await f.token(scopes: [.reading(.workouts)])
            try await f.app().test(.live) { client in
                let port = try #require(client.port)
                let (_, workout, route) = try await Self.uploadRun(port, writer)

                // The list.
                let fullList = try await Self.send(port, reader, "/v1/workouts")
                let fullShown = (fullList.object["workouts"] as? [[String: Any]])?.first
                #expect(fullShown?["routes"] as? Int == 1)
                #expect(fullShown?["locations"] as? Int == 30)
                let list = try await Self.send(port, workoutsOnly, "/v1/workouts")
                #expect(list.status == 200)
                let shown = (list.object["workouts"] as? [[String: Any]])?.first
                #expect(shown?["uuid"] as? String == workout)
                #expect(shown?["routes"] is NSNull, "\(list.text)")
                #expect(shown?["locations"] is NSNull, "\(list.text)")

                // The workout.
                let fullDetail = try await Self.send(port, reader, "/v1/workouts/\(workout)")
                #expect(fullDetail.text.contains(route))
                let detail = try await Self.send(port, workoutsOnly, "/v1/workouts/\(workout)")
                #expect(detail.status == 200)
                let detailRoutes = detail.object["routes"] as? [Any]
                #expect(detailRoutes?.isEmpty == true)
                let inner = detail.object["workout"] as? [String: Any]
                #expect(inner?["routes"] is NSNull)
                #expect(inner?["locations"] is NSNull)
                #expect(!detail.text.contains(route))

                // Statistics and splits: the workout's numbers, not the route they come from.
                let fullStats = try await Self.send(port, reader, "/v1/workouts/\(workout)/stats")
                #expect(fullStats.object["route"] as? String == route)
                let stats = try await Self.send(port, workoutsOnly, "/v1/workouts/\(workout)/stats")
                #expect(stats.status == 200)
                #expect((stats.object["distanceMetres"] as? Double ?? 0) > 100)
                #expect(stats.object["route"] is NSNull)
                #expect(!stats.text.contains(route))
                let fullSplits = try await Self.send(port, reader, "/v1/workouts/\(workout)/splits?by=km")
                #expect(fullSplits.object["route"] as? String == route)
                let splits = try await Self.send(port, workoutsOnly, "/v1/workouts/\(workout)/splits?by=km")
                #expect(splits.status == 200)
                #expect(splits.object["route"] is NSNull)
                #expect(!splits.text.contains(route))
            }
        }

        @Test("the admin API makes a person's token with narrowed scopes, and refuses a word that is no scope, naming it")
        func adminTokens() async throws {
            let f = try Fixture()
            var made = TokenText.make(name: "admin", source: try Source(name: "ops"), scopes: [.admin])
            made.token.person = nil
            let admin = made
            try await f.store.saveToken(admin.token)
            try await f.app().test(.live) { client in
                let port = try #require(client.port)
                let person = try await Self.send(port, admin.text, "/v1/people", method: .POST, body: #"{"name": "Ana"}"#)
                #expect(person.status == 201, "\(person.text)")
                let id = try #require(person.object["id"] as? String)

                let bad = try await Self.send(
                    port, admin.text, "/v1/people/\(id)/tokens", method: .POST,
                    body: #"{"source": "map", "scopes": ["read:workouts", "read:speed"]}"#)
                #expect(bad.status == 400)
                #expect(bad.text.contains("'read:speed'"), "\(bad.text)")
                let adminScope = try await Self.send(
                    port, admin.text, "/v1/people/\(id)/tokens", method: .POST,
                    body: #"{"source": "map", "scopes": ["admin"]}"#)
                #expect(adminScope.status == 400)

                let created = try await Self.send(
                    port, admin.text, "/v1/people/\(id)/tokens", method: .POST,
                    body: #"{"source": "map", "scopes": ["read:routes", "read:workouts"]}"#)
                #expect(created.status == 201, "\(created.text)")
                let scopes = created.object["scopes"] as? [String]
                #expect(scopes == ["read:workouts", "read:routes"])
                let token = try #require(created.object["token"] as? String)
                let uuid = try #require(UUID(uuidString: id))
                let stored = try await f.store.tokens(of: PersonID(uuid))
                let storedScopes = stored.first?.scopes ?? []
                let wanted: Set<APIScope> = [.reading(.workouts), .reading(.routes)]
                #expect(storedScopes == wanted)

                let workouts = try await Self.send(port, token, "/v1/workouts")
                #expect(workouts.status == 200)
                let zones = try await Self.send(port, token, "/v1/zones/heartRate")
                #expect(zones.status == 403)
                let upload = try await Self.send(
                    port, token, "/v1/uploads?name=a.gpx", method: .POST, body: gpx(name: "a"))
                #expect(upload.status == 403)
            }
        }
    }
#endif
