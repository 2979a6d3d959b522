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

        /// A workout of a person.
        struct Key: Hashable {
            var person: PersonID
            var workout: UUID
        }

        private let stores: PersonStores
        private let state = Locked((pending: [Key](), queued: Set<Key>(), running: false))

        init(stores: PersonStores) { self.stores = stores }

        /// Queues `workouts` of `store`'s person to be measured; starts the background task when none runs.
        func enqueue(_ workouts: [UUID], of store: any RouteStore) {
            let person = store.person
            let start = state.withLock { s -> Bool in
                for id in workouts where s.pending.count < Self.capacity {
                    let key = Key(person: person, workout: id)
                    guard !s.queued.contains(key) else { continue }
                    s.pending.append(key)
                    s.queued.insert(key)
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
                let next = state.withLock { s -> [Key] in
                    let taken = Array(s.pending.prefix(Self.batch))
                    s.pending.removeFirst(taken.count)
                    for id in taken { s.queued.remove(id) }
                    if taken.isEmpty { s.running = false }
                    return taken
                }
                if next.isEmpty { return }
                // One refresh per person, in the store as that person sees it.
                for person in Set(next.map(\.person)).sorted() {
                    let store = stores.store(of: person)
                    let ids = next.filter { $0.person == person }.map(\.workout)
                    try? await BlockingExecutor.shared.withPreference {
                        try await WorkoutFigures.refresh(workouts: ids, in: store)
                    }
                }
            }
        }
    }
#endif
