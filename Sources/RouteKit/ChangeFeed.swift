import Foundation

/// A position in a store's change history, as an opaque, URL-safe token (HealthKit's `HKQueryAnchor`).
///
/// An anchor encodes a format version, the store's UUID, the store's epoch (bumped when its history is
/// reset), the position of the last change it covers (from a counter that is never reused) and a token of
/// the transaction that wrote that change, so that a store restored from an older copy, whose positions
/// continue from an earlier point, is never mistaken for the history the anchor came from.
///
/// Consumers treat the text as opaque: store it, send it back. Each way it can be unusable has its own
/// ``RouteKitError/Code`` (``RouteKitError/Code/anchorMalformed``, ``RouteKitError/Code/anchorForeign``,
/// ``RouteKitError/Code/anchorExpired``, ``RouteKitError/Code/anchorAhead``); after any of them the consumer
/// starts again without an anchor (every current route), which is always correct.
public struct ChangeAnchor: Hashable, Sendable, CustomStringConvertible {
    /// The format version written first.
    package static let formatVersion: UInt8 = 1
    /// The store it belongs to.
    package var storeID: UUID
    /// The store's history epoch.
    package var epoch: UInt32
    /// The position of the last change it covers (0: before any change).
    package var position: Int64
    /// While a consumer pages through its first read (no anchor): the newest position when that read began.
    /// Deletions up to it are of routes the consumer never received, and are skipped. 0 otherwise.
    public var horizon: Int64
    /// The token of the transaction that ends at `max(position, horizon)` (0 when that is 0).
    package var token: UInt64

    /// Creates an anchor (stores do; consumers parse ``init(text:)``).
    package init(storeID: UUID, epoch: UInt32, position: Int64, horizon: Int64 = 0, token: UInt64) {
        self.storeID = storeID
        self.epoch = epoch
        self.position = position
        self.horizon = horizon
        self.token = token
    }

    /// The position its token names: the later of ``position`` and ``horizon``.
    package var checkpoint: Int64 { max(position, horizon) }

    /// The opaque text: `1.` then base64url without padding of 16 + 4 + 8 + 8 + 8 bytes.
    public var text: String {
        var bytes: [UInt8] = []
        withUnsafeBytes(of: storeID.uuid) { bytes += $0 }
        func append<T: FixedWidthInteger>(_ v: T) { withUnsafeBytes(of: v.bigEndian) { bytes += $0 } }
        append(epoch)
        append(position)
        append(horizon)
        append(token)
        return "\(Self.formatVersion).\(Base64URL.encode(bytes))"
    }

    public var description: String { text }

    /// Reads an anchor's text.
    /// - Throws: ``RouteKitError/Code/anchorMalformed`` when it is not an anchor this version can read.
    public init(text: String) throws(RouteKitError) {
        let malformed = RouteKitError(
            .anchorMalformed, "the anchor is not a RouteKit change anchor; start again without an anchor")
        guard text.count < 200, text.hasPrefix("\(Self.formatVersion).") else { throw malformed }
        guard let b = Base64URL.decode(text.dropFirst(2)), b.count == 44 else { throw malformed }
        func integer<T: FixedWidthInteger>(_ at: Int, _: T.Type) -> T {
            b[at..<(at + MemoryLayout<T>.size)].reduce(T(0)) { ($0 << 8) | T($1) }
        }
        storeID = UUID(
            uuid: (b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15])
        )
        epoch = integer(16, UInt32.self)
        position = integer(20, Int64.self)
        horizon = integer(28, Int64.self)
        token = integer(36, UInt64.self)
        guard position >= 0, horizon >= 0 else { throw malformed }
    }
}

/// A route that stopped being current: deleted, or replaced by a newer version (enough to match and filter).
public struct DeletedRoute: Hashable, Sendable {
    /// The route's uuid.
    public var id: UUID
    /// Its source.
    public var source: Source
    /// Its workout.
    public var workoutID: UUID
    /// Its sync identity.
    public var sync: SyncIdentity

    /// Creates a record.
    package init(id: UUID, source: Source, workoutID: UUID, sync: SyncIdentity) {
        self.id = id
        self.source = source
        self.workoutID = workoutID
        self.sync = sync
    }
}

