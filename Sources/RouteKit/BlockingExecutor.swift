import CRouteKitSystem
import Foundation

/// The one place RouteKit runs work that blocks a thread: file and zip reading, FIT, TCX, GPX and Apple Health
/// decoding, export writing, picture drawing and GEOS. Swift concurrency's cooperative pool has one thread per core
/// (two on a 2-core server) and every request shares them; a decode that holds one for half a second stalls every
/// `GET /healthz` and every event stream behind it. Work handed to this executor runs on threads of its own.
///
/// It is a `TaskExecutor`: ``withPreference(_:)`` runs a whole async operation (an upload: spool, sniff, decode,
/// store) with its synchronous stretches on these threads, child tasks included, while its suspensions (a store
/// write, the next request body buffer) hold none. ``run(_:)`` runs one synchronous closure there, and
/// ``start(named:_:)`` a long-lived loop (a reader thread, a poller) on a thread of its own.
///
/// Threads are made when work arrives and none is idle, up to ``maximumThreads``, and end after
/// ``idleSeconds`` without work, so an idle server holds none. The cap is a safety net, not a scheduler: the server
/// bounds what it hands over (concurrent uploads, pictures, job workers), and the kernel shares the cores between
/// these threads and the cooperative pool, so a request waits a time slice, not a whole decode.
package final class BlockingExecutor: TaskExecutor, @unchecked Sendable {
    /// The executor every part of RouteKit uses.
    package static let shared = BlockingExecutor(name: "routekit-block")

    /// At most this many threads exist at once; work past them waits its turn in order.
    package let maximumThreads: Int
    /// A thread with no work for this long ends.
    package let idleSeconds: Double
    /// The threads' name (seen in `top -H`, `perf` and `gdb`), at most 15 bytes on Linux.
    package let name: String

    /// Every field below is behind `condition`.
    private let condition = NSCondition()
    /// Work waiting, from `head` on; a slot is emptied when its work is taken, so nothing it captured outlives it.
    private var queue: [UnownedJob?] = []
    private var head = 0
    private var threads = 0
    private var idle = 0
    private var loops = 0

    /// Decoders recurse (XML nesting, zip inside zip): the main thread's 8 MiB, not a secondary thread's 512 KiB.
    private static let stackSize = 8 << 20

    /// A new executor; `shared` is the one to use outside tests.
    package init(name: String, maximumThreads: Int = 64, idleSeconds: Double = 10) {
        self.name = String(name.utf8.prefix(15)) ?? "routekit-block"
        self.maximumThreads = max(1, maximumThreads)
        self.idleSeconds = idleSeconds
    }

    /// The number of threads that exist now (tests check that idle ones end).
    package var threadCount: Int {
        condition.lock()
        defer { condition.unlock() }
        return threads
    }

    /// Swift concurrency hands a task's job over (a task that prefers this executor).
    package func enqueue(_ job: consuming ExecutorJob) {
        submit(UnownedJob(job))
    }

    /// Runs `operation` with this executor as its task executor preference: its synchronous code, and its child
    /// tasks', runs on these threads, never on the cooperative pool. Actor-isolated calls still run on their actor.
    package func withPreference<T, E: Error>(
        isolation: isolated (any Actor)? = #isolation, _ operation: () async throws(E) -> T
    ) async throws(E) -> T {
        try await withTaskExecutorPreference(self, isolation: isolation, operation: operation)
    }

    /// Runs the synchronous `body` on one of these threads and returns what it returns, or throws what it throws;
    /// the calling task waits suspended, holding no thread.
    package func run<T: Sendable, E: Error>(_ body: @escaping @Sendable () throws(E) -> T) async throws(E) -> T {
        // Nonisolated: run from an actor, the body still goes to these threads, not to the actor's.
        try await withTaskExecutorPreference(self, isolation: nil) { () throws(E) -> T in try body() }
    }

    /// Starts `body` at once on a thread of its own, which ends with it: for a loop that lives as long as its owner
    /// (a reader ahead of its consumer, a poller, a GEOS worker). Such loops wait for other work (a reader parks
    /// until its consumer, a job on this executor, takes what it read), so they are never queued behind jobs and
    /// never count toward ``maximumThreads``: 64 of them must not leave their consumers without a thread. The thread
    /// is named `name` (15 bytes at most on Linux).
    package func start(named name: String, _ body: @escaping @Sendable () -> Void) {
        condition.lock()
        loops += 1
        condition.unlock()
        let thread = Thread { [self] in
            Self.nameThread(name)
            body()
            condition.lock()
            loops -= 1
            condition.unlock()
        }
        thread.stackSize = Self.stackSize
        thread.start()
    }

    /// The number of loops started with ``start(named:_:)`` that are still running.
    package var loopCount: Int {
        condition.lock()
        defer { condition.unlock() }
        return loops
    }

    private func submit(_ work: UnownedJob) {
        condition.lock()
        queue.append(work)
        let waiting = queue.count - head
        let spawn = waiting > idle && threads < maximumThreads
        if spawn { threads += 1 }
        condition.signal()
        condition.unlock()
        if spawn { startThread() }
    }

    private func startThread() {
        let thread = Thread { [self] in serve() }
        thread.stackSize = Self.stackSize
        thread.start()
    }

    /// A thread's loop: takes work in order until none arrives for `idleSeconds`.
    private func serve() {
        Self.nameThread(name)
        condition.lock()
        while true {
            while head == queue.count {
                idle += 1
                let woken = condition.wait(until: Date(timeIntervalSinceNow: idleSeconds))
                idle -= 1
                if !woken && head == queue.count {
                    threads -= 1
                    condition.unlock()
                    return
                }
            }
            let work = queue[head]
            queue[head] = nil
            head += 1
            if head == queue.count {
                queue.removeAll(keepingCapacity: queue.capacity <= 1_024)
                head = 0
            } else if head >= 1_024 && head * 2 >= queue.count {
                queue.removeFirst(head)
                head = 0
            }
            condition.unlock()
            work?.runSynchronously(on: asUnownedTaskExecutor())
            condition.lock()
        }
    }

    /// Names the calling thread for the kernel (`Thread.name` does not reach it on Linux).
    private static func nameThread(_ name: String) {
        rk_name_this_thread(name)
    }
}
