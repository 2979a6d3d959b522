import Foundation
public import RouteKit

/// A thread of its own (one of the blocking executor's, for as long as it lives) with its own ``GEOSContext``, for GEOS work that must not run on Swift concurrency's
/// cooperative threads: a server's batch job, where a long simplification would hold one of the few threads
/// (two on a 2-core machine) that every request shares.
///
/// ``perform(_:)`` hands a closure to the thread and suspends the calling task until it has run; calls are run one
/// at a time, in order. The context never leaves the thread, so it is never shared. ``close()`` (or releasing the
/// last reference) ends the thread once the work already handed over is done; work handed over afterwards fails
/// with `RouteKitError.Code.geos`.
public final class GEOSThread: Sendable {
    private let state: State

    /// Starts the thread and creates its context there.
    /// - Throws: `RouteKitError.Code.geos` when GEOS cannot create a context.
    public init(name: String = "routekit-geos") throws(RouteKitError) {
        let state = State()
        self.state = state
        BlockingExecutor.shared.start(named: name) { state.serve() }
        if let error = state.waitUntilReady() { throw error }
    }

    deinit { state.close() }

    /// Ends the thread after the work already handed over.
    public func close() { state.close() }

    /// Whether the calling code runs on this GEOS thread (tests check where work ran).
    package var isCurrentThread: Bool { state.isServingThread }

    /// Runs `body` on the thread with its context and returns what it returns, or throws what it throws.
    /// - Throws: what `body` throws; `RouteKitError.Code.geos` after ``close()``.
    public func perform<T: Sendable>(_ body: @escaping @Sendable (GEOSContext) throws(RouteKitError) -> T)
        async throws(RouteKitError) -> T
    {
        let result = await withCheckedContinuation {
            (continuation: CheckedContinuation<Result<T, RouteKitError>, Never>) in
            let job: @Sendable (GEOSContext?) -> Void = { context in
                guard let context else {
                    continuation.resume(returning: .failure(RouteKitError(.geos, "the GEOS thread is closed")))
                    return
                }
                do throws(RouteKitError) {
                    continuation.resume(returning: .success(try body(context)))
                } catch {
                    continuation.resume(returning: .failure(error))
                }
            }
            if !state.submit(job) { job(nil) }
        }
        return try result.get()
    }

    /// The queue between callers and the thread. `@unchecked Sendable`: every field is behind `condition`.
    final class State: @unchecked Sendable {
        private let condition = NSCondition()
        private var jobs: [@Sendable (GEOSContext?) -> Void] = []
        private var closed = false
        private var ready = false
        private var startError: RouteKitError?
        private var servingThread: pthread_t?

        var isServingThread: Bool {
            condition.lock()
            defer { condition.unlock() }
            guard let servingThread else { return false }
            return pthread_equal(servingThread, pthread_self()) != 0
        }

        /// The thread's body: creates the context, runs jobs until closed and drained.
        func serve() {
            condition.lock()
            servingThread = pthread_self()
            condition.unlock()
            let context: GEOSContext
            do {
                context = try GEOSContext()
            } catch {
                condition.lock()
                startError = error
                ready = true
                closed = true
                condition.broadcast()
                condition.unlock()
                return
            }
            condition.lock()
            ready = true
            condition.broadcast()
            condition.unlock()
            while true {
                condition.lock()
                while jobs.isEmpty && !closed { condition.wait() }
                if jobs.isEmpty {
                    condition.unlock()
                    return
                }
                let job = jobs.removeFirst()
                condition.unlock()
                job(context)
            }
        }

        func waitUntilReady() -> RouteKitError? {
            condition.lock()
            defer { condition.unlock() }
            while !ready { condition.wait() }
            return startError
        }

        /// Queues a job; `false` when the thread is closed.
        func submit(_ job: @escaping @Sendable (GEOSContext?) -> Void) -> Bool {
            condition.lock()
            defer { condition.unlock() }
            guard !closed else { return false }
            jobs.append(job)
            condition.signal()
            return true
        }

        func close() {
            condition.lock()
            closed = true
            condition.broadcast()
            condition.unlock()
        }
    }
}
