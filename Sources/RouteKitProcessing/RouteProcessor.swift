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
/// its source (<doc:ProcessingPipeline>):
///
/// - always from the raw version (the original import), never from an already-processed one;
/// - version = current + 1, with metadata `derivedFrom` (`uuid@version` of the raw input), `pipeline` and
///   `pipelineHash`, and the metrics;
/// - (sync identifier, raw version, parameter hash) is the idempotency key: a second run with the same
///   parameters saves nothing;
/// - each route is claimed for the time it is processed (`RouteStore.claimWork(key:holder:seconds:)`), so
///   workers in several processes or on several machines never double up, and a dead worker's claim expires;
/// - the new version is saved whole, with the claim given up, in one transaction: a worker killed before it
///   leaves nothing behind, and the next run recomputes.
///
/// One processor per worker task; the GEOS context is the worker's.
public final class RouteProcessor {
    /// The store.
    package let store: any RouteStore
    /// The pipeline.
    package let pipeline: RoutePipeline
    /// This worker's identity in claims.
    package let worker: UUID
    /// How long a claim lasts.
    public let leaseSeconds: Double
    /// How long a claim lasts unless told otherwise: 5 minutes.
    public static let defaultLeaseSeconds: Double = 300

    /// Creates a processor.
    public init(
        store: any RouteStore, pipeline: RoutePipeline, worker: UUID = UUID(),
        leaseSeconds: Double = RouteProcessor.defaultLeaseSeconds
    ) {
        self.store = store
        self.pipeline = pipeline
        self.worker = worker
        self.leaseSeconds = leaseSeconds
    }

    /// Processes one route.
    /// - Throws: `RouteKitError.Code.notFound` for an unknown route, `RouteKitError.Code.invalidArgument`
    ///   naming the current version when the route is not current; store and GEOS errors.
    public func process(_ id: UUID, context: GEOSContext) async throws(RouteKitError) -> ProcessOutcome {
        guard let outcome = await process([id], context: context).first else {
            throw RouteKitError(.storage, "processing route \(id) produced no outcome")
        }
        return try outcome.get()
    }

    /// How many routes a worker takes at a time when `pending` are left for `workers`: up to 8 (one claim
    /// transaction each), fewer as the queue runs low so that the workers finish together.
    public static func batchSize(pending: Int, workers: Int) -> Int {
        min(8, max(1, pending / (4 * max(1, workers))), pending)
    }

    /// Processes several routes one after the other, claiming all of them first in one short transaction
    /// (`RouteStore.claimWork(keys:holder:seconds:)`): a batch worker pays for one claim per batch, not one per
    /// route. Keep batches small enough that the last route starts well within the lease.
    ///
    /// - Parameters:
    ///   - ids: the routes, each the current version of its sync identifier.
    ///   - context: the worker's GEOS context.
    ///   - each: called with each route's index and result as soon as it is known (for progress).
    /// - Returns: one result per id, in order; an error for one route does not stop the others.
    @discardableResult
    public func process(
        _ ids: [UUID], context: GEOSContext,
        each: (Int, Result<ProcessOutcome, RouteKitError>) async -> Void = { _, _ in }
    ) async -> [Result<ProcessOutcome, RouteKitError>] {
        await process(ids, compute: .inline(context), each: each)
    }

    /// Processes several routes as ``process(_:context:each:)`` does, with the pipeline (the smoothing and GEOS's
    /// simplification) run on `thread` instead of the calling task's thread: what a server's job workers use, so
    /// that a long route never holds one of the cooperative threads every request shares.
    @discardableResult
    public func process(
        _ ids: [UUID], on thread: GEOSThread,
        each: (Int, Result<ProcessOutcome, RouteKitError>) async -> Void = { _, _ in }
    ) async -> [Result<ProcessOutcome, RouteKitError>] {
        await process(ids, compute: .thread(thread), each: each)
    }

    /// Where the pipeline runs.
    enum Compute {
        /// On the calling thread, with the worker's context.
        case inline(GEOSContext)
        /// On a GEOS thread of its own.
        case thread(GEOSThread)
    }

