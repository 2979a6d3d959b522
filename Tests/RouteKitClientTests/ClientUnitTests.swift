#if Client
    import Foundation
    import Testing

    @testable import RouteKitClient

    @Suite("RouteKitClient's parts without a server")
    struct ClientUnitTests {
        /// A stream of three events as the server writes them, with a comment heartbeat and the first event's retry.
        static let stream = """
            retry: 3000\r
            id: a1\r
            event: changes\r
            data: {"n":1}\r
            \r
            : heartbeat\r
            \r
            id: a2\r
            event: up-to-date\r
            data: {"anchor":"a2"}\r
            \r
            event: shutdown\r
            data: {"detail":"bye"}\r
            \r

            """

        @Test("SSE: events, ids, retry and comments, whatever the chunks' size", arguments: [1, 2, 3, 7, 64, 4096])
        func eventStreamInChunks(size: Int) {
            var parser = SSEParser()
            var events: [SSEEvent] = []
            let bytes = Array(Self.stream.utf8)
            var start = 0
            while start < bytes.count {
                let end = min(bytes.count, start + size)
                events += parser.push(bytes[start..<end])
                start = end
            }
            let expected = [
                SSEEvent(name: "changes", data: #"{"n":1}"#, id: "a1"),
                SSEEvent(name: "up-to-date", data: #"{"anchor":"a2"}"#, id: "a2"),
                // No `id:`: the last one stays (where a reconnection resumes).
                SSEEvent(name: "shutdown", data: #"{"detail":"bye"}"#, id: "a2"),
            ]
            #expect(events == expected)
            #expect(parser.retry == 3000)
        }

        @Test("SSE: LF and CR line ends, data lines joined, no space after the colon, events without data not dispatched")
        func eventStreamLines() {
            var parser = SSEParser()
            let events = parser.push(Array("data:one\ndata: two\r\rid\nevent: empty\n\ndata\n\n: only a comment\n\n".utf8))
            let expected = [
                SSEEvent(name: "message", data: "one\ntwo", id: nil),
                SSEEvent(name: "message", data: "", id: nil),
            ]
            #expect(events == expected)
            // An `id` holding NUL is ignored; a `retry` that is not digits too.
            var other = SSEParser()
            let withNull = other.push(Array("id: x\u{0}y\nretry: 5s\ndata: d\n\n".utf8))
            let ids = withNull.map(\.id)
            #expect(ids == [nil])
            #expect(other.retry == nil)
            // An event cut before its empty line is not dispatched yet.
            var cut = SSEParser()
            let none = cut.push(Array("event: changes\ndata: {}\n".utf8))
            #expect(none.isEmpty)
            let done = cut.push(Array("\n".utf8))
            let names = done.map(\.name)
            #expect(names == ["changes"])
        }

        @Test("ISO 8601: Z, offsets, fractions and no zone read; dates written in UTC to the microsecond")
        func isoTimes() throws {
            let base = Date(timeIntervalSince1970: 1_714_543_200)
            #expect(ISOTime.date("2024-05-01T06:00:00Z") == base)
            #expect(ISOTime.date("2024-05-01T06:00:00") == base)
            #expect(ISOTime.date("2024-05-01T08:00:00+02:00") == base)
            #expect(ISOTime.date("2024-05-01T08:00:00+0200") == base)
            #expect(ISOTime.date("2024-05-01T01:30:00-04:30") == base)
            let fraction = try #require(ISOTime.date("2024-05-01T06:00:00.25Z"))
            #expect(abs(fraction.timeIntervalSince(base) - 0.25) < 1e-6)
            for bad in ["2024-05-01", "2024-13-01T06:00:00Z", "2024-05-01T06:00:00Q", "2024-05-01T06:00:00.Z", "x"] {
                #expect(ISOTime.date(bad) == nil, "\(bad)")
            }
            #expect(ISOTime.text(base) == "2024-05-01T06:00:00Z")
            #expect(ISOTime.text(base.addingTimeInterval(0.5)) == "2024-05-01T06:00:00.5Z")
            #expect(ISOTime.text(Date(timeIntervalSince1970: -1)) == "1969-12-31T23:59:59Z")
            #expect(ISOTime.text(Date(timeIntervalSince1970: .nan)) == nil)
            #expect(ISOTime.text(Date.distantFuture.addingTimeInterval(1e12)) == nil)
            let now = Date(timeIntervalSince1970: 1_714_543_200.123456)
            let back = try #require(ISOTime.text(now).flatMap(ISOTime.date))
            #expect(abs(back.timeIntervalSince(now)) < 1e-6)
        }

        @Test("a location is sent with its time as text and without its unknown values, and read back the same")
        func locationJSON() throws {
            let location = ClientLocation(
                latitude: 47.1, longitude: 8.5, time: Date(timeIntervalSince1970: 1_714_543_200), altitude: 400)
            let data = try JSONEncoder().encode(location)
            let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
            let time = object["time"] as? String
            #expect(time == "2024-05-01T06:00:00Z")
            let keys = Set(object.keys)
            #expect(keys == ["latitude", "longitude", "time", "altitude"])
            let back = try JSONDecoder().decode(ClientLocation.self, from: data)
            #expect(back == location)
            let untimed = try JSONDecoder().decode(ClientLocation.self, from: Data(#"{"latitude":1,"longitude":2}"#.utf8))
            #expect(untimed.time == nil)
            let undated = Data(#"{"latitude":1,"longitude":2,"time":"soon"}"#.utf8)
            #expect(throws: DecodingError.self) { try JSONDecoder().decode(ClientLocation.self, from: undated) }
        }

        @Test("a problem's type, status, detail and other members are read; its name drops the type's prefix")
        func problemJSON() throws {
            let body = #"""
                {"type":"urn:routekit:problem:builder-gap","title":"The batch does not follow what is held",
                "status":409,"detail":"the builder holds 20 locations","locations":20}
                """#
            let problem = try JSONDecoder().decode(ClientProblem.self, from: Data(body.utf8))
            #expect(problem.name == "builder-gap")
            #expect(problem.status == 409)
            #expect(problem.detail == "the builder holds 20 locations")
            let held = problem.members["locations"]?.intValue
            #expect(held == 20)
        }

        @Test("query values are percent-encoded; an encoding error names the path, never the value")
        func queryAndErrors() {
            let query = RouteKitClient.queryString([("anchor", "s1.a+b/c="), ("types", "route,workout")])
            #expect(query == "?anchor=s1.a%2Bb%2Fc%3D&types=route%2Cworkout")
            #expect(RouteKitClient.queryString([]) == "")
            let encoding = EncodingError.invalidValue(
                47.123456, EncodingError.Context(codingPath: [], debugDescription: "latitude 47.123456 is not valid"))
            let error = RouteKitClientError.wrapping(encoding, operation: "appendLocations")
            #expect(error.code == .invalidArgument)
            #expect(!error.description.contains("47.123456"))
            let transient = RouteKitClientError(.problem, "busy", status: 503)
            let refused = RouteKitClientError(.problem, "gone", status: 410)
            let quota = RouteKitClientError(
                .problem, "full", problem: ClientProblem(members: ["type": .string("urn:routekit:problem:storage-quota")]),
                status: 507)
            let deviceFull = RouteKitClientError(.problem, "device full", status: 507)
            #expect(transient.isTransient)
            #expect(!refused.isTransient)
            #expect(!quota.isTransient)
            #expect(deviceFull.isTransient)
        }

        @Test("an upload's default name keeps letters, digits, '.', '-' and '_'")
        func uploadNames() {
            #expect(RouteKitClient.uploadName("morning run (1).gpx") == "morning_run__1_.gpx")
            #expect(RouteKitClient.uploadName("ride-2.fit.gz") == "ride-2.fit.gz")
            #expect(RouteKitClient.uploadName("") == "upload")
        }
    }
#endif
