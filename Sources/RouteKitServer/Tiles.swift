#if Server
    import AsyncHTTPClient
    import Crypto
    import Foundation
    import Logging
    import NIOCore
    import NIOHTTP1
    import RouteKit
    import RouteKitRender
    import RouteKitSQLite

    /// Where the web view's and the pictures' basemap comes from (`routekit serve --tiles`): a tile server's XYZ URL
    /// template, fetched by the server (never by the browser) through a disk cache, or an MBTiles archive.
    package struct TileConfiguration: Sendable {
        /// An XYZ raster tile server (`https://tile.example.org/{z}/{x}/{y}.png`), or an MBTiles file.
        package enum Source: Sendable, Equatable {
            case upstream(template: String)
            case mbtiles(path: String)
        }

        /// Where tiles come from.
        package var source: Source
        /// The attribution the tile server's terms ask for (`© OpenStreetMap contributors`); an MBTiles archive's
        /// own is used when this is empty.
        package var attribution: String
        /// The folder of the disk cache of fetched tiles (a folder per tile server inside it, named by a hash of
        /// its URL template).
        package var cacheDirectory: String
        /// The most bytes the cache holds; past it, the least recently used tiles are removed.
        package var cacheBytes = 512 << 20
        /// Tiles fetched from the tile server at once; more requests wait their turn.
        package var maxConcurrentFetches = 4
        /// The `User-Agent` of the server's requests to the tile server (tile servers' policies ask for one that
        /// names the application).
        package var userAgent: String
        /// The highest zoom offered for a tile server (an MBTiles archive says its own).
        package var maximumZoom = 19
        /// How long a tile server may take to answer, in seconds.
        package var upstreamTimeoutSeconds = 15.0

        package init(source: Source, attribution: String, cacheDirectory: String, userAgent: String) {
            self.source = source
            self.attribution = attribution
            self.cacheDirectory = cacheDirectory
            self.userAgent = userAgent
        }

        /// `RouteKit/VERSION (+https://routekit.dev)`.
        package static func userAgent(version: String) -> String { "RouteKit/\(version) (+https://routekit.dev)" }

        /// `$XDG_CACHE_HOME/routekit/tiles`, else `~/.cache/routekit/tiles`.
        package static var defaultCacheDirectory: String {
            let environment = ProcessInfo.processInfo.environment
            if let xdg = environment["XDG_CACHE_HOME"], xdg.hasPrefix("/") { return xdg + "/routekit/tiles" }
            return NSHomeDirectory() + "/.cache/routekit/tiles"
        }

        /// The source `--tiles` names: a file ending in `.mbtiles`, else a URL template that must be http(s) and
        /// hold `{z}`, `{x}` and `{y}`. The template is never repeated in an error (it may hold an API key).
        package static func parseSource(_ text: String) throws(RouteKitError) -> Source {
            if text.lowercased().hasSuffix(".mbtiles") { return .mbtiles(path: text) }
            let lower = text.lowercased()
            guard lower.hasPrefix("http://") || lower.hasPrefix("https://") else {
                throw RouteKitError(
                    .invalidArgument,
                    "--tiles takes an http(s) URL template with {z}, {x} and {y}, or a .mbtiles file")
            }
            for part in ["{z}", "{x}", "{y}"] where !text.contains(part) {
                throw RouteKitError(.invalidArgument, "the --tiles URL template has no \(part)")
            }
            return .upstream(template: text)
        }
    }

    /// A tile as served: its bytes, type, entity tag and how long a browser may keep it.
    package struct ServedTile: Sendable {
        package var bytes: [UInt8]
        package var contentType: String
        package var etag: String
        /// Seconds a browser may use it without asking again (0: revalidate every time).
        package var maxAge: Int
    }

    /// Why a tile cannot be served.
    package struct TileFailure: Error, Sendable {
        package enum Kind: Sendable {
            /// The source has no such tile (`404`).
            case missing
            /// The tile server failed or could not be reached, and no copy was cached (`502`).
            case upstream
        }

        package var kind: Kind
        /// For people; never the tile server's URL (it may hold an API key).
        package var message: String
    }

    /// The basemap's tiles: from an MBTiles archive, or from a tile server through a disk cache (freshness from
    /// the tile server's `Cache-Control`, `Expires`; revalidation with `ETag` and `Last-Modified`; a stale copy
    /// served when the tile server fails), with concurrent requests for one tile coalesced into one fetch, and a
    /// bounded number of fetches at once.
    package final class TileProvider: Sendable {
        /// The attribution to show.
        package let attribution: String
        /// The zoom levels served.
        package let zoomLevels: ClosedRange<Int>
        private let backend: Backend

        private enum Backend: Sendable {
            case archive(MBTilesArchive)
            case upstream(UpstreamTiles)
        }

        /// Opens the archive, or the tile server's cache folder (reading what it already holds).
        package init(_ configuration: TileConfiguration, logger: Logger) throws(RouteKitError) {
            switch configuration.source {
            case .mbtiles(let path):
                let archive = try MBTilesArchive(path: path)
                backend = .archive(archive)
                attribution = configuration.attribution.isEmpty ? archive.attribution : configuration.attribution
                zoomLevels = archive.zoomLevels
            case .upstream(let template):
                let key = SHA256.hash(data: Array(template.utf8)).prefix(8).map { String(format: "%02x", $0) }.joined()
                let cache = try TileDiskCache(
                    directory: configuration.cacheDirectory + "/" + key, limit: configuration.cacheBytes)
                backend = .upstream(
                    UpstreamTiles(
                        template: template, userAgent: configuration.userAgent,
                        timeout: .milliseconds(Int64(configuration.upstreamTimeoutSeconds * 1000)), cache: cache,
                        gate: FetchGate(limit: max(1, configuration.maxConcurrentFetches)), logger: logger))
                attribution = configuration.attribution
                zoomLevels = 0...max(0, min(TileCoordinate.zoomLevels.upperBound, configuration.maximumZoom))
            }
        }

        /// The tile at `coordinate`.
        package func tile(_ coordinate: TileCoordinate) async throws(TileFailure) -> ServedTile {
            guard zoomLevels.contains(coordinate.z) else {
                throw TileFailure(kind: .missing, message: "the basemap has no zoom level \(coordinate.z)")
            }
            switch backend {
            case .archive(let archive):
                let bytes: [UInt8]?
                do {
                    bytes = try archive.tile(z: coordinate.z, x: coordinate.x, y: coordinate.y)
                } catch {
                    throw TileFailure(kind: .upstream, message: error.message)
                }
                guard let bytes else {
                    throw TileFailure(kind: .missing, message: "the MBTiles archive has no tile \(coordinate)")
                }
                return ServedTile(
                    bytes: bytes, contentType: archive.contentType, etag: TileDiskCache.etag(bytes), maxAge: 3600)
            case .upstream(let upstream):
                let tile = try await upstream.tile(coordinate)
                let remaining = Int((tile.meta.expires - Date().timeIntervalSince1970).rounded(.down))
                return ServedTile(
                    bytes: tile.body, contentType: tile.meta.contentType, etag: tile.meta.servedETag,
                    maxAge: max(0, min(remaining, 7 * 86_400)))
            }
        }

        /// The same tiles as a picture's `TileSource` (`routekit render --tiles`).
        package var source: TileSource {
            TileSource(attribution: attribution, zoomLevels: zoomLevels) {
                coordinate async throws(RouteKitError) -> TileImage? in
                do {
                    let tile = try await self.tile(coordinate)
                    return TileImage(bytes: tile.bytes, contentType: tile.contentType)
                } catch let error as TileFailure {
                    if error.kind == .missing { return nil }
                    throw RouteKitError(.unavailable, error.message)
                } catch {
                    throw RouteKitError(.unavailable, "the tile could not be read")
                }
            }
        }
    }

    /// At most `limit` holders at once; the others wait in order.
    actor FetchGate {
        let limit: Int
        private var running = 0
        private var waiting: [CheckedContinuation<Void, Never>] = []

        init(limit: Int) { self.limit = limit }

        func enter() async {
            if running < limit {
                running += 1
                return
            }
            await withCheckedContinuation { waiting.append($0) }
        }

        func leave() {
            if waiting.isEmpty {
                running -= 1
            } else {
                // The place passes to the first waiter.
                waiting.removeFirst().resume()
            }
        }
    }

    /// A tile server, through the disk cache.
    final class UpstreamTiles: Sendable {
        let template: String
        let userAgent: String
        let timeout: TimeAmount
        let cache: TileDiskCache
        let gate: FetchGate
        let logger: Logger
        /// The largest tile accepted from the tile server.
        static let maximumTileBytes = 4 << 20
        /// Fetches under way, by tile: a second request for the same tile waits for the first one's.
        private let inFlight = Locked<[TileCoordinate: Task<Result<CachedTile, TileFailure>, Never>]>([:])

        init(
            template: String, userAgent: String, timeout: TimeAmount, cache: TileDiskCache, gate: FetchGate,
            logger: Logger
        ) {
            self.template = template
            self.userAgent = userAgent
            self.timeout = timeout
            self.cache = cache
            self.gate = gate
            self.logger = logger
        }

        /// The URL of a tile (`{s}`: one of a, b, c, by the tile).
        func url(_ c: TileCoordinate) -> String {
            template.replacingOccurrences(of: "{z}", with: String(c.z))
                .replacingOccurrences(of: "{x}", with: String(c.x))
                .replacingOccurrences(of: "{y}", with: String(c.y))
                .replacingOccurrences(of: "{s}", with: ["a", "b", "c"][(c.x + c.y) % 3])
        }

        func tile(_ c: TileCoordinate) async throws(TileFailure) -> CachedTile {
            let cached = cache.read(c)
            if let cached, cached.meta.expires > Date().timeIntervalSince1970 { return cached }
            let task = inFlight.withLock { tasks -> Task<Result<CachedTile, TileFailure>, Never> in
                if let running = tasks[c] { return running }
                let started = Task { await self.fetch(c, stale: cached) }
                tasks[c] = started
                return started
            }
            return try await task.value.get()
        }

        /// Fetches (or revalidates) one tile, within the gate; the result is cached when the tile server allows.
        private func fetch(_ c: TileCoordinate, stale: CachedTile?) async -> Result<CachedTile, TileFailure> {
            await gate.enter()
            let result = await fetchOnce(c, stale: stale)
            await gate.leave()
            inFlight.withLock { $0[c] = nil }
            return result
        }

        private func fetchOnce(_ c: TileCoordinate, stale: CachedTile?) async -> Result<CachedTile, TileFailure> {
            var request = HTTPClientRequest(url: url(c))
            request.headers.add(name: "User-Agent", value: userAgent)
            request.headers.add(name: "Accept", value: "image/png,image/webp,image/jpeg,image/*;q=0.8")
            if let etag = stale?.meta.etag { request.headers.add(name: "If-None-Match", value: etag) }
            if let modified = stale?.meta.lastModified {
                request.headers.add(name: "If-Modified-Since", value: modified)
            }
            let now = Date().timeIntervalSince1970
            do {
                let response = try await HTTPClient.shared.execute(request, timeout: timeout)
                let freshness = Freshness(
                    cacheControl: response.headers.first(name: "Cache-Control"),
                    expires: response.headers.first(name: "Expires"), age: response.headers.first(name: "Age"),
                    now: now)
                switch response.status.code {
                case 200:
                    let body = try await response.body.collect(upTo: Self.maximumTileBytes)
                    let type = response.headers.first(name: "Content-Type") ?? ""
                    guard type.lowercased().hasPrefix("image/") else {
                        let said = type.isEmpty ? "no type" : type
                        return failed(stale, "the tile server answered \(said), not an image")
                    }
                    let bytes = [UInt8](body.readableBytesView)
                    let tile = CachedTile(
                        meta: CachedTile.Meta(
                            contentType: String(type.split(separator: ";").first ?? "image/png")
                                .trimmingCharacters(in: .whitespaces),
                            etag: response.headers.first(name: "ETag"),
                            lastModified: response.headers.first(name: "Last-Modified"), expires: freshness.expires,
                            servedETag: TileDiskCache.etag(bytes)),
                        body: bytes)
                    if freshness.storable { cache.write(c, tile) }
                    return .success(tile)
                case 304:
                    _ = try? await response.body.collect(upTo: 1 << 16)
                    guard var tile = stale else {
                        return .failure(TileFailure(kind: .upstream, message: "the tile server answered 304 unasked"))
                    }
                    tile.meta.expires = freshness.expires
                    if let etag = response.headers.first(name: "ETag") { tile.meta.etag = etag }
                    if freshness.storable { cache.write(c, tile) }
                    return .success(tile)
                case 404, 410:
                    _ = try? await response.body.collect(upTo: 1 << 16)
                    return .failure(TileFailure(kind: .missing, message: "the tile server has no tile \(c)"))
                default:
                    _ = try? await response.body.collect(upTo: 1 << 16)
                    return failed(stale, "the tile server answered \(response.status.code)")
                }
            } catch {
                // The client's errors are not repeated: some name the URL, which may hold an API key.
                return failed(stale, "the tile server could not be reached or did not answer in time")
            }
        }

        /// A stale copy when there is one (better an old map than none), else the failure.
        private func failed(_ stale: CachedTile?, _ message: String) -> Result<CachedTile, TileFailure> {
            logger.warning("a tile could not be fetched", metadata: ["why": "\(message)"])
            if let stale { return .success(stale) }
            return .failure(TileFailure(kind: .upstream, message: message))
        }
    }

    /// How long a fetched tile may be used without asking again, from the tile server's `Cache-Control`
    /// (`s-maxage`, `max-age`, less `Age`), else `Expires`, else 7 days; `no-store` and `private` are not kept
    /// (the server is a shared cache), `no-cache` is kept and revalidated every time.
    struct Freshness {
        var expires: Double
        var storable: Bool

        init(cacheControl: String?, expires: String?, age: String?, now: Double) {
            storable = true
            let directives = (cacheControl ?? "").lowercased().split(separator: ",").map {
                $0.trimmingCharacters(in: .whitespaces)
            }
            func seconds(_ name: String) -> Double? {
                for d in directives where d.hasPrefix(name + "=") {
                    let value = d.dropFirst(name.count + 1).trimmingCharacters(in: CharacterSet(charactersIn: "\""))
                    if let n = Double(value), n >= 0, n.isFinite { return n }
                }
                return nil
            }
            let aged = Double(age ?? "").map { max(0, $0) } ?? 0
            if directives.contains("no-store") || directives.contains("private") {
                storable = false
                self.expires = now
            } else if directives.contains("no-cache") {
                self.expires = now
            } else if let limit = seconds("s-maxage") ?? seconds("max-age") {
                self.expires = now + limit - aged
            } else if let expires {
                self.expires = Self.httpDate(expires) ?? now
            } else {
                self.expires = now + 7 * 86_400
            }
        }

        /// An IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`) as seconds since 1970.
        static func httpDate(_ text: String) -> Double? {
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(secondsFromGMT: 0)
            formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
            return formatter.date(from: text)?.timeIntervalSince1970
        }
    }

    /// A tile in the disk cache: what was fetched, and how to revalidate it.
    struct CachedTile: Sendable {
        struct Meta: Codable, Sendable {
            var contentType: String
            /// The tile server's, for `If-None-Match`.
            var etag: String?
            /// The tile server's, for `If-Modified-Since`.
            var lastModified: String?
            /// Seconds since 1970 until which the tile is fresh.
            var expires: Double
            /// The entity tag given to browsers (a hash of the bytes).
            var servedETag: String
        }

        var meta: Meta
        var body: [UInt8]
    }

    /// Fetched tiles on disk, one file a tile (`Z/X/Y.tile`: a header line of JSON, then the bytes), at most `limit`
    /// bytes: past it, the least recently used are removed (use is counted in memory, from the files' times when the
    /// server starts).
    final class TileDiskCache: Sendable {
        let directory: String
        let limit: Int
        private let state: Locked<State>

        struct State {
            var entries: [String: Entry] = [:]
            var total = 0
            var tick: UInt64 = 0
        }

        struct Entry {
            var size: Int
            var used: UInt64
        }

        static let magic = Array("RKTILE1\n".utf8)

        init(directory: String, limit: Int) throws(RouteKitError) {
            self.directory = directory
            self.limit = max(1 << 20, limit)
            do {
                try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            } catch {
                throw RouteKitError(.io, "cannot make the tile cache folder", file: directory)
            }
            // What an earlier run left, oldest first.
            var found: [(key: String, size: Int, time: Double)] = []
            let root = URL(fileURLWithPath: directory)
            let keys: [URLResourceKey] = [.fileSizeKey, .contentModificationDateKey, .isRegularFileKey]
            if let walker = FileManager.default.enumerator(at: root, includingPropertiesForKeys: keys) {
                for case let url as URL in walker where url.pathExtension == "tile" {
                    guard let values = try? url.resourceValues(forKeys: Set(keys)), values.isRegularFile == true
                    else { continue }
                    let inside = url.path.hasPrefix(directory + "/")
                    let key = inside ? String(url.path.dropFirst(directory.count + 1)) : url.path
                    found.append(
                        (key, values.fileSize ?? 0, values.contentModificationDate?.timeIntervalSince1970 ?? 0))
                }
            }
            var initial = State()
            for f in found.sorted(by: { $0.time < $1.time }) {
                initial.tick += 1
                initial.entries[f.key] = Entry(size: f.size, used: initial.tick)
                initial.total += f.size
            }
            state = Locked(initial)
            evictIfNeeded()
        }

        static func key(_ c: TileCoordinate) -> String { "\(c.z)/\(c.x)/\(c.y).tile" }

        /// A weak-free entity tag from the bytes.
        static func etag(_ bytes: [UInt8]) -> String {
            "\"" + SHA256.hash(data: bytes).prefix(10).map { String(format: "%02x", $0) }.joined() + "\""
        }

        /// The cached tile, fresh or not; `nil` when there is none (or its file cannot be read).
        func read(_ c: TileCoordinate) -> CachedTile? {
            let key = Self.key(c)
            let known = state.withLock { s -> Bool in
                guard s.entries[key] != nil else { return false }
                s.tick += 1
                s.entries[key]?.used = s.tick
                return true
            }
            guard known, let data = FileManager.default.contents(atPath: directory + "/" + key) else { return nil }
            let bytes = [UInt8](data)
            guard bytes.starts(with: Self.magic), let newline = bytes[Self.magic.count...].firstIndex(of: 0x0A) else {
                return nil
            }
            let header = Data(bytes[Self.magic.count..<newline])
            guard let meta = try? JSONDecoder().decode(CachedTile.Meta.self, from: header) else { return nil }
            return CachedTile(meta: meta, body: Array(bytes[(newline + 1)...]))
        }

        /// Stores a tile (a temporary file renamed into place, so a reader never sees half of one), then removes
        /// the least recently used tiles while the cache holds more than its limit.
        func write(_ c: TileCoordinate, _ tile: CachedTile) {
            let key = Self.key(c)
            let path = directory + "/" + key
            guard let header = try? JSONEncoder().encode(tile.meta) else { return }
            var bytes = Self.magic
            bytes.append(contentsOf: header)
            bytes.append(0x0A)
            bytes.append(contentsOf: tile.body)
            let folder = (path as NSString).deletingLastPathComponent
            try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            let temporary = path + ".\(UUID().uuidString.prefix(8)).part"
            guard FileManager.default.createFile(atPath: temporary, contents: Data(bytes)) else {
                logger.warning("the tile cache cannot be written", metadata: ["folder": "\(directory)"])
                return
            }
            guard rename(temporary, path) == 0 else {
                unlink(temporary)
                return
            }
            state.withLock { s in
                s.tick += 1
                s.total += bytes.count - (s.entries[key]?.size ?? 0)
                s.entries[key] = Entry(size: bytes.count, used: s.tick)
            }
            evictIfNeeded()
        }

        /// Removes the least recently used tiles until the cache holds at most 90% of its limit, when it holds more
        /// than the limit.
        func evictIfNeeded() {
            let victims = state.withLock { s -> [String] in
                guard s.total > limit else { return [] }
                var out: [String] = []
                for (key, entry) in s.entries.sorted(by: { $0.value.used < $1.value.used }) {
                    if s.total <= limit / 10 * 9 { break }
                    s.total -= entry.size
                    s.entries[key] = nil
                    out.append(key)
                }
                return out
            }
            for key in victims { unlink(directory + "/" + key) }
        }

        /// Bytes held (tests).
        var totalBytes: Int { state.withLock { $0.total } }

        private let logger = Logger(label: "routekit.tiles")
    }
#endif
