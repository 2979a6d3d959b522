#if Server
    import Foundation
    import RouteKit
    import RouteKitApplication

    /// Measures the figures of workouts whose route changed (an upload, a finished builder) after the request that
    /// changed it has been answered: one background task at a time, on the blocking executor, so that an answer
    /// never waits for a measurement (a million-point route: 0.4 s) and the lists that show the figures next read
    /// them instead of measuring. A cache, not a promise: a list measures what is still missing (a full queue, a
    /// failure, a server stopped first), so nothing here is ever lost for good.
    final class FiguresQueue: Sendable {
        /// At most this many workouts wait; more are left for the lists to measure.
        static let capacity = 10_000
        /// Measured together, in one refresh.
        static let batch = 64

        private let store: any RouteStore
        private let state = Locked((pending: [UUID](), queued: Set<UUID>(), running: false))

        init(store: any RouteStore) { self.store = store }

        /// Queues `workouts` to be measured; starts the background task when none runs.
        func enqueue(_ workouts: [UUID]) {
            let start = state.withLock { s -> Bool in
                for id in workouts where s.pending.count < Self.capacity && !s.queued.contains(id) {
                    s.pending.append(id)
                    s.queued.insert(id)
                }
                guard !s.running, !s.pending.isEmpty else { return false }
                s.running = true
                return true
            }
            if start { Task.detached(priority: .utility) { [self] in await drain() } }
        }

        /// Whether nothing waits or is being measured (tests wait for it).
        var isIdle: Bool { state.withLock { !$0.running && $0.pending.isEmpty } }

        private func drain() async {
            while true {
                let next = state.withLock { s -> [UUID] in
                    let taken = Array(s.pending.prefix(Self.batch))
                    s.pending.removeFirst(taken.count)
                    for id in taken { s.queued.remove(id) }
                    if taken.isEmpty { s.running = false }
                    return taken
                }
                if next.isEmpty { return }
                try? await BlockingExecutor.shared.withPreference {
                    try await WorkoutFigures.refresh(workouts: next, in: store)
                }
            }
        }
    }
#endif