/// What changed since an anchor: HealthKit's anchored object query result.
///
/// Apply the deletions (``deleted``, ``deletedObjects``) first, then the additions (``added``, ``addedObjects``): a
/// replacement is the old version deleted and the new one added, in the same change set, so a consumer never holds
/// two versions of one route or workout as current.
///
/// Routes are in ``added`` and ``deleted``; the other types a consumer asks for (``ChangePredicate/types``) in
/// ``addedObjects`` and ``deletedObjects``.
public struct ChangeSet: Hashable, Sendable {
    /// Routes that are no longer current (deleted or replaced), in commit order.
    public var deleted: [DeletedRoute]
    /// Routes that became current, in commit order.
    public var added: [RouteSample]
    /// Workouts, effort scores and series that are no longer current (deleted, or their workout replaced), in
    /// commit order; only the types the predicate asks for.
    public var deletedObjects: [DeletedObject]
    /// Workouts, effort scores and series that became current or changed, in commit order; only the types the
    /// predicate asks for. An object already held under the same ``ChangedObject/key`` is replaced.
    public var addedObjects: [ChangedObject]
    /// Where the next call starts.
    public var anchor: ChangeAnchor
    /// Whether more changes are ready now (call again with ``anchor`` at once).
    public var hasMore: Bool

    /// Creates a change set.
    package init(
        deleted: [DeletedRoute], added: [RouteSample], deletedObjects: [DeletedObject] = [],
        addedObjects: [ChangedObject] = [], anchor: ChangeAnchor, hasMore: Bool
    ) {
        self.deleted = deleted
        self.added = added
        self.deletedObjects = deletedObjects
        self.addedObjects = addedObjects
        self.anchor = anchor
        self.hasMore = hasMore
    }

    /// How many changes it holds, of every type.
    public var count: Int { deleted.count + added.count + deletedObjects.count + addedObjects.count }
}

/// Which changes a consumer wants. Applied to deletions as well as additions.
public struct ChangePredicate: Hashable, Sendable {
    /// Only objects of these types (routes by default).
    public var types: Set<ChangeObjectType>
    /// Only objects of this workout (the workout itself, its routes, effort scores and series).
    public var workout: UUID?
    /// Only objects of this source.
    public var source: Source?
    /// Only routes and workouts with this sync identifier (effort scores and series have none: they never match).
    public var syncIdentifier: String?
    /// Only routes and workouts whose time range overlaps this interval (objects without times never match).
    public var interval: ClosedRange<Instant>?

    /// Creates a predicate; no argument matches every route.
    public init(
        types: Set<ChangeObjectType> = [.route], workout: UUID? = nil, source: Source? = nil,
        syncIdentifier: String? = nil, interval: ClosedRange<Instant>? = nil
    ) {
        self.types = types
        self.workout = workout
        self.source = source
        self.syncIdentifier = syncIdentifier
        self.interval = interval
    }

    /// Every route.
    public static let all = ChangePredicate()
}

/// Wakes a change-feed follower when the store may have new changes.
@_spi(RouteKitBackend)
public protocol CommitWaiter: AnyObject {
    /// Returns after a commit that may have recorded changes (in this process: at once; in another process:
    /// within the backend's polling interval), or after `timeout` seconds, whichever comes first.
    func wait(timeout: Double) async
    /// Releases what the waiter holds.
    func close()
}

extension RouteStore {
    /// Live updates: the change sets from `anchor` on, as a ``ChangeUpdates`` sequence — first the catch-up (every
    /// change set until ``ChangeSet/hasMore`` is false; with no anchor, every current route), then one per commit
    /// that touches matching routes (commits may be coalesced).
    ///
    /// The sequence reads the store only when it is asked for its next element, in the task that asks: a slow
    /// consumer holds at most one change set, and cancelling its task (or dropping the iterator) ends the sequence
    /// and releases what it holds.
    ///
    /// - Throws (from iteration): the anchor errors (``RouteKitError/Code/isAnchorError``) and storage errors. A
    ///   store that cannot be reached (``RouteKitError/Code/unavailable``) is not an end: the sequence waits, with
    ///   backoff up to 2 s, and reads on from the same anchor once it answers again.
    public func changeUpdates(
        since anchor: ChangeAnchor?, matching predicate: ChangePredicate = .all, limit: Int = 1000
    ) -> ChangeUpdates {
        ChangeUpdates(store: self, anchor: anchor, predicate: predicate, limit: limit)
    }
}

