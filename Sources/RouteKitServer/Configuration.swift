#if Server
    import Foundation
    public import RouteKitImport

    /// How `routekit serve` runs: where it listens and the limits that keep one client from holding the server.
    public struct ServerConfiguration: Sendable {
        /// The address to listen on (`127.0.0.1`: this machine only; `0.0.0.0`: every interface).
        public var host = "127.0.0.1"
        /// The port (0: any free port, see ``RouteKitServer/RouteKitServer/makeApplication(services:onListening:)``).
        public var port = 8080
        /// The largest upload accepted, in bytes (`413` above it; decided from `Content-Length` when the client
        /// sends one, before the body is read).
        public var maxUploadBytes = 512 << 20
        /// The largest a gzip-compressed upload may grow when decompressed (gzip bombs get `413`).
        package var maxDecompressedBytes = 2 << 30
        /// The limits an uploaded zip archive (a Strava or Apple Health export among them) is read within: entries
        /// listed, the largest entry, all entries together, the compression ratio.
        public var archiveLimits = ArchiveLimits()
        /// The largest batch of locations a route builder accepts in one request, in bytes.
        package var maxBatchBytes = 16 << 20
        /// Where uploads are spooled while they arrive (deleted once imported). Default: the system's temporary
        /// folder.
        package var uploadDirectory: String = NSTemporaryDirectory()
        /// The longest a long-poll (`GET /v1/changes?wait=S`) waits, in seconds.
        package var maxWaitSeconds = 55
        /// How often an idle event stream gets a comment, in seconds.
        package var heartbeatSeconds = 15.0
        /// The most change sets' worth of routes a client may ask for at once (`limit`).
        package var maxLimit = 5_000
        /// The most event streams one token may hold open (`429` beyond).
        public var maxStreamsPerToken = 4
        /// The most event streams one person may hold open over all their tokens (`429` beyond).
        public var maxStreamsPerPerson = 64
        /// The most uploads (`POST /v1/uploads`) one person may make in a minute (`429` with `Retry-After` beyond):
        /// one person cannot take the server's import capacity from everyone else.
        public var maxUploadsPerMinutePerPerson = 120
        /// The most bytes one person may keep in the store (`routekit serve --max-storage-per-person-mb`), as
        /// `PeopleStore.storageUsed(by:)` measures them: their routes' locations, series, attachments, workouts' and
        /// routes' records and pending builders' batches. A person at or over it gets `507 storage-quota` for an
        /// upload (before its body is read), a new route builder or a builder's batch of locations or samples; what
        /// they stored stays readable, deletable and exportable, and a pending builder can still be finished. The
        /// check is made before a write, not during it: the upload that crosses the line is stored whole, and the
        /// next one is refused. `nil` (the default): no limit.
        public var maxStoredBytesPerPerson: Int64?
        /// How long a person's measured storage is trusted, in seconds, before the next check measures it again
        /// (their own upload has it measured again at once): a deletion made through another server counts within it.
        package var storageMeasureSeconds = 10.0
        /// Pictures (`/v1/routes/ID/picture`) drawn at once; beyond, `503` with `Retry-After` (drawing a
        /// million-point route takes half a second of a core).
        public var maxConcurrentPictures = max(1, ProcessInfo.processInfo.activeProcessorCount)
        /// How long a connection may stay idle before the server closes it, in seconds.
        public var idleTimeoutSeconds = 75.0
        /// How long a request's head (its request line and headers) may take to arrive, in seconds, counted from the
        /// connection's start or, on a kept-alive connection, from the idle timeout's end after the last response. A
        /// client still sending headers then is disconnected (otherwise only the idle timeout would cut a client
        /// sending its headers a byte at a time). Bodies and responses are not limited by it.
        public var headerTimeoutSeconds = 30.0
        /// Uploads imported at once; beyond, `503` with `Retry-After` (before the body is read). Each import's memory
        /// is bounded (a few MiB whatever the file: every reader streams), so the default follows the machine's
        /// memory: a quarter of it at 64 MiB an import, from 2 to 256.
        public var maxConcurrentImports = ServerConfiguration.defaultConcurrentImports
        /// The default of ``maxConcurrentImports`` on this machine.
        package static var defaultConcurrentImports: Int {
            Int(clamping: min(256, max(2, ProcessInfo.processInfo.physicalMemory / 4 / (64 << 20))))
        }
        /// The slowest a request body may arrive, in bytes a second, measured over ``bodyRateWindowSeconds`` of the
        /// server waiting for it: a slower body is answered `408` and its connection closed (a client trickling a
        /// byte every few seconds would otherwise hold a connection, and its upload slot, for as long as it liked).
        /// 0 turns the check off.
        public var minimumBodyBytesPerSecond = 512
        /// The time over which ``minimumBodyBytesPerSecond`` is measured, in seconds.
        public var bodyRateWindowSeconds = 30.0
        /// The most connections one client address may hold open at once; a connection past it is closed as soon as
        /// it opens. `nil` (the default): no limit, as behind a reverse proxy, where every client has the proxy's
        /// address.
        public var maxConnectionsPerAddress: Int?
        /// How long a pending route builder may go without a batch before the server discards it, in seconds (an
        /// interrupted upload or recording leaves one): 24 hours by default; `nil` keeps them until discarded by
        /// hand (`routekit discard`).
        public var pendingBuilderExpirySeconds: Double? = 86_400
        /// How often a running job's progress is saved to a store that keeps jobs, in seconds (and how soon it sees
        /// a request to stop it made through another server).
        package var jobSaveSeconds = 1.0

        /// The basemap's tiles (`routekit serve --tiles`), served at `/tiles/{z}/{x}/{y}` to the web view; `nil`:
        /// none, and the page draws the route on its own plain map.
        package var tiles: TileProvider?
        /// Where Leaflet's files are (Debian's `libjs-leaflet`), served at `/static/leaflet/`; the web view draws a
        /// slippy map with them when there are tiles too. `nil`, or a folder without them: the page's own map.
        package var leafletDirectory: String? = "/usr/share/javascript/leaflet"

        /// An identity provider whose JWTs are accepted beside RouteKit's own tokens (`routekit serve --jwks`), as the
        /// person of their subject (see ``IdentityProvider``); `nil` (the default): RouteKit's tokens only. Call its
        /// ``IdentityProvider/load()`` before serving.
        public var identityProvider: IdentityProvider?

        /// Whether webhook receivers on loopback and private networks (and link-local, carrier-grade NAT and unique
        /// local addresses) are allowed (`routekit serve --webhooks-allow-private`): for tests and a local network.
        /// Off by default: such a subscription is refused with `422`, and such a delivery pauses its subscription.
        public var webhooksAllowPrivate = false
        /// How webhooks are delivered: limits, retries, timeouts (tests make them short).
        package var webhooks = WebhookSettings()

        /// The defaults.
        public init() {}
    }
#endif
