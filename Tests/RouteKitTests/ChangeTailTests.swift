import Foundation
import RouteKit
import Testing

@Suite("ChangeTail: the change feed's one tailing loop, with injected reads and waits (as the HTTP service runs it)")
struct ChangeTailTests {
    /// A waiter whose waits end at once, with the answers it is given in turn (`true`: a commit came), then `true`.
    final class ScriptedWaiter: ChangeTailWaiter {
        let answers: Locked<[Bool]>
        let closed = Locked(false)

        init(_ answers: [Bool]) { self.answers = Locked(answers) }

        func willRead() {}

        func wait() async -> Bool { answers.withLock { $0.isEmpty ? true : $0.removeFirst() } }

        func close() { closed.withLock { $0 = true } }
    }

    /// A step, as text.
    static func describe(_ step: ChangeTail.Step?) -> String {
        switch step {
        case .changes(let set)?: "changes \(set.anchor.position)"
        case .idle?: "idle"
        case .unavailable?: "unavailable"
        case nil: "end"
        }
    }

    @Test("an idle wait reads nothing; a read the store cannot answer is waited out and read again from its anchor")
    func backsOffAndResumes() async throws {
        let storeID = UUID()
        func set(_ position: Int64) -> ChangeSet {
            ChangeSet(
                deleted: [], added: [],
                anchor: ChangeAnchor(storeID: storeID, epoch: 1, position: position, token: UInt64(position)),
                hasMore: false)
        }
        // The reads' answers in turn: the catch-up, the store away twice, then back.
        let away = RouteKitError(.unavailable, "the store cannot be reached (made so by the test)")
        let answers = Locked<[Result<ChangeSet, RouteKitError>]>([
            .success(set(1)), .failure(away), .failure(away), .success(set(2)),
        ])
        let asked = Locked<[Int64?]>([])
        let waiter = ScriptedWaiter([false, true])
        let stop = Locked(false)
        var tail = ChangeTail(
            since: nil,
            read: { (anchor: ChangeAnchor?) async throws(RouteKitError) -> ChangeSet in
                asked.withLock { $0.append(anchor?.position) }
                let answer = answers.withLock { next -> Result<ChangeSet, RouteKitError> in
                    next.isEmpty ? .failure(RouteKitError(.storage, "no more answers")) : next.removeFirst()
                }
                switch answer {
                case .success(let set): return set
                case .failure(let error): throw error
                }
            },
            waiter: { () async throws(RouteKitError) -> any ChangeTailWaiter in waiter },
            stopped: { stop.withLock { $0 } })
        var steps: [String] = []
        let started = ContinuousClock.now
        for _ in 0..<5 {
            let step = try await Self.describe(tail.next())
            steps.append(step)
        }
        let elapsed = ContinuousClock.now - started
        let anchors = asked.withLock { $0 }
        #expect(steps == ["changes 1", "idle", "unavailable", "unavailable", "changes 2"])
        #expect(anchors == [nil, 1, 1, 1], "the idle wait read nothing; every retry read from anchor 1")
        // The backoff's waits, 0.1 s then 0.2 s: more than twice the first, so the second wait was longer.
        #expect(elapsed >= .milliseconds(250), "\(elapsed)")
        stop.withLock { $0 = true }
        let last = try await Self.describe(tail.next())
        let closed = waiter.closed.withLock { $0 }
        let reads = asked.withLock { $0.count }
        #expect(last == "end")
        #expect(closed, "the end closes the waiter")
        #expect(reads == 4, "and reads nothing more")
    }
}
