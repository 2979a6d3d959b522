#if Server
    import Foundation
    import HTTPTypes
    import Hummingbird
    import Logging
    import NIOCore
    import RouteKit
    import RouteKitApplication
    import RouteKitIngest
    import RouteKitImport

    /// `POST /v1/uploads`: a file (GPX, FIT, TCX, GeoJSON, gzip-compressed or not, or a zip archive of them) in the
    /// body, streamed to a spool file (memory does not grow with its size), then imported as the token's source with
    /// the outcomes of `routekit import --json`. Re-uploading a file is idempotent (`unchanged`).
    struct UploadRoutes: Sendable {
        let stores: PersonStores
        let configuration: ServerConfiguration
        let metrics: ServerMetrics
        /// Measures the new routes' figures after the answer.
        let figures: FiguresQueue
        /// Uploads being spooled or imported now (``ServerConfiguration/maxConcurrentImports`` at most).
        let inFlight = Locked(0)
        /// Each person's uploads a minute (``ServerConfiguration/maxUploadsPerMinutePerPerson``).
        let rate: PersonRate
        /// Each person's storage quota (``ServerConfiguration/maxStoredBytesPerPerson``); `nil`: none.
        let quota: StorageQuota?

        struct Body: Encodable {
            var results: [ImportResultJSON]
        }

        func upload(_ request: Request, context: RouteKitRequestContext) async throws -> Response {
            let store = try stores.store(context)
            // A file holds a workout and its route (and their series, events and effort, which go with them).
            let token = try context.require(.writing(.workouts), .writing(.routes))
            if let wait = rate.take(store.person) {
                throw Problem(
                    status: .tooManyRequests, type: "too-many-uploads", title: "Too many uploads",
                    detail: "this person may upload \(rate.perMinute) files a minute; try again in \(wait) s",
                    headers: [.retryAfter: String(wait)])
            }
            // A person at or over their quota is refused before a byte is read; the upload that crosses it is stored.
            try await quota?.check(store.person)
            let limit = configuration.maxConcurrentImports
            let admitted = inFlight.withLock { n in
                guard n < limit else { return false }
                n += 1
                return true
            }
            guard admitted else {
                throw Problem(
                    status: .serviceUnavailable, type: "busy-importing", title: "Busy importing",
                    detail: "\(limit) uploads are being imported; try again shortly", headers: [.retryAfter: "2"])
            }
            defer { inFlight.withLock { $0 -= 1 } }
            let max = configuration.maxUploadBytes
            if let declared = request.headers[.contentLength].flatMap({ Int($0) }) {
                if declared > max { throw Self.tooLarge(max) }
                // Refused before a byte is read when the spool's disk cannot hold what is announced.
                try Self.checkSpoolSpace(configuration.uploadDirectory, for: declared)
            }
            let name = Self.fileName(request.uri.queryParameters.get("name"))
            let folder = (configuration.uploadDirectory as NSString).appendingPathComponent(
                Spool.name(Spool.uploadPrefix))
            if mkdir(folder, 0o700) != 0 && errno != EEXIST {
                let error = Self.spoolError("creating the upload spool folder", errno: errno)
                context.logger.error(
                    "cannot create the upload spool folder",
                    metadata: ["folder": "\(folder)", "why": "\(error.message)"])
                throw Problem(error)
            }
            defer { try? FileManager.default.removeItem(atPath: folder) }
            // gzip data is inflated once, while it is spooled: the importer reads the spooled file as it is.
            let stem = name.lowercased().hasSuffix(".gz") && name.count > 3 ? String(name.dropLast(3)) : name
            let path = (folder as NSString).appendingPathComponent(stem)
            // Spooling, decoding and storing write files and decode on the blocking executor's threads: never on the
            // two cooperative threads every request shares.
            // What the token may not write (heart rate without `write:heartRate`) is left out below this door: the
            // door only says so, in each file's warnings.
            let writer = try stores.importStore(for: token)
            let results = try await BlockingExecutor.shared.withPreference { () async throws -> [ImportResult] in
                if let failure = try await spool(request.body, to: path, name: name) {
                    return [ImportResult(file: name, status: .failed, error: failure)]
                }
                var results: [ImportResult] = []
                let importer = RouteImporter(store: writer, source: token.source)
                importer.archiveLimits = configuration.archiveLimits
                await importer.importPath(path) { result in
                    var r = result
                    r.file = r.file.replacingOccurrences(of: path, with: name)
                    if let file = r.error?.file { r.error?.file = file.replacingOccurrences(of: path, with: name) }
                    r.warnings += Self.leftOutWarnings(writer.leftOut(ofWorkouts: r.tracks.map(\.workout)))
                    results.append(r)
                }
                return results
            }
            // What the person stores has changed: their next upload measures it again.
            quota?.forget(store.person)
            // A store or device failure is the server's, whatever else happened: its status (507, 503), never 422.
            if let failure = results.compactMap(\.error).first(where: { $0.code.isStoreFailure }) {
                context.logger.error(
                    "an upload could not be stored", metadata: ["code": "\(failure.code)", "why": "\(failure.message)"])
                var problem = Problem(failure)
                problem.extra["results"] = Self.resultsJSON(results)
                throw problem
            }
            let stored = results.flatMap(\.tracks).filter { !$0.unchanged }.reduce(0) { $0 + $1.locations }
            metrics.stored(stored)
            // The new routes' figures, for the lists that show them next: measured after the answer.
            let changed = results.flatMap(\.tracks).filter { !$0.unchanged && $0.route != nil }.map(\.workout)
            if !changed.isEmpty { figures.enqueue(changed, of: store) }
            let body = Body(results: results.map(ImportResultJSON.init))
            if results.isEmpty || results.allSatisfy({ $0.status == .failed }) {
                let first = results.first?.error ?? RouteKitError(.invalidArgument, "the upload holds no activity")
                var problem = Problem(first)
                problem.status = .unprocessableContent
                problem.extra["results"] = Self.resultsJSON(results)
                throw problem
            }
            let created = results.contains { $0.status == .imported || $0.status == .partial }
            return JSONBody.response(body, status: created ? .created : .ok)
        }

        /// A file's warnings for the quantity types its import left out because the token may not write them: one a
        /// type, naming it (never a value).
        static func leftOutWarnings(_ types: [QuantityType]) -> [String] {
            types.map { "\($0.identifier) samples and totals were left out: this token may not write \($0.identifier)" }
        }

        /// The outcomes of a failed upload, for its problem's `results`.
        static func resultsJSON(_ results: [ImportResult]) -> JSONValue {
            .array(
                results.map { r in
                    .object([
                        "file": .string(r.file), "status": .string(r.status.rawValue),
                        "error": r.error.map { e in
                            .object([
                                "code": .string(e.code.description), "message": .string(e.message),
                                "line": e.line.map { .number(Double($0)) } ?? .null,
                                "column": e.column.map { .number(Double($0)) } ?? .null,
                            ])
                        } ?? .null,
                    ])
                })
        }

        /// The error for a failed write to the spool: a full disk or quota is ``RouteKitError/Code/storageFull``
        /// (507), anything else ``RouteKitError/Code/unavailable`` (503): never the client's fault.
        static func spoolError(_ what: String, errno code: Int32) -> RouteKitError {
            let why = String(cString: strerror(code))
            if code == ENOSPC || code == EDQUOT {
                return RouteKitError(.storageFull, "\(what) failed: the upload folder's disk is full (\(why))")
            }
            return RouteKitError(.unavailable, "\(what) failed: \(why)")
        }

        /// Checks that the spool folder's disk has room for `bytes` more and a margin of 1 MiB.
        static func checkSpoolSpace(_ folder: String, for bytes: Int) throws(RouteKitError) {
            guard let free = DiskSpace.available(in: folder) else { return }
            if free < UInt64(max(0, bytes)) &+ (1 << 20) {
                throw RouteKitError(
                    .storageFull, "the upload folder's disk has \(free) bytes free, too few for \(bytes) bytes")
            }
        }

        /// Writes the body to `path`, counting: `413` past the upload limit. gzip data is inflated as it arrives and
        /// written inflated, `413` past the decompressed limit; corrupt or truncated gzip data is returned as the
        /// upload's import error (the importer is not run), naming the upload as the client did (`name`).
        func spool(_ body: RequestBody, to path: String, name: String) async throws -> RouteKitError? {
            let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
            guard fd >= 0 else { throw Problem(Self.spoolError("spooling the upload", errno: errno)) }
            defer { close(fd) }
            var total = 0
            var head: [UInt8] = []
            var inflater: Inflater?
            var inflated = 0
            let maxInflated = configuration.maxDecompressedBytes
            let label = name  // the client's name, `.gz` included, as in the upload's outcome
            for try await buffer in body {
                total += buffer.readableBytes
                guard total <= configuration.maxUploadBytes else { throw Self.tooLarge(configuration.maxUploadBytes) }
                var pending: [UInt8] = []
                if head.count < 2 {
                    let before = head
                    head += buffer.readableBytesView.prefix(2 - head.count)
                    if head.count < 2 {
                        // One byte so far: whether it starts gzip data is known with the next.
                        continue
                    }
                    if InputFile.isGzip(head) {
                        do throws(RouteKitError) {
                            inflater = try Inflater(fileName: label)
                        } catch {
                            throw Problem(error)
                        }
                    }
                    // A byte of the magic that came in an earlier buffer goes first.
                    pending = before
                }
                if let active = inflater {
                    var failure: Int32?
                    let outcome = Self.inflate(
                        active, pending + buffer.readableBytesView, limit: maxInflated, total: &inflated
                    ) { bytes, n in
                        if failure == nil { failure = Self.write(fd, UnsafeRawPointer(bytes), n) }
                    }
                    if let failure { throw Problem(Self.spoolError("spooling the upload", errno: failure)) }
                    switch outcome {
                    case .ok: break
                    case .tooLarge:
                        throw Problem(
                            status: .contentTooLarge, type: "decompressed-too-large",
                            title: "The upload is too large when decompressed",
                            detail: "gzip data may grow to at most \(maxInflated) bytes",
                            extra: ["maxBytes": .number(Double(maxInflated))])
                    case .corrupt(let error): return error
                    }
                    continue
                }
                // Straight from the buffer to the file: no copy.
                let failure =
                    pending.withUnsafeBytes { raw in
                        raw.baseAddress.flatMap { Self.write(fd, $0, raw.count) }
                    }
                    ?? buffer.withUnsafeReadableBytes { raw in
                        raw.baseAddress.flatMap { Self.write(fd, $0, raw.count) }
                    }
                if let failure { throw Problem(Self.spoolError("spooling the upload", errno: failure)) }
            }
            if head.count == 1 {
                // A one-byte upload: written as it is, for the importer to refuse.
                if let failure = head.withUnsafeBytes({ raw in raw.baseAddress.flatMap { Self.write(fd, $0, 1) } }) {
                    throw Problem(Self.spoolError("spooling the upload", errno: failure))
                }
            }
            if let active = inflater, !active.ended {
                return RouteKitError(.compression, "the gzip data ends early (truncated file)", file: label)
            }
            return nil
        }

        /// Writes `count` bytes at `bytes` to `fd`; the `errno` of a failed write, `nil` when all were written.
        static func write(_ fd: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Int32? {
            var p = bytes
            var left = count
            while left > 0 {
                let n = Foundation.write(fd, p, left)
                if n < 0 {
                    if errno == EINTR { continue }
                    return errno
                }
                p += n
                left -= n
            }
            return nil
        }

        enum Inflated {
            case ok, tooLarge
            case corrupt(RouteKitError)
        }

        /// Inflates `bytes`, handing what they grow to to `sink`; `total` counts every byte inflated so far, and
        /// inflating stops once it passes `limit`.
        static func inflate(
            _ inflater: Inflater, _ bytes: [UInt8], limit: Int, total: inout Int,
            sink: (UnsafePointer<UInt8>, Int) -> Void
        ) -> Inflated {
            var produced = total
            var over = false
            let failed = bytes.withUnsafeBytes { raw -> RouteKitError? in
                do throws(RouteKitError) {
                    try inflater.inflate(raw) { out, n throws(RouteKitError) in
                        produced += n
                        if produced > limit {
                            over = true
                            throw RouteKitError(.compression, "over the limit")
                        }
                        sink(out, n)
                    }
                    return nil
                } catch {
                    return error
                }
            }
            total = produced
            if over { return .tooLarge }
            return failed.map { .corrupt($0) } ?? .ok
        }

        static func tooLarge(_ max: Int) -> Problem {
            Problem(
                status: .contentTooLarge, type: "upload-too-large", title: "The upload is too large",
                detail: "uploads may be at most \(max) bytes", extra: ["maxBytes": .number(Double(max))])
        }

        /// A safe file name from the client's (`name=`): letters, digits, `.`, `-`, `_`; never a path.
        static func fileName(_ text: String?) -> String {
            let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_")
            let base = (text ?? "").split(separator: "/").last.map(String.init) ?? ""
            let cleaned = String(base.map { allowed.contains($0) ? $0 : "_" }.prefix(100))
            return cleaned.isEmpty || cleaned.allSatisfy({ $0 == "." }) ? "upload" : cleaned
        }
    }
#endif
