#if Server
    import Foundation
    import HTTPTypes
    import Hummingbird
    import HummingbirdTesting
    import NIOCore
    import RouteKit
    import RouteKitServer
    import RouteKitSQLite
    import Testing

    @Suite("routekit serve: a workout's statistics, series and effort")
    struct ServerWorkoutReadsTests {
        /// A run of `points` seconds with heart rate 120 + i % 40.
        func runWithHeartRate(points: Int) -> String {
            var s = """
                <?xml version="1.0"?><gpx version="1.1" creator="t" xmlns="http://www.topografix.com/GPX/1/1" \
                xmlns:gpxtpx="http://www.garmin.com/xmlschemas/TrackPointExtension/v1">\
                <trk><name>hr run</name><type>running</type><trkseg>

                """
            for i in 0..<points {
                s += "<trkpt lat=\"\(47.0 + Double(i) * 0.00003)\" lon=\"8.5\"><ele>\(400 + i % 9)</ele>"
                s += "<time>2024-05-01T06:\(String(format: "%02d", i / 60)):\(String(format: "%02d", i % 60))Z</time>"
                s += "<extensions><gpxtpx:TrackPointExtension><gpxtpx:hr>\(120 + i % 40)</gpxtpx:hr>"
                s += "</gpxtpx:TrackPointExtension></extensions></trkpt>\n"
            }
            return s + "</trkseg></trk></gpx>\n"
        }

        @Test("stats as routekit stats --json, series types and NDJSON samples, effort scores; 400 and 404 as elsewhere")
        func workoutReads() async throws {
            let f = try Fixture()
            let token = try await f.token()
            let stranger = try await f.token(source: "watch", readable: ["watch"])
            try await f.app().test(.router) { client in
                let workout = try await client.execute(
                    uri: "/v1/uploads?name=hr.gpx", method: .post, headers: auth(token),
                    body: ByteBuffer(string: runWithHeartRate(points: 600))
                ) { r in
                    #expect(r.status == .created)
                    return ((json(r.body)["results"] as? [[String: Any]])?.first?["routes"] as? [[String: Any]])?.first?[
                        "workout"] as? String ?? ""
                }
                try await client.execute(uri: "/v1/workouts/\(workout)/stats?maxHr=190", method: .get, headers: auth(token)) {
                    r in
                    #expect(r.status == .ok)
                    let body = json(r.body)
                    #expect(body["workout"] as? String == workout)
                    #expect((body["distanceMetres"] as? Double ?? 0) > 1_900)  // 599 steps of 3.3 m
                    #expect((body["elapsedSeconds"] as? Double) == 599)
                    let hr = body["heartRate"] as? [String: Any]
                    #expect(hr?["max"] as? Double == 159)
                    #expect((body["zones"] as? [[String: Any]])?.count == 5)
                    #expect(body.keys.contains("power") && body["power"] is NSNull)
                }
                try await client.execute(
                    uri: "/v1/workouts/\(workout)/stats?maxHr=lots", method: .get, headers: auth(token)
                ) { #expect($0.status == .badRequest) }
                try await client.execute(
                    uri: "/v1/workouts/\(workout)/stats?zones=0,100,90", method: .get, headers: auth(token)
                ) { #expect($0.status == .badRequest) }
                try await client.execute(uri: "/v1/workouts/\(workout)/series", method: .get, headers: auth(token)) { r in
                    let types = json(r.body)["types"] as? [[String: Any]] ?? []
                    #expect(types.contains { $0["type"] as? String == "heartRate" })
                }
                try await client.execute(
                    uri: "/v1/workouts/\(workout)/series/heartRate", method: .get, headers: auth(token)
                ) { r in
                    #expect(r.headers[.contentType] == "application/x-ndjson")
                    let lines = String(buffer: r.body).split(separator: "\n")
                    #expect(lines.count == 600)
                    let first = try JSONSerialization.jsonObject(with: Data(lines[0].utf8)) as? [String: Any]
                    #expect(first?["time"] as? String == "2024-05-01T06:00:00Z")
                    #expect(first?["value"] as? Double == 120)
                }
                try await client.execute(uri: "/v1/workouts/\(workout)/series/speed", method: .get, headers: auth(token)) {
                    #expect($0.status == .badRequest)
                }
                try await client.execute(uri: "/v1/workouts/\(workout)/effort", method: .get, headers: auth(token)) { r in
                    let body = json(r.body)
                    #expect(body["effective"] is NSNull)
                    #expect((body["scores"] as? [Any])?.isEmpty == true)
                }
                let id = try #require(UUID(uuidString: workout))
                try await f.store.relateEffort(try EffortScore(workoutID: id, source: try Source(name: "phone"), score: 7, isManual: true))
                try await client.execute(uri: "/v1/workouts/\(workout)/effort", method: .get, headers: auth(token)) { r in
                    let effective = json(r.body)["effective"] as? [String: Any]
                    #expect(effective?["score"] as? Double == 7)
                    #expect(effective?["manual"] as? Bool == true)
                }
                for path in ["stats", "series", "series/heartRate", "effort"] {
                    try await client.execute(uri: "/v1/workouts/\(workout)/\(path)", method: .get, headers: auth(stranger)) {
                        #expect($0.status == .notFound, "\(path)")
                    }
                }
                try await client.execute(uri: "/v1/workouts/\(UUID())/stats", method: .get, headers: auth(token)) {
                    #expect($0.status == .notFound)
                }
            }
        }
    }
#endif
