package import Foundation
package import RouteKit
internal import RouteKitGEOS
package import RouteKitProcessing

/// The batch job of smoothing stored routes, as `routekit smooth --all` and `POST /v1/jobs` run it: workers take
/// routes in small batches (``RouteProcessor/batchSize(pending:workers:)``, one claim transaction each), run the
/// pipeline on a GEOS thread of their own (never on the cooperative threads every task shares), and save each
/// result as a new version of the route (``RouteProcessor``: claims, idempotency, one transaction per version).
package struct SmoothingJob: Sendable {
    /// Counts of a job's routes so far.
    package struct Tally: Sendable, Hashable {
        /// Routes asked for.
        package var total: Int
        /// Routes with an outcome.
        package var done = 0
        /// New versions saved.
        package var saved = 0
        /// Routes skipped (already processed with these parameters, claimed by another worker, no location left).
        package var skipped = 0
        /// Routes that failed.
        package var failed = 0
        /// Locations read, in the routes processed.
        package var pointsIn = 0
        /// Locations saved, in the new versions.
        package var pointsOut = 0

        /// No route done yet.
        package init(total: Int) { self.total = total }

        /// Counts one route's outcome.
        package mutating func record(_ result: Result<ProcessOutcome, RouteKitError>) {
            done += 1
            switch result {
            case .success(let outcome):
                if outcome.newRoute != nil { saved += 1 } else { skipped += 1 }
                pointsIn += outcome.metrics?.pointsIn ?? 0
                pointsOut += outcome.metrics?.pointsOut ?? 0
            case .failure: failed += 1
            }
        }

        /// Adds another job's counts (`routekit smooth --all-people`: one job per person, and a total).
        package mutating func add(_ other: Tally) {
            total += other.total
            done += other.done
            saved += other.saved
            skipped += other.skipped
            failed += other.failed
            pointsIn += other.pointsIn
            pointsOut += other.pointsOut
        }
    }

    /// The store whose routes are processed.
    package let store: any RouteStore
    /// The pipeline.
    package let pipeline: RoutePipeline
    /// The routes (current versions).
    package let routes: [UUID]
    /// Workers processing routes at the same time, each with a GEOS thread.
    package let workers: Int
    /// How long a worker's claim on a route lasts before another may take it.
    package let leaseSeconds: Double

    /// A job; nothing runs before ``run(each:)``.
    package init(store: any RouteStore, pipeline: RoutePipeline, routes: [UUID], workers: Int, leaseSeconds: Double) {
        self.store = store
        self.pipeline = pipeline
        self.routes = routes
        self.workers = max(1, workers)
        self.leaseSeconds = leaseSeconds
    }

    /// Linux keeps 15 characters of a thread's name.
    static let threadName = "rk-smooth-geos"

    /// Processes every route; stops taking new ones when the calling task is cancelled.
    /// - Parameter each: called with each route, its outcome and the counts so far (themselves included) as soon as
    ///   the outcome is known, from the workers' tasks (several at a time with several workers).
    /// - Returns: the counts at the end.
    /// - Throws: ``RouteKitError/Code/geos`` when no GEOS thread could be started.
    @discardableResult
    package func run(each: @escaping @Sendable (UUID, Result<ProcessOutcome, RouteKitError>, Tally) async -> Void)
        async throws(RouteKitError) -> Tally
    {
        let routes = self.routes
        let count = min(workers, max(1, routes.count))
        var threads: [GEOSThread] = []
        for _ in 0..<count { threads.append(try GEOSThread(name: Self.threadName)) }
        defer { for thread in threads { thread.close() } }
        let next = Locked(0)
        let tally = Locked(Tally(total: routes.count))
        let (store, pipeline, leaseSeconds, workers) = (store, pipeline, leaseSeconds, count)
        await withTaskGroup(of: Void.self) { group in
            for thread in threads {
                group.addTask {
                    let processor = RouteProcessor(store: store, pipeline: pipeline, leaseSeconds: leaseSeconds)
                    while !Task.isCancelled {
                        let batch: ArraySlice<UUID> = next.withLock { i in
                            let n = RouteProcessor.batchSize(pending: routes.count - i, workers: workers)
                            defer { i += n }
                            return routes[i..<i + n]
                        }
                        if batch.isEmpty { break }
                        let ids = Array(batch)
                        await processor.process(ids, on: thread) { index, result in
                            let counts = tally.withLock { t in
                                t.record(result)
                                return t
                            }
                            await each(ids[index], result, counts)
                        }
                    }
                }
            }
        }
        return tally.withLock { $0 }
    }
}
