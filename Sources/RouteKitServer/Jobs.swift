#if Server
    import Foundation
    import HTTPTypes
    import Hummingbird
    import Logging
    import NIOCore
    import RouteKit
    import RouteKitApplication
    import RouteKitProcessing

    /// Smoothing jobs over HTTP (`admin` scope): `POST /v1/jobs` starts the batch job of `routekit smooth` for given
    /// routes or every current one and answers `202` with the job; `GET /v1/jobs/ID` reports progress and each
    /// route's outcome; `DELETE /v1/jobs/ID` cancels it. Workers claim routes through the store's leases, so several
    /// servers and `routekit smooth` processes share the work, and a second run with the same parameters saves
    /// nothing. A store that keeps jobs (`JobStore`, both backends) gets each job's document every
    /// `ServerConfiguration.jobSaveSeconds` and at its end: any server of the store reports it, a restart does not forget it,
    /// and a job whose server stopped is reported `interrupted`. Ended jobs leave this server's memory once saved and
    /// leave the store after ``JobRegistry/keptFor``.
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
            /// Whose routes it smooths; only that person's (or an admin) token sees it.
            var person: PersonID = .default
        }

        /// A running job not saved for this long was left by a server that stopped: it is reported `interrupted`.
        static let interruptedAfter: TimeInterval = 30
        /// How long ended jobs stay in the store.
        static let keptFor: TimeInterval = 7 * 86_400
        /// Ended jobs kept in memory when the store does not keep jobs.
        static let keptInMemory = 100

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

        /// Forgets ended jobs beyond the newest `keep`.
        func trim(keep: Int) {
            jobs.withLock { all in
                let ended = all.values.filter { $0.task == nil }.sorted { $0.created > $1.created }
                for job in ended.dropFirst(keep) { all[job.id] = nil }
            }
        }
    }

    /// One route's outcome in a job.
    struct JobOutcome: Sendable, Codable {
        var route: String
        var newRoute: String?
        var syncVersion: Int64?
        var skipped: String?
        var error: String?
        var pointsIn: Int?
        var pointsOut: Int?
    }

    struct JobRoutes: Sendable {
        let stores: PersonStores
        let registry: JobRegistry
        let logger: Logger
        /// How often a running job's progress is saved.
        var saveInterval: Duration = .seconds(1)
        /// Where jobs are saved, when the store keeps them.
        func jobStore(_ store: any RouteStore) -> (any JobStore)? { store as? any JobStore }

        /// The store of the person whose jobs a request is about (`admin` scope): the token's person, or for an admin
        /// token (no one's), the person named by `?person=ID` (the default person without it).
        func store(_ request: Request, _ context: RouteKitRequestContext) throws(Problem) -> any RouteStore {
            let token = try context.require(.admin)
            if let person = token.person { return stores.store(of: person) }
            guard let text = request.uri.queryParameters.get("person") else { return stores.store(of: .default) }
            guard let uuid = UUID(uuidString: String(text)) else { throw Problem.noPerson(String(text)) }
            return stores.store(of: PersonID(uuid))
        }

        struct StartBody: Decodable {
            var routes: [String]?
            var source: String?
            var workers: Int?
            var configuration: PipelineConfiguration?
        }

        struct JobJSON: Codable {
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
            let store = try store(request, context)
            let jobStore = jobStore(store)
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
            var job = JobRegistry.Job(id: id, state: "running", total: ids.count, created: Date())
            job.person = store.person
            if let jobStore {
                // Saved before it is answered: any server of the store can report it from the first request on.
                _ = try await jobStore.saveJob(Self.stored(job))
                _ = try? await jobStore.deleteJobs(endedBefore: Date().addingTimeInterval(-JobRegistry.keptFor))
            } else {
                registry.trim(keep: JobRegistry.keptInMemory)
            }
            registry.jobs.withLock { $0[id] = job }
            let task = Task { [store, jobStore, registry, logger, saveInterval] in
                await Self.run(
                    id, ids, pipeline, workers: workers, store: store, jobStore: jobStore, registry: registry,
                    saveInterval: saveInterval, logger: logger)
            }
            registry.update(id) { $0.task = task }
            return JSONBody.response(
                JobJSON(job), status: .accepted, headers: [.location: "/v1/jobs/\(id.uuidString.lowercased())"])
        }

        /// The job as the store keeps it.
        static func stored(_ job: JobRegistry.Job) -> StoredJob {
            let document = String(decoding: JSONBody.bytes(JobJSON(job)), as: UTF8.self)
            let state = StoredJob.State(rawValue: job.state) ?? .running
            return StoredJob(id: job.id, state: state, document: document, created: job.created, updated: Date())
        }

        /// Saves the job's progress; cancels it when someone asked the store to stop it (from any server).
        static func save(_ id: UUID, jobStore: any JobStore, registry: JobRegistry, logger: Logger) async {
            guard let job = registry.job(id) else { return }
            do {
                if try await jobStore.saveJob(stored(job)) { job.task?.cancel() }
            } catch {
                logger.warning("saving a job's progress failed", metadata: ["job": "\(id)", "code": "\(error.code)"])
            }
        }

        static func run(
            _ id: UUID, _ ids: [UUID], _ pipeline: RoutePipeline, workers: Int, store: any RouteStore,
            jobStore: (any JobStore)?, registry: JobRegistry, saveInterval: Duration, logger: Logger
        ) async {
            let saver = Task {
                guard let jobStore else { return }
                while !Task.isCancelled {
                    try? await Task.sleep(for: saveInterval)
                    if Task.isCancelled { return }
                    await save(id, jobStore: jobStore, registry: registry, logger: logger)
                }
            }
            let job = SmoothingJob(
                store: store, pipeline: pipeline, routes: ids, workers: workers,
                leaseSeconds: RouteProcessor.defaultLeaseSeconds)
            do throws(RouteKitError) {
                try await job.run { route, result, tally in
                    var outcome = JobOutcome(route: route.uuidString.lowercased())
                    switch result {
                    case .success(let o):
                        outcome.newRoute = o.newRoute?.uuidString.lowercased()
                        outcome.syncVersion = o.syncVersion
                        outcome.skipped = o.skipped
                        outcome.pointsIn = o.metrics?.pointsIn
                        outcome.pointsOut = o.metrics?.pointsOut
                    case .failure(let error):
                        outcome.error = "\(error.code): \(error.message)"
                    }
                    registry.update(id) { job in
                        job.done = max(job.done, tally.done)
                        job.saved = max(job.saved, tally.saved)
                        job.skipped = max(job.skipped, tally.skipped)
                        job.failed = max(job.failed, tally.failed)
                        // The first 10,000 outcomes (every count stays exact).
                        if job.outcomes.count < 10_000 { job.outcomes.append(outcome) }
                    }
                }
            } catch {
                logger.error("a job could not start GEOS", metadata: ["job": "\(id)", "code": "\(error.code)"])
            }
            let cancelled = Task.isCancelled
            saver.cancel()
            await saver.value
            registry.update(id) { job in
                job.state = cancelled ? "cancelled" : "finished"
                job.finished = Date()
                job.task = nil
            }
            guard let jobStore, let job = registry.job(id) else { return }
            // Saved outside this (perhaps cancelled) task, so that a cancelled job's end is saved too.
            await Task {
                do throws(RouteKitError) {
                    _ = try await jobStore.saveJob(stored(job))
                    // The store answers for it from now on.
                    registry.jobs.withLock { $0[id] = nil }
                } catch {
                    logger.warning(
                        "saving a finished job failed", metadata: ["job": "\(id)", "code": "\(error.code)"])
                }
            }.value
        }

        /// The job from this server's memory, else from the store (`interrupted` when it is still running there but
        /// was not saved for ``JobRegistry/interruptedAfter``: the server running it stopped).
        func find(_ id: UUID, in store: any RouteStore) async throws -> (
            json: JobJSON, running: Task<Void, Never>?, stored: StoredJob?
        ) {
            if let job = registry.job(id), job.person == store.person { return (JobJSON(job), job.task, nil) }
            guard let jobStore = jobStore(store), let stored = try await jobStore.job(id: id) else {
                throw Problem.notFound("job \(id) is not known")
            }
            var json: JobJSON
            do {
                json = try JSONDecoder().decode(JobJSON.self, from: Data(stored.document.utf8))
            } catch {
                throw RouteKitError(.storage, "stored job \(id) is not a job document")
            }
            if stored.state == .running && stored.updated < Date().addingTimeInterval(-JobRegistry.interruptedAfter) {
                json.state = "interrupted"
            }
            return (json, nil, stored)
        }

        func get(_ request: Request, context: RouteKitRequestContext) async throws -> Response {
            let store = try store(request, context)
            let id = try ReadRoutes.id(context)
            return JSONBody.response(try await find(id, in: store).json)
        }

        func cancel(_ request: Request, context: RouteKitRequestContext) async throws -> Response {
            let store = try store(request, context)
            let jobStore = jobStore(store)
            let id = try ReadRoutes.id(context)
            let (json, running, stored) = try await find(id, in: store)
            if let running {
                running.cancel()
            } else if let jobStore, stored?.state == .running, json.state == "running" {
                // Running on another server of the store: it sees the request at its next save.
                _ = try await jobStore.requestJobCancellation(id: id)
            }
            return JSONBody.response(json, status: .accepted)
        }
    }
#endif