/// A change feed follower as an `AsyncSequence` of ``ChangeSet``s, made by
/// ``RouteStore/changeUpdates(since:matching:limit:)``.
///
/// It is pulled, not pushed: each call to `next()` reads the store (at most `limit` changes, extended to the end
/// of a transaction) in the calling task, or waits there for the next commit. Nothing is read ahead or buffered,
/// so memory does not grow however slowly the consumer reads, and no task outlives the iteration: when the
/// consuming task is cancelled, `next()` returns `nil`; when the iterator ends, throws or is released, its
/// commit waiter is closed.
///
/// Errors are ``RouteKitError``s (typed throws): anchor errors and storage errors end the sequence; only
/// ``RouteKitError/Code/unavailable`` (the store cannot be reached) is waited out.
public struct ChangeUpdates: AsyncSequence, Sendable {
    public typealias Element = ChangeSet
    public typealias Failure = RouteKitError

    let store: any RouteStore
    let anchor: ChangeAnchor?
    let predicate: ChangePredicate
    let limit: Int

    public func makeAsyncIterator() -> Iterator {
        Iterator(store: store, anchor: anchor, predicate: predicate, limit: limit)
    }

    /// The follower's state: its anchor and its commit waiter.
    public struct Iterator: AsyncIteratorProtocol {
        public typealias Element = ChangeSet
        public typealias Failure = RouteKitError

        // The loop itself (catch-up, waits, reads, backoff while the store is unavailable) is `ChangeTail`'s, which
        // the HTTP service's event streams and long-polls run too; the iterator hands on the change sets it reads:
        // the first (even empty), then those that hold changes.
        var tail: ChangeTail
        var first = true

        init(store: any RouteStore, anchor: ChangeAnchor?, predicate: ChangePredicate, limit: Int) {
            tail = ChangeTail(store: store, since: anchor, matching: predicate, limit: limit)
        }

        /// The next change set: the next page of the catch-up, or the changes of the next commits; `nil` once the
        /// calling task is cancelled.
        public mutating func next() async throws(RouteKitError) -> ChangeSet? {
            try await next(isolation: nil)
        }

        public mutating func next(isolation actor: isolated (any Actor)?) async throws(RouteKitError) -> ChangeSet? {
            while let step = try await tail.next() {
                guard case .changes(let set) = step else { continue }
                if first || !set.added.isEmpty || !set.deleted.isEmpty {
                    first = false
                    return set
                }
            }
            return nil
        }
    }

    /// Owns a commit waiter: closed once, by the follower's end or when the iterator is released. (Sendable so that
    /// the iterator may wait from any isolation; `closed` is behind a lock and the waiters are thread-safe.)
    final class WaiterHandle: ChangeTailWaiter, @unchecked Sendable {
        private let waiter: any CommitWaiter
        private let lock = NSLock()
        private var closed = false

        init(_ waiter: any CommitWaiter) { self.waiter = waiter }

        /// Nothing to note: the backend's waiter knows which commits it has seen.
        func willRead() {}

        /// Waits for a commit, at most 1 s; always `true`, since the waiter cannot tell a commit from its timeout
        /// (a commit of another process is seen within the backend's polling interval): the tail reads after each
        /// wait.
        func wait() async -> Bool {
            await waiter.wait(timeout: 1)
            return true
        }

        func close() {
            let first = lock.withLock {
                defer { closed = true }
                return !closed
            }
            if first { waiter.close() }
        }

        deinit { close() }
    }
}

