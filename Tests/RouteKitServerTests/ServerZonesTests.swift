#if Server
    import Foundation
    import HTTPTypes
    import Hummingbird
    import HummingbirdTesting
    import NIOCore
    @_spi(RouteKitBackend) import RouteKit
    import RouteKitServer
    import RouteKitSQLite
    import RouteKitTesting
    import Testing

    @Suite("routekit serve: zones as stored configurations")
    struct ServerZonesTests {
        /// A workout of `source` with a two-minute route and a heart rate climbing from 100 to 219 bpm.
        func workoutWithHeartRate(_ store: SQLiteStore, source: Source) async throws -> String {
            let t0 = Instant(seconds: 1_714_550_400)
            let workout = Workout(
                activityType: .running, start: Timestamp(t0), end: Timestamp(Instant(seconds: t0.seconds + 119)),
                source: source)
            _ = try await store.saveWorkout(workout)
            let builder = try await RouteBuilder(store: store, source: source)
            try await builder.insert(
                (0..<120).map { i in
                    Location(
                        latitude: 47 + Double(i) * 3 / 111_000, longitude: 8,
                        timestamp: Timestamp(Instant(seconds: t0.seconds + Int64(i))))
                })
            _ = try await builder.finish(
                workout: workout, metadata: ["syncIdentifier": .string("zones"), "syncVersion": .integer(1)])
            let samples = (0..<120).map { i in
                QuantitySample(timestamp: Timestamp(Instant(seconds: t0.seconds + Int64(i))), value: Double(100 + i))
            }
            try await store.saveSeries(QuantitySeries(type: .heartRate, samples: samples), workout: workout.id, as: source)
            return workout.id.uuidString.lowercased()
        }

        func put(_ client: some TestClientProtocol, _ token: String, _ path: String, _ body: String) async throws
            -> (HTTPResponse.Status, [String: Any])
        {
            try await client.execute(
                uri: path, method: .put, headers: auth(token, [.contentType: "application/json"]),
                body: ByteBuffer(string: body)
            ) { ($0.status, json($0.body)) }
        }

        func get(_ client: some TestClientProtocol, _ token: String, _ path: String) async throws
            -> (HTTPResponse.Status, [String: Any])
        {
            try await client.execute(uri: path, method: .get, headers: auth(token)) { ($0.status, json($0.body)) }
        }

        @Test(
            "GET/PUT/DELETE /v1/zones/heartRate: Karvonen from the figures, the person's own over it, refusals change nothing; stats use them; the CLI shows the same"
        )
        func heartRateZones() async throws {
            let f = try Fixture()
            let alice = try await f.token(source: "alice")
            let reader = try await f.token(source: "alice", scopes: [.read])
            let workout = try await workoutWithHeartRate(f.store, source: try Source(name: "alice"))

            let (settings, stats) = try await f.app().test(.router) { client in
                // Nothing known: 404, and the workout's statistics say their zones come from the workout itself.
                #expect(try await get(client, alice, "/v1/zones/heartRate").0 == .notFound)
                let before = try await get(client, alice, "/v1/workouts/\(workout)/stats").1
                let derived = before["zoneConfiguration"] as? [String: Any]
                #expect((derived?["basis"] as? String)?.contains("the workout's own maximum") == true)

                let (status, karvonen) = try await put(
                    client, alice, "/v1/zones/heartRate", #"{"maximumHeartRate": 190, "restingHeartRate": 50}"#)
                #expect(status == .ok)
                #expect(karvonen["origin"] as? String == "system")
                #expect(karvonen["boundaries"] as? [Double] == [134, 148, 162, 176])
                #expect((karvonen["basis"] as? String)?.hasPrefix("Karvonen") == true)

                // Refused, naming what is wrong; nothing changes.
                let (badStatus, bad) = try await put(client, alice, "/v1/zones/heartRate", #"{"boundaries": [120, 110]}"#)
                #expect(badStatus == .badRequest)
                #expect((bad["detail"] as? String)?.contains("boundary 2 (110.0) must be above boundary 1") == true)
                #expect(try await put(client, alice, "/v1/zones/heartRate", #"{"boundaries": [120]}"#).0 == .badRequest)
                #expect(try await put(client, alice, "/v1/zones/heartRate", #"{"ftp": 250}"#).0 == .badRequest)
                #expect(try await put(client, alice, "/v1/zones/heartRate", #"{"boundaries": "x"}"#).0 == .badRequest)
                #expect(try await put(client, alice, "/v1/zones/heartRate", "{}").0 == .badRequest)
                #expect(try await put(client, reader, "/v1/zones/heartRate", #"{"age": 40}"#).0 == .forbidden)
                #expect(try await put(client, alice, "/v1/zones/speed", #"{"boundaries": [1, 2]}"#).0 == .notFound)
                #expect(try await get(client, alice, "/v1/zones/heartRate").1["origin"] as? String == "system")

                // The person's own zones win over the system's.
                let (ownStatus, own) = try await put(
                    client, alice, "/v1/zones/heartRate", #"{"boundaries": [120, 140, 155, 170]}"#)
                #expect(ownStatus == .ok && own["origin"] as? String == "user")
                let stats = try await get(client, reader, "/v1/workouts/\(workout)/stats").1
                let settings = try await get(client, reader, "/v1/zones").1

                // Cleared: the system's (Karvonen) again; the figures stay.
                let deleted = try await client.execute(
                    uri: "/v1/zones/heartRate", method: .delete, headers: auth(alice)
                ) { $0.status }
                #expect(deleted == .noContent)
                #expect(try await get(client, alice, "/v1/zones/heartRate").1["origin"] as? String == "system")
                return (settings, stats)
            }
            let used = stats["zoneConfiguration"] as? [String: Any]
            #expect(used?["origin"] as? String == "user" && used?["boundaries"] as? [Double] == [120, 140, 155, 170])
            let zones = stats["zones"] as? [[String: Any]]
            #expect(zones?.map { $0["lower"] as? Double } == [0, 120, 140, 155, 170])
            #expect((settings["heartRate"] as? [String: Any])?["origin"] as? String == "user")
            #expect(settings["maximumHeartRate"] as? Double == 190 && settings["power"] is NSNull)

            // The CLI reads the same settings the same way.
            guard let binary = routekitBinary else {
                Issue.record("the routekit executable is not next to the test bundle; build with --build-tests")
                return
            }
            let cli = try runChildProcess(
                binary, ["zones", "show", "--store", f.folder + "/store.sqlite", "--source", "alice", "--json"])
            #expect(cli.status == 0, "\(cli.errorOutput)")
            let shown = try JSONSerialization.jsonObject(with: Data(cli.output.utf8)) as? [String: Any]
            #expect((shown?["heartRate"] as? [String: Any])?["origin"] as? String == "system", "cleared since")
            #expect(shown?["restingHeartRate"] as? Double == 50)
            let refused = try runChildProcess(
                binary,
                ["zones", "set", "heart-rate", "120,140,300", "--store", f.folder + "/store.sqlite", "--source", "alice"])
            #expect(refused.status == 1)
            #expect(refused.errorOutput.contains("boundary 3 (300.0) is outside 20–260 bpm"), "\(refused.errorOutput)")
        }
    }
#endif
