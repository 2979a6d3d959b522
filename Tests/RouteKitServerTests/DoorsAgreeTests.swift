#if Server
    import Foundation
    import HTTPTypes
    import Hummingbird
    import HummingbirdTesting
    import NIOCore
    import RouteKit
    import RouteKitSQLite
    import RouteKitServer
    import RouteKitTesting
    import Testing
    import ZIPFoundation

    @Suite("one application behind every door")
    struct DoorsAgreeTests {
        /// A run of 120 fixes a second apart at about 3 m/s, with two GPS spikes (about 1 km off for one fix each).
        static func spikyRun() -> String {
            var s = """
                <?xml version="1.0"?><gpx version="1.1" creator="t" xmlns="http://www.topografix.com/GPX/1/1">\
                <trk><name>spiky</name><type>running</type><trkseg>
                """
            for i in 0..<120 {
                let lat = 47.0 + Double(i) * 0.000027 + (i == 40 || i == 90 ? 0.01 : 0)
                let minute = 10 + i / 60
                let second = i % 60
                s += "<trkpt lat=\"\(lat)\" lon=\"8.5\"><time>2024-05-01T06:\(minute):\(second < 10 ? "0" : "")\(second)Z</time></trkpt>\n"
            }
            return s + "</trkseg></trk></gpx>\n"
        }

        /// The figure of the caption: `120 points · 0.36 km`.
        static func captionKilometres(_ svg: String) -> String? {
            guard let range = svg.range(of: #"points · [0-9.]+ km"#, options: .regularExpression) else { return nil }
            return String(svg[range]).replacingOccurrences(of: "points · ", with: "").replacingOccurrences(
                of: " km", with: "")
        }

        @Test(
            "a spiky run: stats and the workout list over HTTP and from the CLI, the pictures' captions, the web view's profile: one distance, no spike speed"
        )
        func spikyDistance() async throws {
            guard let binary = routekitBinary else {
                Issue.record("the routekit executable is not next to the test bundle; build with --build-tests")
                return
            }
            let f = try Fixture()
            let token = try await f.token()
            let (workout, route, httpDistance, httpMaxSpeed, httpCaption) = try await f.app().test(.router) { client in
                let result = try await client.execute(
                    uri: "/v1/uploads?name=spiky.gpx", method: .post, headers: auth(token),
                    body: ByteBuffer(string: Self.spikyRun())
                ) { r in
                    ((json(r.body)["results"] as? [[String: Any]])?.first?["routes"] as? [[String: Any]])?.first
                }
                let route = try #require(result?["route"] as? String)
                let workout = try #require(result?["workout"] as? String)
                let stats = try await client.execute(
                    uri: "/v1/workouts/\(workout)/stats", method: .get, headers: auth(token)
                ) { json($0.body) }
                let svg = try await client.execute(
                    uri: "/v1/routes/\(route)/picture", method: .get, headers: auth(token)
                ) { String(buffer: $0.body) }
                // The web view's numbers: the profile endpoint measures as the statistics do.
                let profile = try await client.execute(
                    uri: "/v1/routes/\(route)/profile?max=50", method: .get, headers: auth(token)
                ) { json($0.body) }
                #expect(profile["distanceMetres"] as? Double == stats["distanceMetres"] as? Double)
                // The list's figures (the web page's list reads them) are the statistics'.
                let list = try await client.execute(uri: "/v1/workouts", method: .get, headers: auth(token)) {
                    (json($0.body)["workouts"] as? [[String: Any]])?.first
                }
                #expect(list?["distanceMetres"] as? Double == stats["distanceMetres"] as? Double)
                #expect(list?["elapsedSeconds"] as? Double == stats["elapsedSeconds"] as? Double)
                #expect(list?["movingSeconds"] as? Double == stats["movingSeconds"] as? Double)
                let one = try await client.execute(
                    uri: "/v1/workouts/\(workout)", method: .get, headers: auth(token)
                ) { json($0.body)["workout"] as? [String: Any] }
                #expect(one?["distanceMetres"] as? Double == stats["distanceMetres"] as? Double)
                #expect(profile["locations"] as? Int == 120)
                let distances = profile["distance"] as? [Double] ?? []
                let speeds = (profile["speed"] as? [Any] ?? []).compactMap { $0 as? Double }
                #expect(distances.count == 50 && distances.first == 0, "\(distances.count)")
                #expect(distances == distances.sorted(), "distance only grows along the route")
                #expect(abs((distances.last ?? 0) - (profile["distanceMetres"] as? Double ?? -1)) < 0.05)
                #expect(!speeds.isEmpty && speeds.allSatisfy { $0 < 5 }, "no spike speed in the profile: \(speeds)")
                #expect(profile["heartRate"] is NSNull && profile["elevation"] is NSNull)
                return (
                    workout, route, stats["distanceMetres"] as? Double, stats["maxSpeed"] as? Double,
                    Self.captionKilometres(svg)
                )
            }
            let distance = try #require(httpDistance)
            // About 119 steps of 3 m: the spikes (1.1 km away and back) are not counted.
            #expect(distance > 300 && distance < 400, "\(distance)")
            #expect((httpMaxSpeed ?? 99) < 5, "no spike speed in the statistics")
            #expect(httpCaption == String(format: "%.2f", distance / 1000))

            let cli = try runChildProcess(binary, ["stats", "--store", f.folder + "/store.sqlite", "--json", workout])
            #expect(cli.status == 0, "\(cli.errorOutput)")
            let cliStats = try JSONSerialization.jsonObject(with: Data(cli.output.utf8)) as? [String: Any]
            #expect(cliStats?["distanceMetres"] as? Double == distance)
            let listed = try runChildProcess(binary, ["workouts", "--store", f.folder + "/store.sqlite", "--json"])
            #expect(listed.status == 0, "\(listed.errorOutput)")
            let cliWorkout = try JSONSerialization.jsonObject(with: Data(listed.output.utf8)) as? [String: Any]
            #expect(cliWorkout?["distanceMetres"] as? Double == distance, "\(listed.output)")
            #expect(cliWorkout?["elapsedSeconds"] as? Double == cliStats?["elapsedSeconds"] as? Double)
            let svgPath = f.folder + "/spiky.svg"
            let rendered = try runChildProcess(
                binary, ["render", "--store", f.folder + "/store.sqlite", route, "-o", svgPath])
            #expect(rendered.status == 0, "\(rendered.errorOutput)")
            let svg = try String(contentsOfFile: svgPath, encoding: .utf8)
            #expect(Self.captionKilometres(svg) == httpCaption)
            // The speed profile's top label is the statistics' speed, not a spike's (over 4,000 km/h).
            let gpxPath = f.folder + "/spiky.gpx"
            try Self.spikyRun().write(toFile: gpxPath, atomically: true, encoding: .utf8)
            let fromFile = try runChildProcess(binary, ["render", gpxPath, "-o", f.folder + "/file.svg"])
            #expect(fromFile.status == 0, "\(fromFile.errorOutput)")
            let fileSVG = try String(contentsOfFile: f.folder + "/file.svg", encoding: .utf8)
            #expect(Self.captionKilometres(fileSVG) == httpCaption, "a file's picture measures as the store's")
            for picture in [svg, fileSVG] {
                #expect(picture.contains("Speed (km/h)"))
                // The only numbers alone in a text are the speed axis (km/h) and the distance ticks (km): a spike's
                // speed would put one over 4,000 there.
                let numbers = picture.matches(of: #/>(-?[0-9]+(\.[0-9]+)?)</text>/#).compactMap { Double($0.output.1) }
                #expect(!numbers.isEmpty)
                #expect(numbers.allSatisfy { $0 < 60 }, "\(numbers)")
            }
        }

        /// Both doors' JSON of one object, compared as parsed values (key order and number spelling aside).
        static func same(_ a: Any?, _ b: Any?) -> Bool {
            guard let a = a as? NSObject, let b = b as? NSObject else { return false }
            return a.isEqual(b)
        }

        /// Both doors' lists of objects, compared object by object.
        static func same(list a: [Any], _ b: [Any]) -> Bool {
            a.count == b.count && zip(a, b).allSatisfy { same($0, $1) }
        }

        /// What `routekit ARGUMENTS` prints, one JSON value a line, parsed; an issue when it fails.
        static func cli(_ binary: URL, _ arguments: [String]) throws -> [Any] {
            let run = try runChildProcess(binary, arguments)
            #expect(run.status == 0, "routekit \(arguments.joined(separator: " ")): \(run.errorOutput)")
            return try run.output.split(separator: "\n").map { try JSONSerialization.jsonObject(with: Data($0.utf8)) }
        }

        /// The first JSON object `routekit ARGUMENTS` prints (empty when there is none).
        static func cliObject(_ binary: URL, _ arguments: [String]) throws -> [String: Any] {
            try cli(binary, arguments).first as? [String: Any] ?? [:]
        }

        /// A treadmill run of `source` (a workout without a route) saved in `store`; its uuid.
        static func treadmill(_ store: SQLiteStore, source: Source) async throws -> String {
            let workout = Workout(
                activityType: .running, start: Timestamp(iso8601: "2024-05-02T07:00:00Z"),
                end: Timestamp(iso8601: "2024-05-02T07:30:00Z"), source: source,
                metadata: ["name": .string("treadmill")])
            _ = try await store.saveWorkout(workout)
            return workout.id.uuidString.lowercased()
        }

        @Test("locations, workouts, routes and statistics: the same JSON from the CLI and over HTTP; one CSV header")
        func sameShapes() async throws {
            guard let binary = routekitBinary else {
                Issue.record("the routekit executable is not next to the test bundle; build with --build-tests")
                return
            }
            let f = try Fixture()
            let token = try await f.token()
            // A route with every location field, some absent on some points, and a time-less point.
            let source = try Source(name: "phone")
            let t0 = try #require(Timestamp(iso8601: "2024-05-01T06:00:00.250+02:00"))
            let workout = Workout(
                activityType: .cycling, start: t0, end: t0, source: source,
                events: [
                    WorkoutEvent(
                        kind: .lap, start: t0, end: t0.adding(seconds: 1),
                        metadata: [MetadataKey.totalDistance: .double(12.5), MetadataKey.lapTrigger: .string("manual")]),
                    WorkoutEvent(kind: .motionPaused, start: t0.adding(seconds: 1)),
                    WorkoutEvent(kind: .marker, start: t0, metadata: [MetadataKey.eventName: .string("user_marker")]),
                ], metadata: ["name": .string("every field")])
            _ = try await f.store.saveWorkout(workout)
            let builder = try await RouteBuilder(store: f.store, source: source, order: .insertion)
            try await builder.insert([
                Location(
                    latitude: 47.123456789, longitude: 8.5, timestamp: t0, altitude: 431.25, horizontalAccuracy: 4,
                    verticalAccuracy: 6.5, speed: 5.125, speedAccuracy: 0.5, course: 271.5, courseAccuracy: 12),
                Location(latitude: 47.1236, longitude: 8.5001, timestamp: t0.adding(seconds: 1), altitude: -3),
                Location(latitude: -0.000001, longitude: 179.9999999),
            ])
            let route = try await builder.finish(
                workout: workout, metadata: ["syncIdentifier": .string("every-field"), "syncVersion": .integer(1)]
            ).route.id.uuidString.lowercased()
            let id = workout.id.uuidString.lowercased()
            let store = f.folder + "/store.sqlite"

            let (lines, httpWorkout, httpRoute, httpStats, csv, httpSplits) = try await f.app().test(.router) { client in
                let lines = try await client.execute(
                    uri: "/v1/routes/\(route)/locations", method: .get, headers: auth(token)
                ) { String(buffer: $0.body).split(separator: "\n").map(String.init) }
                let workout = try await client.execute(uri: "/v1/workouts/\(id)", method: .get, headers: auth(token)) {
                    json($0.body)["workout"]
                }
                let routeObject = try await client.execute(
                    uri: "/v1/routes/\(route)", method: .get, headers: auth(token)
                ) { json($0.body) }
                let stats = try await client.execute(
                    uri: "/v1/workouts/\(id)/stats", method: .get, headers: auth(token)
                ) { json($0.body) }
                let csv = try await client.execute(
                    uri: "/v1/routes/\(route)/export?format=csv", method: .get, headers: auth(token)
                ) { String(buffer: $0.body) }
                let splits = try await client.execute(
                    uri: "/v1/workouts/\(id)/splits?by=lap", method: .get, headers: auth(token)
                ) { json($0.body) }
                return (lines, workout, routeObject, stats, csv, splits)
            }

            // Locations: the CLI's batch holds exactly the HTTP service's lines, byte for byte.
            let cli = try runChildProcess(binary, ["locations", "--store", store, "--json", route])
            #expect(cli.status == 0, "\(cli.errorOutput)")
            #expect(lines.count == 3)
            #expect(cli.output == "{\"batch\":0,\"done\":true,\"locations\":[" + lines.joined(separator: ",") + "]}\n")
            let first = try JSONSerialization.jsonObject(with: Data(lines[0].utf8)) as? [String: Any]
            #expect(first?["speedAccuracy"] as? Double == 0.5)
            #expect(first?["courseAccuracy"] as? Double == 12)
            #expect(first?["time"] as? String == "2024-05-01T06:00:00.25+02:00")
            #expect(lines[2].contains("\"time\"") == false, "an absent value's key is left out")

            // CSV: the CLI's columns are the location columns of the export's CSV, and its rows their values.
            let cliCSV = try runChildProcess(binary, ["locations", "--store", store, route])
            #expect(cliCSV.status == 0, "\(cliCSV.errorOutput)")
            let cliRows = cliCSV.output.split(separator: "\n").map { $0.split(separator: ",", omittingEmptySubsequences: false) }
            let exportRows = csv.split(separator: "\n").map { $0.split(separator: ",", omittingEmptySubsequences: false) }
            #expect(cliRows.count == 4 && exportRows.count == 4)
            for (c, e) in zip(cliRows, exportRows) {
                #expect(Array(c) == Array(e.dropFirst(4).prefix(c.count)), "\(c) vs \(e)")
            }
            #expect(cliRows.first?.first == "time" && cliRows.first?.contains("altitude") == true)

            // Events: kinds, times and what the file recorded with them.
            let events = (httpWorkout as? [String: Any])?["events"] as? [[String: Any]]
            #expect(events?.map { $0["kind"] as? String } == ["lap", "motionPaused", "marker"])
            #expect((events?.first?["metadata"] as? [String: Any])?["totalDistance"] as? Double == 12.5)
            #expect(events?.first?["end"] as? String == "2024-05-01T06:00:01.25+02:00")
            #expect(events?.last?["end"] is NSNull)

            // Workouts, routes, statistics.
            let cliWorkout = try runChildProcess(binary, ["workouts", "--store", store, "--json"])
            #expect(Self.same(try JSONSerialization.jsonObject(with: Data(cliWorkout.output.utf8)), httpWorkout))
            let cliRoute = try runChildProcess(binary, ["routes", "--store", store, "--json"])
            #expect(Self.same(try JSONSerialization.jsonObject(with: Data(cliRoute.output.utf8)), httpRoute))
            let cliStats = try runChildProcess(binary, ["stats", "--store", store, "--json", id])
            #expect(Self.same(try JSONSerialization.jsonObject(with: Data(cliStats.output.utf8)), httpStats))
            let cliSplits = try runChildProcess(binary, ["splits", "--store", store, "--json", id])
            #expect(cliSplits.status == 0, "\(cliSplits.errorOutput)")
            #expect(Self.same(try JSONSerialization.jsonObject(with: Data(cliSplits.output.utf8)), httpSplits))
            let lap = (httpSplits["splits"] as? [[String: Any]])?.first
            #expect((lap?["recorded"] as? [String: Any])?["lapTrigger"] as? String == "manual")
            #expect((lap?["distanceMetres"] as? Double ?? 0) > 0)
        }

        @Test("people: `routekit people list --json` and GET /v1/people list the same people, ids, names and JSON")
        func samePeople() async throws {
            guard let binary = routekitBinary else {
                Issue.record("the routekit executable is not next to the test bundle; build with --build-tests")
                return
            }
            let f = try Fixture()
            let admin = try await f.adminToken()
            let store = f.folder + "/store.sqlite"
            // One person added at each door.
            let ana = try Self.cliObject(binary, ["people", "add", "Ana", "--store", store, "--json"])["id"] as? String
            let (ben, served) = try await f.app().test(.router) { client in
                let added = try await client.execute(
                    uri: "/v1/people", method: .post, headers: auth(admin), body: ByteBuffer(string: #"{"name": "Ben"}"#)
                ) { r in
                    #expect(r.status == .created)
                    return json(r.body)["id"] as? String
                }
                let list = try await client.execute(uri: "/v1/people", method: .get, headers: auth(admin)) {
                    json($0.body)["people"] as? [Any] ?? []
                }
                return (added, list)
            }
            let listed = try Self.cli(binary, ["people", "list", "--store", store, "--json"])
            let people = listed.map { $0 as? [String: Any] ?? [:] }
            #expect(people.map { $0["id"] as? String } == [PersonID.default.description, ana, ben])
            #expect(people.dropFirst().map { $0["name"] as? String } == ["Ana", "Ben"])
            #expect(Self.same(list: listed, served), "\(listed) vs \(served)")
        }

        @Test(
            "a person's archive: `routekit export --person ID --archive` and GET /v1/export hold the same entries, each JSON entry the same (the manifest's creation time aside), each GPX and NDJSON entry byte for byte"
        )
        func sameArchive() async throws {
            guard let binary = routekitBinary else {
                Issue.record("the routekit executable is not next to the test bundle; build with --build-tests")
                return
            }
            let f = try Fixture()
            let ana = Person(name: "Ana")
            try await f.store.addPerson(ana)
            let phone = try Source(name: "phone")
            let hers = try await f.token(person: ana.id)
            let defaults = try await f.token()
            // Hers: a run with a route and heart rate, a treadmill run (no route), and an upload (below).
            let herStore = f.store.forPerson(ana.id)
            let run = try await ServerZonesTests().workoutWithHeartRate(herStore, source: phone)
            _ = try await Self.treadmill(herStore, source: phone)
            let served = try await f.app().test(.router) { client in
                _ = try await ServerWritesTests().upload(client, hers, "evening", hour: 8)
                // The default person's upload, in neither door's archive of hers.
                _ = try await ServerWritesTests().upload(client, defaults, "morning", hour: 6)
                // Zones saved with her run: its workout.json carries them.
                let (status, _) = try await ServerZonesTests().put(
                    client, hers, "/v1/workouts/\(run)/zones/heartRate", #"{"boundaries": [120, 140, 160, 180]}"#)
                #expect(status == .ok)
                return try await client.execute(uri: "/v1/export", method: .get, headers: auth(hers)) { r in
                    #expect(r.status == .ok)
                    return Data(r.body.readableBytesView)
                }
            }
            let path = f.folder + "/ana.zip"
            let exported = try runChildProcess(
                binary,
                ["export", "--store", f.folder + "/store.sqlite", "--person", ana.id.description, "--archive", path])
            #expect(exported.status == 0, "\(exported.errorOutput)")
            let written = try Archive(url: URL(fileURLWithPath: path), accessMode: .read)
            let answered = try Archive(data: served, accessMode: .read)
            let names = written.map(\.path)
            #expect(names == answered.map(\.path))
            // Her run (workout.json, its route, its heart rate), the upload (workout.json, its route), the treadmill
            // run's workout.json, the manifest.
            #expect(names.count == 7, "\(names)")
            #expect(names.contains("workouts/\(run)/series/heartRate.ndjson"), "\(names)")
            for name in names {
                let fromCLI = try PersonExportTests.contents(written, name)
                let fromHTTP = try PersonExportTests.contents(answered, name)
                guard name.hasSuffix(".json") else {
                    #expect(fromCLI == fromHTTP, "\(name) differs between the doors")
                    continue
                }
                var a = try JSONSerialization.jsonObject(with: fromCLI) as? [String: Any] ?? [:]
                var b = try JSONSerialization.jsonObject(with: fromHTTP) as? [String: Any] ?? [:]
                if name == "manifest.json" {
                    // When each door wrote its archive: the one field that differs by design.
                    #expect(a["created"] is String && b["created"] is String)
                    a["created"] = nil
                    b["created"] = nil
                    #expect(a["person"] as? String == ana.id.description)
                }
                #expect(!a.isEmpty && Self.same(a, b), "\(name)")
            }
        }

        /// A change set's contents: all but its anchor (each door's own; a token narrowed to some sources or types
        /// gets it sealed).
        static func contents(_ set: [String: Any]) -> [String: Any] {
            var out = set
            out["anchor"] = nil
            return out
        }

        /// The uuids of a change set's list.
        static func uuids(_ list: Any?) -> Set<String> {
            Set((list as? [[String: Any]] ?? []).compactMap { $0["uuid"] as? String })
        }

        @Test(
            "the change feed's types: `routekit changes --types workout,route --json` and GET /v1/changes?types=workout,route list the same objects added, then deleted, from the same start"
        )
        func sameChanges() async throws {
            guard let binary = routekitBinary else {
                Issue.record("the routekit executable is not next to the test bundle; build with --build-tests")
                return
            }
            let f = try Fixture()
            let token = try await f.token()
            let store = f.folder + "/store.sqlite"
            let arguments = ["changes", "--store", store, "--types", "workout,route", "--json"]
            let treadmill = try await Self.treadmill(f.store, source: try Source(name: "phone"))
            let (morning, evening, first) = try await f.app().test(.router) { client in
                let one = try await ServerWritesTests().upload(client, token, "morning", hour: 6)
                let two = try await ServerWritesTests().upload(client, token, "evening", hour: 8)
                let set = try await client.execute(
                    uri: "/v1/changes?types=workout,route", method: .get, headers: auth(token)
                ) { json($0.body) }
                return (one, two, set)
            }
            let cliFirst = try Self.cliObject(binary, arguments)
            #expect(Self.same(Self.contents(cliFirst), Self.contents(first)), "\(cliFirst) vs \(first)")
            #expect(Self.uuids(first["added"]) == [morning.route, evening.route])
            #expect(Self.uuids(first["addedObjects"]) == [treadmill, morning.workout, evening.workout])
            #expect(Self.uuids(first["deleted"]).isEmpty && Self.uuids(first["deletedObjects"]).isEmpty)

            // The morning run deleted, another uploaded: each door reads on from the anchor it gave.
            let httpAnchor = try #require(first["anchor"] as? String)
            let cliAnchor = try #require(cliFirst["anchor"] as? String)
            let (night, second) = try await f.app().test(.router) { client in
                let deleted = try await client.execute(
                    uri: "/v1/workouts/\(morning.workout)", method: .delete, headers: auth(token)
                ) { $0.status }
                #expect(deleted == .noContent)
                let added = try await ServerWritesTests().upload(client, token, "night", hour: 9)
                let set = try await client.execute(
                    uri: "/v1/changes?types=workout,route&anchor=\(httpAnchor)", method: .get, headers: auth(token)
                ) { json($0.body) }
                return (added, set)
            }
            let cliSecond = try Self.cliObject(binary, arguments + ["--anchor", cliAnchor])
            #expect(Self.same(Self.contents(cliSecond), Self.contents(second)), "\(cliSecond) vs \(second)")
            #expect(Self.uuids(second["deleted"]) == [morning.route])
            #expect(Self.uuids(second["deletedObjects"]) == [morning.workout])
            #expect(Self.uuids(second["added"]) == [night.route])
            #expect(Self.uuids(second["addedObjects"]) == [night.workout])
        }

        /// One workout's heart-rate zones at both doors, expected to agree: `routekit zones --workout ID --json` and
        /// `routekit stats --json ID`; `GET /v1/workouts/ID/zones`, `…/zones/heartRate` and `…/stats`. Returns the
        /// configuration the HTTP service names, and its statistics' zones' lower bounds and seconds.
        static func expectSameZones(_ binary: URL, _ f: Fixture, _ token: String, _ workout: String) async throws -> (
            configuration: [String: Any], lowerBounds: [Double], seconds: [Double]
        ) {
            let store = f.folder + "/store.sqlite"
            let shown = try cliObject(binary, ["zones", "--store", store, "--workout", workout, "--json"])
            let cliStats = try cliObject(binary, ["stats", "--store", store, "--json", workout])
            let (settings, configuration, stats) = try await f.app().test(.router) { client in
                let zones = ServerZonesTests()
                let path = "/v1/workouts/\(workout)"
                let settings = try await zones.get(client, token, path + "/zones").1
                let configuration = try await zones.get(client, token, path + "/zones/heartRate").1
                let stats = try await zones.get(client, token, path + "/stats").1
                return (settings, configuration, stats)
            }
            #expect(same(shown, settings), "\(shown) vs \(settings)")
            #expect(same(shown["heartRate"], configuration), "\(configuration)")
            #expect(same(cliStats["zoneConfiguration"], configuration), "the statistics use the workout's zones")
            #expect(same(cliStats, stats), "\(cliStats) vs \(stats)")
            let zones = stats["zones"] as? [[String: Any]] ?? []
            #expect(same(list: cliStats["zones"] as? [Any] ?? [], zones))
            return (
                configuration, zones.compactMap { $0["lower"] as? Double }, zones.compactMap { $0["seconds"] as? Double }
            )
        }

        @Test(
            "a workout's zones: `routekit zones --workout ID --json` and GET /v1/workouts/ID/zones/heartRate name the same boundaries, and both doors' statistics the same time in each zone, from the person's figures, then from zones saved with the workout"
        )
        func sameZones() async throws {
            guard let binary = routekitBinary else {
                Issue.record("the routekit executable is not next to the test bundle; build with --build-tests")
                return
            }
            let f = try Fixture()
            let alice = try await f.token(source: "alice")
            // Two minutes of heart rate climbing from 100 to 219 bpm.
            let workout = try await ServerZonesTests().workoutWithHeartRate(f.store, source: try Source(name: "alice"))
            // The person's figures (over HTTP): Karvonen's zones.
            let status = try await f.app().test(.router) { client in
                try await ServerZonesTests().put(
                    client, alice, "/v1/zones/heartRate", #"{"maximumHeartRate": 190, "restingHeartRate": 50}"#
                ).0
            }
            #expect(status == .ok)
            let karvonen = try await Self.expectSameZones(binary, f, alice, workout)
            #expect(karvonen.configuration["origin"] as? String == "system")
            #expect(karvonen.lowerBounds == [0, 134, 148, 162, 176])
            #expect(karvonen.seconds.count == 5 && karvonen.seconds.allSatisfy { $0 > 0 }, "\(karvonen.seconds)")

            // Zones saved with the workout (by the CLI, as its source) win over the person's, at both doors.
            let set = try runChildProcess(
                binary,
                [
                    "zones", "set", "heart-rate", "120,140,160,180", "--workout", workout, "--source", "alice",
                    "--store", f.folder + "/store.sqlite",
                ])
            #expect(set.status == 0, "\(set.errorOutput)")
            let own = try await Self.expectSameZones(binary, f, alice, workout)
            #expect(own.configuration["origin"] as? String == "app")
            #expect(own.configuration["boundaries"] as? [Double] == [120, 140, 160, 180])
            #expect(own.lowerBounds == [0, 120, 140, 160, 180])
            #expect(own.seconds.count == 5 && own.seconds.allSatisfy { $0 > 0 }, "\(own.seconds)")
            #expect(own.seconds != karvonen.seconds, "the time in each zone follows the zones")
        }
    }
#endif