/// What a ``ChangeTail`` waits on once it has caught up: a store's commit waiter (``ChangeUpdates``), or the HTTP
/// service's commit signal, which one watcher of the store fires for every follower of the process.
package protocol ChangeTailWaiter: AnyObject, Sendable {
    /// Called just before each read of the feed: a waiter that counts commits notes how many it has seen, so that
    /// a commit during the read ends the next ``wait()`` at once.
    func willRead()

    /// Returns `true` when the store may have new changes (the tail reads), or `false` when the waiter's time passed
    /// without a commit (the tail reports ``ChangeTail/Step/idle`` and waits again at its next step, without
    /// reading). Returns early when the calling task is cancelled.
    func wait() async -> Bool

    /// Releases what the waiter holds; called when the tail ends (at most once for the tail, but a waiter may be
    /// closed by its owner too).
    func close()
}

/// The change feed's one tailing loop: the catch-up (every change set until ``ChangeSet/hasMore`` is false), then a
/// wait for the next commit and a read from the last anchor, again and again. A store that cannot be reached
/// (``RouteKitError/Code/unavailable``: a database server restarting) is waited out with ``UnavailableBackoff`` and
/// read again from the same anchor, so that nothing is lost or repeated; any other error ends the tail.
///
/// ``ChangeUpdates`` (`routekit changes --follow`) runs it with the store's reads and a commit waiter of its own;
/// the HTTP service's event streams and long-polls run it with their own reads (shared through the feed hub by
/// every follower at the same anchor, filtered for the token) and waits (the hub's commit signal, with a heartbeat
/// or a deadline). Like ``ChangeUpdates`` it is pulled: each step reads or waits in the calling task, nothing is
/// read ahead, and no task outlives it. Unlike it, it reports every step, for a follower that writes something at
/// each (a heartbeat, a comment while the store is away): every change set read, empty ones too, each wait that
/// ended without a commit, and each read the store could not answer.
package struct ChangeTail: Sendable {
    /// What one step of the loop did.
    package enum Step: Sendable {
        /// A change set was read: a page of the catch-up, or what the commits since the last read changed (it may be
        /// empty: the commits changed no matching route).
        case changes(ChangeSet)
        /// The waiter's time passed without a commit; nothing was read.
        case idle
        /// The store could not be reached: the next step waits (``UnavailableBackoff``), then reads again from the
        /// same anchor.
        case unavailable(RouteKitError)
    }

    /// Reads the change set after an anchor (`nil`: from the start), with the follower's predicate and limit.
    package typealias Read = @Sendable (ChangeAnchor?) async throws(RouteKitError) -> ChangeSet

    /// Makes the waiter, before the first read, so that no commit between a read and the wait is missed.
    package typealias MakeWaiter = @Sendable () async throws(RouteKitError) -> any ChangeTailWaiter

    private let read: Read
    private let makeWaiter: MakeWaiter
    private let stopped: @Sendable () -> Bool
    /// Where the next read starts.
    private var anchor: ChangeAnchor?
    /// A change set read before the tail began, to be its first step.
    private var pending: ChangeSet?
    private var waiter: (any ChangeTailWaiter)?
    /// Whether the last read caught up (the next one waits for a commit first).
    private var caughtUp = false
    /// Whether the last read found the store unavailable (the next step waits out the backoff first).
    private var backingOff = false
    private var backoff = UnavailableBackoff()
    private var finished = false

    /// A tail from `anchor` (`nil`: every current route first).
    /// - Parameters:
    ///   - read: reads the change set after an anchor.
    ///   - waiter: makes what the tail waits on, at its first step.
    ///   - stopped: whether to end (checked before each read or backoff, after each wait and when a read fails): by
    ///     default, when the calling task is cancelled.
    package init(
        since anchor: ChangeAnchor?, read: @escaping Read, waiter: @escaping MakeWaiter,
        stopped: @escaping @Sendable () -> Bool = { Task.isCancelled }
    ) {
        self.anchor = anchor
        self.read = read
        self.makeWaiter = waiter
        self.stopped = stopped
    }

    /// A tail whose first change set was read already, from an anchor `first` follows (the HTTP service reads before
    /// it answers, so that an unusable anchor gets its status): `first` is its first step, and it goes on from
    /// `first`'s anchor. The waiter `waiter` makes must stand as it stood before that read (it must wake for a commit
    /// made during it).
    package init(
        after first: ChangeSet, read: @escaping Read, waiter: @escaping MakeWaiter,
        stopped: @escaping @Sendable () -> Bool = { Task.isCancelled }
    ) {
        self.init(since: first.anchor, read: read, waiter: waiter, stopped: stopped)
        pending = first
    }

    /// A tail of `store`'s feed: its reads, and its commit waiter, waited on for at most 1 s at a time and read after
    /// every wait (what ``ChangeUpdates`` runs).
    init(store: any RouteStore, since anchor: ChangeAnchor?, matching predicate: ChangePredicate, limit: Int) {
        self.init(
            since: anchor,
            read: { [store] (after: ChangeAnchor?) async throws(RouteKitError) -> ChangeSet in
                try await store.changes(since: after, matching: predicate, limit: limit)
            },
            waiter: { [store] () async throws(RouteKitError) -> any ChangeTailWaiter in
                ChangeUpdates.WaiterHandle(try await store.makeCommitWaiter())
            })
    }

    /// The next step: the next change set read, a wait that saw no commit, or a read the store could not answer;
    /// `nil` once the tail has ended (stopped, or after it threw), and from then on.
    /// - Throws: the waiter's errors and the reads' errors other than ``RouteKitError/Code/unavailable``; the tail
    ///   ends.
    package mutating func next() async throws(RouteKitError) -> Step? {
        guard !finished else { return nil }
        do throws(RouteKitError) {
            if waiter == nil {
                // Made before the first read, so that no commit between a read and the wait is missed.
                waiter = try await makeWaiter()
            }
            if let first = pending {
                pending = nil
                anchor = first.anchor
                caughtUp = !first.hasMore
                return .changes(first)
            }
            while !stopped() {
                if backingOff {
                    // A store that cannot be reached (a database server restarting) is waited for, with backoff, and
                    // asked again from the same anchor: nothing is lost or repeated.
                    backingOff = false
                    do { try await backoff.wait() } catch { break }
                    continue
                }
                if caughtUp, let waiter {
                    let woken = await waiter.wait()
                    guard !stopped() else { break }
                    if !woken { return .idle }
                }
                waiter?.willRead()
                let set: ChangeSet
                do throws(RouteKitError) {
                    set = try await read(anchor)
                } catch {
                    // A read cut short because the consumer's task was cancelled (SQLite's reads on GRDB's threads
                    // end with an error then) is the end, not a failure.
                    if stopped() { break }
                    guard error.code == .unavailable else { throw error }
                    caughtUp = false
                    backingOff = true
                    return .unavailable(error)
                }
                backoff.reset()
                anchor = set.anchor
                caughtUp = !set.hasMore
                return .changes(set)
            }
        } catch {
            end()
            throw error
        }
        end()
        return nil
    }

    /// Ends the tail and closes its waiter.
    private mutating func end() {
        finished = true
        waiter?.close()
        waiter = nil
    }
}

