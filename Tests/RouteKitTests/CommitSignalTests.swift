import Foundation
import RouteKit
import Testing

@Suite("CommitSignal: what followers wait on")
struct CommitSignalTests {
    @Test("a wait ends at a commit, at its timeout, or when its task is cancelled; nothing else ends it")
    func waits() async throws {
        let signal = CommitSignal()
        // A commit wakes a waiter.
        let seen = signal.current
        let woken = Task { await signal.wait(seen: seen, milliseconds: 60_000) }
        try await Task.sleep(for: .milliseconds(50))
        signal.fire()
        await woken.value
        // A commit since `seen` returns at once.
        await signal.wait(seen: seen, milliseconds: 60_000)
        // Nothing fires: the wait ends at its timeout.
        await signal.wait(seen: signal.current, milliseconds: 50)
        // Cancelling the waiting task ends a 60 s wait (a follower whose client left).
        let now = signal.current
        let cancelled = Task { () -> Bool in
            await signal.wait(seen: now, milliseconds: 60_000)
            return Task.isCancelled
        }
        try await Task.sleep(for: .milliseconds(50))
        cancelled.cancel()
        #expect(await cancelled.value)
        // A task cancelled before it waits does not wait.
        let early = Task { () -> Bool in
            while !Task.isCancelled { await Task.yield() }
            await signal.wait(seen: now, milliseconds: 60_000)
            return true
        }
        early.cancel()
        #expect(await early.value)
        #expect(signal.current == now)
    }
}

@Suite("uuid text")
struct UUIDTextTests {
    @Test("lowercaseText is uuidString lowercased; UUID(text:) reads either case and refuses anything else")
    func roundTrip() {
        for _ in 0..<1000 {
            let id = UUID()
            #expect(id.lowercaseText == id.uuidString.lowercased())
            #expect(UUID(text: id.lowercaseText) == id)
            #expect(UUID(text: id.uuidString) == id)
        }
        let good = UUID().lowercaseText
        for bad in [
            "", "not a uuid", String(good.dropLast()), good + "0", good.replacingOccurrences(of: "-", with: "x"),
            String(good.prefix(35)) + "g", good.replacingOccurrences(of: "-", with: ""),
        ] {
            #expect(UUID(text: bad) == nil, "\(bad)")
        }
    }
}
