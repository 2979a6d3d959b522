#if Server
    import Foundation
    import HTTPTypes
    import Hummingbird
    import Logging
    import NIOCore
    import RouteKit
    import RouteKitGEOS
    import RouteKitProcessing

    /// Smoothing jobs over HTTP (`admin` scope): `POST /v1/jobs` starts the batch job of `routekit smooth` for given
    /// routes or every current one and answers `202` with the job; `GET /v1/jobs/ID` reports progress and each
    /// route's outcome; `DELETE /v1/jobs/ID` cancels it. Workers claim routes through the store's leases, so several
    /// servers and `routekit smooth` processes share the work, and a second run with the same parameters saves
    /// nothing. Jobs live in the server's memory (a restart forgets them; the routes they saved stay).
    final class JobRegistry: Sendable {
        struct Job: Sendable {
            var id: UUID
            var state: String
            var total: Int
            var done = 0
            var saved = 0
            var skipped = 0
            var failed = 0
            var outcomes: [JobOutcome] = []
            var created: Date
            var finished: Date?
            var task: Task<Void, Never>?
        }

        let jobs = Locked<[UUID: Job]>([:])

        func update(_ id: UUID, _ body: (inout Job) -> Void) {
            jobs.withLock { all in
                if var job = all[id] {
                    body(&job)
                    all[id] = job
                }
            }
        }

        func job(_ id: UUID) -> Job? { jobs.withLock { $0[id] } }
    }

    /// The next route a job's workers take.
    final class Cursor: Sendable {
        let next = Locked(0)
    }

    /// One route's outcome in a job.
    struct JobOutcome: Sendable, Encodable {
        var route: String
        var newRoute: String?
        var syncVersion: Int64?
        var skipped: String?
        var error: String?
        var pointsIn: Int?
        var pointsOut: Int?
    }

    struct JobRoutes: Sendable {
        let store: any RouteStore
        let registry: JobRegistry
        let logger: Logger

        struct StartBody: Decodable {
            var routes: [String]?
            var source: String?
            var workers: Int?
            var configuration: PipelineConfiguration?
        }

        struct JobJSON: Encodable {
            var id: String
            var state: String
            var total: Int
            var done: Int
            var saved: Int
            var skipped: Int
            var failed: Int
            var created: String
            var finished: String?
            var outcomes: [JobOutcome]

            init(_ j: JobRegistry.Job) {
                id = j.id.uuidString.lowercased()
                state = j.state
                total = j.total
                done = j.done
                saved = j.saved
                skipped = j.skipped
                failed = j.failed
                created = Timestamp(j.created).iso8601
                finished = j.finished.map { Timestamp($0).iso8601 }
                outcomes = j.outcomes
            }
        }

        func start(_ request: Request, context: RouteKitRequestContext) async throws -> Response {
            _ = try context.require(.admin)
            let bytes = try await request.body.collect(upTo: 4 << 20)
            var body = StartBody()
            if bytes.readableBytes > 0 {
                do {
                    body = try JSONDecoder().decode(StartBody.self, from: Data(bytes.readableBytesView))
                } catch {
                    throw Problem.badRequest(
                        "the body is not a job: {\"routes\": [uuid…]} or {\"source\": \"…\"} (every current route "
                            + "when neither is given), with \"workers\" and a pipeline \"configuration\" as "
                            + "`routekit smooth --json` shows it")
                }
            }
            let workers = body.workers ?? 1
            guard (1...8).contains(workers) else { throw Problem.badRequest("'workers' must be from 1 to 8") }
            let ids: [UUID]
            if let texts = body.routes {
                ids = try texts.map { text throws(Problem) in
                    guard let id = UUID(uuidString: text) else { throw Problem.badRequest("'\(text)' is not a uuid") }
                    return id
                }
            } else {
                ids = try await store.routes(matching: RouteFilter(source: try Query.source(body.source))).map(\.id)
            }
            let pipeline = RoutePipeline(configuration: body.configuration ?? PipelineConfiguration())
            let id = UUID()
            let job = JobRegistry.Job(id: id, state: "running", total: ids.count, created: Date())
            registry.jobs.withLock { $0[id] = job }
            let task = Task { [store, registry, logger] in
                await Self.run(id, ids, pipeline, workers: workers, store: store, registry: registry, logger: logger)
            }
            registry.update(id) { $0.task = task }
            return JSONBody.response(
                JobJSON(job), status: .accepted, headers: [.location: "/v1/jobs/\(id.uuidString.lowercased())"])
        }

        static func run(
            _ id: UUID, _ ids: [UUID], _ pipeline: RoutePipeline, workers: Int, store: any RouteStore,
            registry: JobRegistry, logger: Logger
        ) async {
            let cursor = Cursor()
            await withTaskGroup(of: Void.self) { group in
                for _ in 0..<min(workers, max(1, ids.count)) {
                    group.addTask {
                        // The pipeline runs on a GEOS thread of the worker's own, not on the cooperative threads
                        // that serve requests.
                        let thread: GEOSThread
                        do {
                            thread = try GEOSThread(name: "routekit-job-geos")
                        } catch {
                            logger.error("a job worker could not start GEOS", metadata: ["job": "\(id)"])
                            return
                        }
                        let processor = RouteProcessor(store: store, pipeline: pipeline)
                        while !Task.isCancelled {
                            let batch: [UUID] = cursor.next.withLock { i in
                                let n = RouteProcessor.batchSize(pending: ids.count - i, workers: workers)
                                defer { i += n }
                                return Array(ids[i..<i + n])
                            }
                            if batch.isEmpty { break }
                            await processor.process(batch, on: thread) { index, result in
                                var outcome = JobOutcome(route: batch[index].uuidString.lowercased())
                                registry.update(id) { job in
                                    job.done += 1
                                    switch result {
                                    case .success(let o):
                                        outcome.newRoute = o.newRoute?.uuidString.lowercased()
                                        outcome.syncVersion = o.syncVersion
                                        outcome.skipped = o.skipped
                                        outcome.pointsIn = o.metrics?.pointsIn
                                        outcome.pointsOut = o.metrics?.pointsOut
                                        if o.skipped != nil { job.skipped += 1 } else { job.saved += 1 }
                                    case .failure(let error):
                                        outcome.error = "\(error.code): \(error.message)"
                                        job.failed += 1
                                    }
                                    // The first 10,000 outcomes (every count stays exact).
                                    if job.outcomes.count < 10_000 { job.outcomes.append(outcome) }
                                }
                            }
                        }
                    }
                }
            }
            registry.update(id) { job in
                job.state = Task.isCancelled ? "cancelled" : "finished"
                job.finished = Date()
                job.task = nil
            }
        }

        func get(_ request: Request, context: RouteKitRequestContext) async throws -> Response {
            _ = try context.require(.admin)
            let id = try ReadRoutes.id(context)
            guard let job = registry.job(id) else { throw Problem.notFound("job \(id) is not known to this server") }
            return JSONBody.response(JobJSON(job))
        }

        func cancel(_ request: Request, context: RouteKitRequestContext) async throws -> Response {
            _ = try context.require(.admin)
            let id = try ReadRoutes.id(context)
            guard let job = registry.job(id) else { throw Problem.notFound("job \(id) is not known to this server") }
            job.task?.cancel()
            return JSONBody.response(JobJSON(job), status: .accepted)
        }
    }
#endif