/// Counts commits that recorded changes in this process, and wakes waiters at once when one happens: what a
/// backend's `CommitWaiter` waits on. For store backends.
package final class CommitSignal: @unchecked Sendable {
    private let lock = NSLock()
    private var generation: UInt64 = 0
    private var waiters: [UInt64: CheckedContinuation<Void, Never>] = [:]
    private var nextWaiter: UInt64 = 0
    /// Waits begun and not yet over, and those cancelled before their continuation was registered.
    private var pending: Set<UInt64> = []
    private var cancelled: Set<UInt64> = []

    /// Creates a signal.
    package init() {}

    /// Counts a commit and wakes every waiter.
    package func fire() {
        let woken = lock.withLock { () -> [CheckedContinuation<Void, Never>] in
            generation &+= 1
            defer {
                for id in waiters.keys { pending.remove(id) }
                waiters.removeAll()
            }
            return Array(waiters.values)
        }
        for c in woken { c.resume() }
    }

    /// How many commits fired so far.
    package var current: UInt64 { lock.withLock { generation } }

    /// Returns when a commit fires, after `milliseconds`, or when the calling task is cancelled, whichever comes
    /// first (a follower whose client went away stops waiting at once).
    package func wait(seen: UInt64, milliseconds: Int) async {
        let id = lock.withLock { () -> UInt64 in
            nextWaiter &+= 1
            pending.insert(nextWaiter)
            return nextWaiter
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
                let now: Bool = lock.withLock {
                    if generation != seen || cancelled.contains(id) {
                        cancelled.remove(id)
                        pending.remove(id)
                        return true
                    }
                    waiters[id] = c
                    return false
                }
                if now { return c.resume() }
                DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(milliseconds)) { [self] in
                    let timedOut = lock.withLock { () -> CheckedContinuation<Void, Never>? in
                        pending.remove(id)
                        return waiters.removeValue(forKey: id)
                    }
                    timedOut?.resume()
                }
            }
        } onCancel: {
            let c = lock.withLock { () -> CheckedContinuation<Void, Never>? in
                if let c = waiters.removeValue(forKey: id) {
                    pending.remove(id)
                    return c
                }
                // Not waiting yet: the continuation sees this and returns at once.
                if pending.contains(id) { cancelled.insert(id) }
                return nil
            }
            c?.resume()
        }
    }
}