    private func process(
        _ ids: [UUID], compute: Compute, each: (Int, Result<ProcessOutcome, RouteKitError>) async -> Void
    ) async -> [Result<ProcessOutcome, RouteKitError>] {
        var results: [Result<ProcessOutcome, RouteKitError>?] = Array(repeating: nil, count: ids.count)
        var plans: [(index: Int, plan: Plan)] = []
        var zones: [Source: [PrivacyZone]] = [:]
        for (i, id) in ids.enumerated() {
            do throws(RouteKitError) {
                switch try await plan(id, zones: &zones) {
                case .done(let outcome):
                    results[i] = .success(outcome)
                    await each(i, .success(outcome))
                case .process(let plan): plans.append((i, plan))
                }
            } catch {
                results[i] = .failure(error)
                await each(i, .failure(error))
            }
        }
        var held: Set<String> = []
        if !plans.isEmpty {
            do throws(RouteKitError) {
                held = try await store.claimWorkBatch(plans.map(\.plan.key), holder: worker, seconds: leaseSeconds)
            } catch {
                for (i, _) in plans {
                    results[i] = .failure(error)
                    await each(i, .failure(error))
                }
                plans = []
            }
        }
        for (i, plan) in plans {
            let result: Result<ProcessOutcome, RouteKitError>
            if !held.contains(plan.key) {
                result = .success(ProcessOutcome(route: ids[i], skipped: "another worker is processing it"))
            } else {
                do throws(RouteKitError) {
                    // Saving gives the claim up in the same transaction.
                    result = .success(try await run(plan, compute: compute))
                } catch {
                    try? await store.releaseWorkClaim(plan.key, holder: worker)
                    result = .failure(error)
                }
            }
            results[i] = result
            await each(i, result)
        }
        return results.enumerated().map { i, r in
            r ?? .failure(RouteKitError(.storage, "route \(ids[i]) was left unprocessed"))
        }
    }

    /// What processing a route needs, found before claiming it.
    struct Plan {
        var route: RouteSample
        var raw: RouteSample
        var current: RouteSample
        var key: String
        var pipeline: RoutePipeline
    }

    enum Step {
        case done(ProcessOutcome)
        case process(Plan)
    }

    /// `zones`: the privacy zones of the sources seen so far in the batch (read once per source).
    private func plan(_ id: UUID, zones known: inout [Source: [PrivacyZone]]) async throws(RouteKitError) -> Step {
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
        // The source's privacy zones join the run (and its parameter hash): a user's zones apply to every route
        // of theirs that is processed, and changing them makes the next run process the routes again.
        var pipeline = self.pipeline
        let zones: [PrivacyZone]
        if let cached = known[route.source] {
            zones = cached
        } else {
            zones = try await store.privacyZones(of: route.source)
            known[route.source] = zones
        }
        if !zones.isEmpty {
            var configuration = pipeline.configuration
            configuration.privacyZones += zones.filter { !configuration.privacyZones.contains($0) }
            if !configuration.stages.contains(.privacy) { configuration.stages.append(.privacy) }
            pipeline = RoutePipeline(configuration: configuration)
        }
        let hash = pipeline.configuration.parameterHash
        let derivedFrom = "\(raw.id.uuidString.lowercased())@\(raw.sync.version)"
        if case .string(hash)? = current.metadata[PipelineMetadataKey.pipelineHash],
            case .string(derivedFrom)? = current.metadata[MetadataKey.derivedFrom]
        {
            return .done(ProcessOutcome(route: id, skipped: "already processed with these parameters"))
        }
        let key = "pipeline/\(route.source.name)/\(route.sync.identifier)/\(raw.sync.version)/\(hash)"
        return .process(Plan(route: route, raw: raw, current: current, key: key, pipeline: pipeline))
    }

    private func run(_ plan: Plan, compute: Compute) async throws(RouteKitError) -> ProcessOutcome {
        let (route, raw, current, key, pipeline) = (plan.route, plan.raw, plan.current, plan.key, plan.pipeline)
        var locations: [Location] = []
        locations.reserveCapacity(raw.locationCount)
        // Batches of one stored chunk are handed over without a copy; one append each.
        for try await batch in store.locations(of: raw.id, batchSize: RouteBuilder.chunkSize) {
            locations += batch.locations
        }
        let workout = try await store.workout(id: route.workoutID)
        let activity = workout?.activityType ?? .other
        let result: PipelineResult
        switch compute {
        case .inline(let context):
            result = try pipeline.run(locations, activity: activity, context: context)
        case .thread(let thread):
            let input = locations
            locations = []
            result = try await thread.perform { context throws(RouteKitError) in
                try pipeline.run(input, activity: activity, context: context)
            }
        }
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
        let times = result.locations.compactMap(\.timestamp)
        metadata[MetadataKey.syncIdentifier] = nil
        metadata[MetadataKey.syncVersion] = nil
        let version = RouteSample(
            workoutID: workout.id, source: route.source,
            sync: SyncIdentity(identifier: route.sync.identifier, version: current.sync.version + 1),
            start: times.min { $0.instant < $1.instant }, end: times.max { $0.instant < $1.instant },
            locationCount: result.locations.count, metadata: metadata)
        let outcome = try await store.saveWholeRoute(
            version, locations: result.locations, releasingWork: key, holder: worker)
        guard let saved = outcome.savedID else {
            return ProcessOutcome(route: route.id, skipped: "a newer version was saved meanwhile")
        }
        return ProcessOutcome(route: route.id, newRoute: saved, syncVersion: current.sync.version + 1, metrics: m)
    }
}
