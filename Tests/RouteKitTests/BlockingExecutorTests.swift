import Foundation
import RouteKit
import Testing

@Suite("BlockingExecutor: where blocking work runs")
struct BlockingExecutorTests {
    /// The kernel's name of the calling thread.
    static func threadName() -> String {
        #if os(Linux)
            let comm = (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? ""
            return comm.trimmingCharacters(in: .whitespacesAndNewlines)
        #else
            return Thread.current.name ?? ""
        #endif
    }

    @Test("run and withPreference run synchronous code on the executor's threads, child tasks included")
    func placement() async throws {
        let executor = BlockingExecutor(name: "rk-test-block")
        #expect(try await executor.run { () throws(CancellationError) -> String in Self.threadName() } == "rk-test-block")
        let names = await executor.withPreference { () async -> [String] in
            let own = Self.threadName()
            let children = await withTaskGroup(of: String.self) { group in
                for _ in 0..<3 { group.addTask { Self.threadName() } }
                return await group.reduce(into: []) { $0.append($1) }
            }
            try? await Task.sleep(for: .milliseconds(5))  // back from a suspension: still there
            return [own] + children + [Self.threadName()]
        }
        #expect(names == Array(repeating: "rk-test-block", count: 5))
        // Outside it, the cooperative pool again.
        #expect(Self.threadName() != "rk-test-block")
        let errorThrown = await #expect(throws: RouteKitError.self) {
            try await executor.run { () throws(RouteKitError) -> Int in throw RouteKitError(.io, "thrown there") }
        }
        #expect(errorThrown?.message == "thrown there")
    }

    @Test("work that blocks gets threads of its own: eight jobs waiting for each other all finish")
    func blocking() async throws {
        // On the cooperative pool (two threads here) the eight would wait for each other for ever; each waits
        // 10 s at most, so a failure is an expectation, not a hang.
        let executor = BlockingExecutor(name: "rk-test-wait")
        let arrived = Locked(0)
        let threads = Locked(Set<String>())
        let met = await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    await executor.run {
                        // All eight are alive at once (each waits for the others), so their identities differ.
                        threads.withLock { _ = $0.insert(String(describing: pthread_self())) }
                        arrived.withLock { $0 += 1 }
                        let deadline = Date(timeIntervalSinceNow: 10)
                        while arrived.withLock({ $0 }) < 8 && Date() < deadline { usleep(1_000) }
                        return arrived.withLock { $0 } == 8
                    }
                }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(met == Array(repeating: true, count: 8))
        // Counted inside the jobs: the executor's own count may already be back to 0 when a loaded machine (the
        // sanitizer's CI run) resumes this task more than the idle time later.
        #expect(threads.withLock { $0.count } == 8)
    }

    @Test("idle threads end; long-lived loops run on threads of their own, outside the cap, and end with their body")
    func idle() async throws {
        let executor = BlockingExecutor(name: "rk-test-idle", idleSeconds: 0.5)
        let stop = Locked(false)
        let name = Locked("")
        executor.start(named: "rk-test-loop") {
            name.withLock { $0 = Self.threadName() }
            while !stop.withLock({ $0 }) { usleep(1_000) }
        }
        // The loop holds a thread of its own, outside the executor's cap: work still runs with a cap of one thread.
        let capped = BlockingExecutor(name: "rk-test-cap", maximumThreads: 1, idleSeconds: 0.5)
        for n in 0..<3 { capped.start(named: "rk-test-loop\(n)") { while !stop.withLock({ $0 }) { usleep(1_000) } } }
        #expect(capped.loopCount == 3)
        #expect(try await capped.run { () throws(CancellationError) -> Int in 2 } == 2)
        #expect(try await executor.run { () throws(CancellationError) -> Int in 1 } == 1)
        stop.withLock { $0 = true }
        let deadline = Date(timeIntervalSinceNow: 10)
        while executor.threadCount > 0 && Date() < deadline { try await Task.sleep(for: .milliseconds(20)) }
        #expect(executor.threadCount == 0)
        while (executor.loopCount > 0 || capped.loopCount > 0) && Date() < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(executor.loopCount == 0 && capped.loopCount == 0)
        #expect(name.withLock { $0 } == "rk-test-loop")
    }
}