/// Where a backend's change log stands, read in the same snapshot as the changes: what anchors are made from and
/// checked against. For store backends (SQLite and PostgreSQL share it).
package struct ChangeLogState: Sendable {
    /// The store's identity.
    package var storeID: UUID
    /// The store's epoch.
    package var epoch: UInt32
    /// The oldest position an anchor may hold (deletions before it were compacted away).
    package var floor: Int64
    /// The position of the newest change.
    package var head: Int64
    /// The token of the transaction that ends at ``head``.
    package var headToken: Int64

    /// A state.
    package init(storeID: UUID, epoch: UInt32, floor: Int64, head: Int64, headToken: Int64) {
        self.storeID = storeID
        self.epoch = epoch
        self.floor = floor
        self.head = head
        self.headToken = headToken
    }

    /// An anchor at `position` (with a first read's `horizon`), carrying `token`, that of the transaction ending at
    /// its checkpoint.
    package func anchor(position: Int64, horizon: Int64 = 0, token: Int64) -> ChangeAnchor {
        ChangeAnchor(
            storeID: storeID, epoch: epoch, position: position, horizon: horizon, token: UInt64(bitPattern: token))
    }

    /// The anchor of the newest change.
    package var headAnchor: ChangeAnchor { anchor(position: head, token: headToken) }

    /// Checks `a` against the store's history: its store and epoch, not ahead of the head, not older than the
    /// floor, and the token of the transaction ending at its checkpoint (`tokenAtCheckpoint`, which the backend
    /// looked up; `nil` when no transaction ends there).
    /// - Throws: the anchor errors (``RouteKitError/Code/isAnchorError``).
    package func validate(_ a: ChangeAnchor, tokenAtCheckpoint: Int64?) throws(RouteKitError) {
        let restart = "start again without an anchor"
        guard a.storeID == storeID else {
            throw RouteKitError(.anchorForeign, "the anchor belongs to another store (\(a.storeID)); \(restart)")
        }
        guard a.epoch == epoch else {
            throw RouteKitError(
                .anchorForeign,
                "the anchor is from epoch \(a.epoch) of this store, which is now at \(epoch); \(restart)")
        }
        let c = a.checkpoint
        if c > head && head == 0 {
            // No history at all where the anchor has some: the person it was handed to was erased (or never had
            // anything here). Expired, not ahead: nothing is wrong with the store.
            throw RouteKitError(
                .anchorExpired, "the history this anchor belongs to is gone (its person erased?); \(restart)")
        }
        guard c <= head else {
            throw RouteKitError(
                .anchorAhead,
                "the anchor is ahead of the store (position \(c), store at \(head)): was the store "
                    + "restored from an older copy? \(restart)")
        }
        guard c >= floor else {
            throw RouteKitError(
                .anchorExpired,
                "the anchor is older than the deletion history the store keeps (compacted up to position "
                    + "\(floor)); \(restart)")
        }
        if c == 0 { return }
        guard let tokenAtCheckpoint, UInt64(bitPattern: tokenAtCheckpoint) == a.token else {
            throw RouteKitError(
                .anchorAhead,
                "the anchor comes from a history this store no longer has (restored from an older copy?); \(restart)")
        }
    }
}
