#if Client
    import Foundation
    import HTTPTypes
    import OpenAPIRuntime

    extension RouteKitClient {
        /// One page of the current workouts (`GET /v1/workouts`), `limit` at a time in the order they were saved: pass
        /// a page's ``ClientWorkoutPage/next`` as `cursor` for the following page (`nil` on the last).
        public func workouts(after cursor: String? = nil, limit: Int = 500) async throws(RouteKitClientError)
            -> ClientWorkoutPage
        {
            try await call("workouts") {
                let page = try await api.workouts(query: .init(limit: limit, after: cursor)).ok.body.json
                return ClientWorkoutPage(workouts: page.workouts, next: page.next, anchor: page.anchor)
            }
        }

        /// A workout and its current routes (`GET /v1/workouts/ID`); a workout that does not exist is a `404`
        /// problem (`not-found`).
        public func workout(_ id: UUID) async throws(RouteKitClientError) -> ClientWorkoutDetail {
            try await call("workout") {
                let body = try await api.workout(path: .init(id: id.uuidString.lowercased())).ok.body.json
                return ClientWorkoutDetail(workout: body.workout, routes: body.routes)
            }
        }

        /// A route version (`GET /v1/routes/ID`): its sync identity, times, location count and metadata.
        public func route(_ id: UUID) async throws(RouteKitClientError) -> ClientRoute {
            try await call("route") {
                try await api.route(path: .init(id: id.uuidString.lowercased())).ok.body.json
            }
        }

        /// The locations of a route version (`GET /v1/routes/ID/locations`, NDJSON read as it arrives), in order;
        /// with `max`, at most that many, evenly spread over the route (the first and the last among them).
        public func locations(route id: UUID, max: Int? = nil) async throws(RouteKitClientError) -> [ClientLocation] {
            let operation = "routeLocations"
            var query: [(String, String)] = []
            if let max { query.append(("max", String(max))) }
            let (_, body) = try await send(
                operation, path: "/v1/routes/\(id.uuidString.lowercased())/locations", query: query,
                headers: [.accept: "application/x-ndjson"])
            guard let body else { return [] }
            let decoder = JSONDecoder()
            var locations: [ClientLocation] = []
            var pending: [UInt8] = []
            do {
                for try await chunk in body {
                    pending.append(contentsOf: chunk)
                    var start = 0
                    while let newline = pending[start...].firstIndex(of: UInt8(ascii: "\n")) {
                        if let location = try Self.location(pending[start..<newline], decoder) {
                            locations.append(location)
                        }
                        start = newline + 1
                    }
                    pending.removeFirst(start)
                }
                if let location = try Self.location(pending[...], decoder) { locations.append(location) }
            } catch let error as DecodingError {
                throw RouteKitClientError.wrapping(error, operation: operation)
            } catch {
                throw RouteKitClientError.transport(error, operation: operation)
            }
            return locations
        }

        /// The location on one NDJSON line, `nil` for a blank line.
        static func location(_ line: ArraySlice<UInt8>, _ decoder: JSONDecoder) throws -> ClientLocation? {
            guard line.contains(where: { $0 != 0x20 && $0 != 0x0D && $0 != 0x09 }) else { return nil }
            return try decoder.decode(ClientLocation.self, from: Data(line))
        }

        /// Uploads a file (`POST /v1/uploads`): GPX, FIT, TCX or GeoJSON, plain or gzip-compressed, or a zip archive
        /// of them, imported as the token's source; the format is told by content. `name` is the file's name for the
        /// server (letters, digits, `.`, `-`, `_`; by default the file's own, other characters as `_`). The file is
        /// streamed from disk.
        ///
        /// Uploading the same file again stores nothing: its result is `unchanged`. A file the server cannot import
        /// is a `422` problem; one larger than the server takes, `413`.
        public func upload(file: URL, name: String? = nil) async throws(RouteKitClientError) -> [ClientImportResult] {
            let size: Int64
            do {
                let attributes = try FileManager.default.attributesOfItem(atPath: file.path)
                guard (attributes[.type] as? FileAttributeType) == .typeRegular else {
                    throw CocoaError(.fileReadInvalidFileName)
                }
                let handle = try FileHandle(forReadingFrom: file)
                try? handle.close()
                size = (attributes[.size] as? NSNumber)?.int64Value ?? 0
            } catch {
                throw RouteKitClientError(.file, "upload: cannot read the file '\(file.lastPathComponent)'")
            }
            let uploadName = name ?? Self.uploadName(file.lastPathComponent)
            let body = HTTPBody(FileChunks(url: file), length: .known(size), iterationBehavior: .multiple)
            return try await call("upload") {
                let output = try await api.upload(query: .init(name: uploadName), body: .binary(body))
                switch output {
                case .ok(let unchanged): return try unchanged.body.json.results
                case .created(let stored): return try stored.body.json.results
                default:
                    throw RouteKitClientError(.unexpectedResponse, "upload: an answer the API does not document")
                }
            }
        }

        /// A file name as the upload's `name` takes it: letters, digits, `.`, `-` and `_`, anything else as `_`.
        static func uploadName(_ name: String) -> String {
            let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_")
            let kept = String(name.map { allowed.contains($0) ? $0 : "_" })
            return kept.isEmpty ? "upload" : kept
        }
    }

    /// A file's bytes, read a chunk at a time each time the sequence is iterated (a transport that retries reads it
    /// again).
    struct FileChunks: AsyncSequence, Sendable {
        typealias Element = [UInt8]

        /// The file.
        let url: URL

        func makeAsyncIterator() -> Iterator { Iterator(url: url) }

        /// Reads the file from its start.
        struct Iterator: AsyncIteratorProtocol {
            let url: URL
            var handle: FileHandle?
            var finished = false

            mutating func next() async throws -> [UInt8]? {
                guard !finished else { return nil }
                if handle == nil { handle = try FileHandle(forReadingFrom: url) }
                guard let file = handle else { return nil }
                if let data = try file.read(upToCount: 256 * 1024), !data.isEmpty { return [UInt8](data) }
                try? file.close()
                finished = true
                return nil
            }
        }
    }
#endif
