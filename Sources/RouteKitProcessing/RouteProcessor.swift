import Foundation
public import RouteKit
public import RouteKitGEOS

/// Metadata keys the pipeline writes on the versions it saves.
public enum PipelineMetadataKey {
    /// The stages that ran (`"outliers,smoothing,simplification"`).
    public static let pipeline = "pipeline"
    /// The hash of the stages and every parameter (``PipelineConfiguration/parameterHash``).
    public static let pipelineHash = "pipelineHash"
}

/// What processing one stored route did (the shape of `routekit smooth --json`).
public struct ProcessOutcome: Sendable, Hashable {
    /// The route asked for.
    public var route: UUID
    /// The version saved, `nil` when skipped.
    public var newRoute: UUID?
    /// Its sync version.
    public var syncVersion: Int64?
    /// What the pipeline did.
    public var metrics: PipelineMetrics?
    /// Why nothing was saved (already processed with these parameters, claimed by another worker, …).
    public var skipped: String?
}

/// Runs the pipeline on stored routes and saves each result as a new version of the same route, on behalf of
/// its source (DESIGN.md, "Identity" and "Processing pipeline"):
///
/// - always from the raw version (the original import), never from an already-processed one;
/// - version = current + 1, with metadata `derivedFrom` (`uuid@version` of the raw input), `pipeline` and
///   `pipelineHash`, and the metrics;
/// - (sync identifier, raw version, parameter hash) is the idempotency key: a second run with the same
///   parameters saves nothing;
/// - each route is claimed for the time it is processed (``RouteStore/claimWork(key:holder:seconds:)``), so
///   workers in several processes or on several machines never double up, and a dead worker's claim expires;
/// - the new version is saved whole, with the claim given up, in one transaction: a worker killed before it
///   leaves nothing behind, and the next run recomputes.
///
/// One processor per worker task; the GEOS context is the worker's.
public final class RouteProcessor {
    /// The store.
    public let store: any RouteStore
    /// The pipeline.
    public let pipeline: RoutePipeline
    /// This worker's identity in claims.
    public let worker: UUID
    /// How long a claim lasts.
    public let leaseSeconds: Double

    /// Creates a processor.
    public init(store: any RouteStore, pipeline: RoutePipeline, worker: UUID = UUID(), leaseSeconds: Double = 300) {
        self.store = store
        self.pipeline = pipeline
        self.worker = worker
        self.leaseSeconds = leaseSeconds
    }

    /// Processes one route.
    /// - Throws: ``RouteKitError/Code/notFound`` for an unknown route, ``RouteKitError/Code/invalidArgument``
    ///   naming the current version when the route is not current; store and GEOS errors.
    public func process(_ id: UUID, context: GEOSContext) async throws(RouteKitError) -> ProcessOutcome {
        guard let route = try await store.route(id: id) else { throw RouteKitError(.notFound, "no route \(id)") }
        let current = try await store.routes(
            matching: RouteFilter(source: route.source, syncIdentifier: route.sync.identifier)
        ).first
        guard let current, current.id == id else {
            let name = current.map { "\($0.id) (version \($0.sync.version))" } ?? "none (deleted)"
            throw RouteKitError(
                .invalidArgument,
                "route \(id) is not the current version of its sync identifier; the current one is \(name)")
        }
        guard let raw = try await store.rawRoute(source: route.source, syncIdentifier: route.sync.identifier) else {
            throw RouteKitError(.notFound, "route \(id) has no raw version to process")
        }
        let hash = pipeline.configuration.parameterHash
        let derivedFrom = "\(raw.id.uuidString.lowercased())@\(raw.sync.version)"
        if case .string(hash)? = current.metadata[PipelineMetadataKey.pipelineHash],
            case .string(derivedFrom)? = current.metadata[MetadataKey.derivedFrom]
        {
            return ProcessOutcome(route: id, skipped: "already processed with these parameters")
        }
        let key = "pipeline/\(route.source.name)/\(route.sync.identifier)/\(raw.sync.version)/\(hash)"
        guard try await store.claimWork(key: key, holder: worker, seconds: leaseSeconds) else {
            return ProcessOutcome(route: id, skipped: "another worker is processing it")
        }
        do {
            // Saving gives the claim up in the same transaction.
            return try await run(route: route, raw: raw, current: current, key: key, context: context)
        } catch {
            try? await store.releaseWork(key: key, holder: worker)
            throw error
        }
    }

    private func run(route: RouteSample, raw: RouteSample, current: RouteSample, key: String, context: GEOSContext)
        async throws(RouteKitError) -> ProcessOutcome
    {
        var locations: [Location] = []
        locations.reserveCapacity(raw.locationCount)
        // Batches of one stored chunk are handed over without a copy; one append each.
        for try await batch in store.locations(of: raw.id, batchSize: RouteBuilder.chunkSize) {
            locations += batch.locations
        }
        let workout = try await store.workout(id: route.workoutID)
        let result = try pipeline.run(
            locations, activity: workout?.activityType ?? .other, context: context)
        guard !result.locations.isEmpty else { return ProcessOutcome(route: route.id, skipped: "no location left") }
        let m = result.metrics
        var metadata = current.metadata.filter { $0.key.hasPrefix("gpx") }
        metadata[MetadataKey.derivedFrom] = .string("\(raw.id.uuidString.lowercased())@\(raw.sync.version)")
        metadata[PipelineMetadataKey.pipeline] = .string(pipeline.configuration.stageList)
        metadata[PipelineMetadataKey.pipelineHash] = .string(pipeline.configuration.parameterHash)
        metadata["pointsIn"] = .integer(Int64(m.pointsIn))
        metadata["pointsOut"] = .integer(Int64(m.pointsOut))
        metadata["maxDeviationMetres"] = .double(m.maxDeviationMetres)
        metadata["smoothingRmsMetres"] = .double(m.smoothingRmsMetres)
        metadata["lengthInMetres"] = .double(m.lengthInMetres)
        metadata["lengthOutMetres"] = .double(m.lengthOutMetres)
        // Segment starts index the raw route's points: only their first (0) still means anything.
        metadata["gpxSegmentStarts"] = nil
        guard let workout else { throw RouteKitError(.notFound, "workout \(route.workoutID) is gone") }
        // The whole result is in memory: one transaction saves it and gives the claim up (a kill before it leaves
        // nothing; the next run recomputes).
        var chunks: [StoredChunk] = []
        var start = 0
        while start < result.locations.count {
            let end = min(start + RouteBuilder.chunkSize, result.locations.count)
            chunks.append(.locations(Array(result.locations[start..<end]), sequence: chunks.count))
            start = end
        }
        let times = result.locations.compactMap(\.timestamp)
        metadata[MetadataKey.syncIdentifier] = nil
        metadata[MetadataKey.syncVersion] = nil
        let version = RouteSample(
            workoutID: workout.id, source: route.source,
            sync: SyncIdentity(identifier: route.sync.identifier, version: current.sync.version + 1),
            start: times.min { $0.instant < $1.instant }, end: times.max { $0.instant < $1.instant },
            locationCount: result.locations.count, metadata: metadata)
        let outcome = try await store.saveRoute(version, chunks: chunks, releasing: WorkClaim(key: key, holder: worker))
        guard let saved = outcome.savedID else {
            return ProcessOutcome(route: route.id, skipped: "a newer version was saved meanwhile")
        }
        return ProcessOutcome(route: route.id, newRoute: saved, syncVersion: current.sync.version + 1, metrics: m)
    }
}
