private import CRouteKitSystem
import Foundation
package import RouteKit
import RouteKitIngest

/// Reads a GPX file on a thread of its own, handing events to an async consumer through a small bounded
/// queue: the importer parses on one core while the other packs and stores the previous batch.
///
/// Memory: at most ``capacity`` events are queued (each at most one batch of points); the reading thread
/// waits when the queue is full. ``cancel()``, or releasing the reader, stops the thread and ends ``next()``.
/// One consumer at a time.
package final class GPXReaderThread: Sendable {
    /// Events queued at most.
    package let capacity: Int
    private let state: State

    /// Starts reading `path` at once.
    package init(path: String, capacity: Int = 8, options: GPXReadOptions = GPXReadOptions()) {
        self.capacity = max(1, capacity)
        state = Self.start(capacity: capacity, after: nil) { $0.produce(path: path, options: options) }
    }

    /// Starts reading `path` as soon as `previous` has read its whole input (or was cancelled), so that a folder's
    /// next file is parsed while the current one's last events are stored, and never two files at once.
    package init(
        path: String, capacity: Int = 8, options: GPXReadOptions = GPXReadOptions(), after previous: GPXReaderThread?
    ) {
        self.capacity = max(1, capacity)
        state = Self.start(capacity: capacity, after: previous?.state) { state in
            if state.waitForPrevious() { state.produce(path: path, options: options) }
        }
    }

    /// Starts reading GPX held in memory (an archive's entry) at once.
    package init(bytes: [UInt8], name: String, capacity: Int = 8, options: GPXReadOptions = GPXReadOptions()) {
        self.capacity = max(1, capacity)
        state = Self.start(capacity: capacity, after: nil) { $0.produce(bytes: bytes, name: name, options: options) }
    }

    /// Starts reading GPX that `load` makes on the reading thread (an archive's entry decompressed there), parsing
    /// it as soon as `previous` has read its whole input (or was cancelled), so that never two inputs are parsed at
    /// once. With `loadFirst`, `load` runs at once, while `previous` is still read (for an entry whose decompressed
    /// size is small: two are then held at once); else after that. An error `load` throws is the reader's error.
    /// Cancelled while it waits, the reader neither loads nor parses.
    package init(
        name: String, capacity: Int = 8, options: GPXReadOptions = GPXReadOptions(), after previous: GPXReaderThread?,
        loadFirst: Bool, load: @escaping @Sendable () throws(RouteKitError) -> [UInt8]
    ) {
        self.capacity = max(1, capacity)
        state = Self.start(capacity: capacity, after: previous?.state) {
            $0.produce(loading: load, name: name, options: options, loadFirst: loadFirst)
        }
    }

    /// Starts reading GPX from the source `open` makes on the reading thread (an archive's entry inflated as it is
    /// read, for one too large to hold in memory), once `previous` has read its whole input (or was cancelled). An
    /// error `open` throws is the reader's error.
    package init(
        name: String, capacity: Int = 8, options: GPXReadOptions = GPXReadOptions(), after previous: GPXReaderThread?,
        open: @escaping @Sendable () throws(RouteKitError) -> any ByteSource
    ) {
        self.capacity = max(1, capacity)
        state = Self.start(capacity: capacity, after: previous?.state) { state in
            guard state.waitForPrevious() else { return }
            state.produce(opening: open, name: name, options: options)
        }
    }

    /// Starts the reading thread, which runs `produce` (which waits for `before`, if any, as it needs to). The thread
    /// holds only the shared state, so releasing the reader runs `deinit`, which stops it.
    private static func start(capacity: Int, after before: State?, produce: @escaping @Sendable (State) -> Void)
        -> State
    {
        let state = State(capacity: max(1, capacity), previous: before)
        // A thread of the blocking executor, named while it reads (it shows in top, perf and gdb).
        BlockingExecutor.shared.start(named: GPXReaderThread.threadName) {
            state.threadStarted(id: rk_this_thread_id())
            produce(state)
            state.threadEnded()
        }
        return state
    }

    deinit { state.cancel() }

    /// Whether the reading thread is still running, asked through a closure that does not keep the reader alive
    /// (tests use it to see the thread stop when the reader is released).
    package var threadRunningProbe: @Sendable () -> Bool {
        let state = state
        return { state.isThreadRunning }
    }

    /// The reading thread's name, as the kernel shows it (`top -H`, `perf`, `/proc/PID/task/TID/comm`).
    package static let threadName = "rk-gpx-reader"

    /// The reading thread's id at the kernel once it has started (Linux), `nil` before or where there is none.
    package var threadKernelID: Int32? { state.kernelID }

    /// How many events are queued and not yet taken (tests watch a reader started `after:` another stay idle).
    package var queuedEvents: Int { state.queued }

    /// Stops the reading thread; events not yet taken are dropped and ``next()`` returns `nil`.
    package func cancel() { state.cancel() }

    /// The next event with the bytes read when it was parsed; `nil` at the end, after ``cancel()``, or when the
    /// consuming task is cancelled.
    /// - Throws: the reader's error (file, line, column), after the events before it.
    package func next() async throws(RouteKitError) -> (GPXEvent, Int)? {
        try await state.next()
    }

    /// The queue shared by the reading thread and the consumer.
    final class State: @unchecked Sendable {
        let capacity: Int
        private let condition = NSCondition()
        private var queue: [(GPXEvent, Int)] = []
        private var head = 0
        private var finished = false
        private var failure: RouteKitError?
        private var cancelled = false
        private var waiting: CheckedContinuation<Void, Never>?
        private var threadRunning = true
        private var threadID: Int32 = 0

        /// The reader this one waits for (until it has read its whole input), dropped once waited for: a chain of
        /// readers over a folder never keeps the earlier ones alive.
        private var previous: State?

        init(capacity: Int, previous: State? = nil) {
            self.capacity = capacity
            self.previous = previous
        }

        var isCancelled: Bool {
            condition.lock()
            defer { condition.unlock() }
            return cancelled
        }

        /// Waits until the reader before this one has queued its last event (or met an error, or was cancelled);
        /// `false` when this one is cancelled first. Locks are taken the previous reader's first, then this one's,
        /// and ``cancel()`` never holds both: no deadlock.
        func waitForPrevious() -> Bool {
            condition.lock()
            let before = previous
            condition.unlock()
            if let before {
                before.condition.lock()
                while !before.finished && !isCancelled { before.condition.wait() }
                before.condition.unlock()
                condition.lock()
                previous = nil
                condition.unlock()
            }
            return !isCancelled
        }

        /// Called by the reading thread as its last act.
        func threadStarted(id: Int32) {
            condition.lock()
            threadID = id
            condition.unlock()
        }

        var kernelID: Int32? {
            condition.lock()
            defer { condition.unlock() }
            return threadID == 0 ? nil : threadID
        }

        func threadEnded() {
            condition.lock()
            threadRunning = false
            condition.unlock()
        }

        var queued: Int {
            condition.lock()
            defer { condition.unlock() }
            return queue.count - head
        }

        var isThreadRunning: Bool {
            condition.lock()
            defer { condition.unlock() }
            return threadRunning
        }

        func produce(path: String, options: GPXReadOptions) {
            do {
                run(try GPXReader(path: path, options: options))
            } catch {
                end(error)
            }
        }

        func produce(
            opening open: () throws(RouteKitError) -> any ByteSource, name: String, options: GPXReadOptions
        ) {
            switch Result(catching: open) {
            case .success(let source): run(GPXReader(source: source, name: name, options: options))
            case .failure(let error): end(error)
            }
        }

        func produce(bytes: [UInt8], name: String, options: GPXReadOptions) {
            run(GPXReader(bytes: bytes, name: name, options: options))
        }

        func produce(
            loading load: () throws(RouteKitError) -> [UInt8], name: String, options: GPXReadOptions, loadFirst: Bool
        ) {
            let early = loadFirst ? Result(catching: load) : nil
            guard waitForPrevious() else { return }
            switch early ?? Result(catching: load) {
            case .success(let bytes): run(GPXReader(bytes: bytes, name: name, options: options))
            case .failure(let error): end(error)
            }
        }

        private func run(_ reader: GPXReader) {
            do {
                while let event = try reader.next() {
                    guard push(event, reader.bytesRead) else { return }
                }
                end(nil)
            } catch {
                end(error)
            }
        }

        private func push(_ event: GPXEvent, _ bytes: Int) -> Bool {
            condition.lock()
            while queue.count - head >= capacity && !cancelled { condition.wait() }
            if cancelled {
                condition.unlock()
                return false
            }
            queue.append((event, bytes))
            let w = waiting
            waiting = nil
            condition.unlock()
            w?.resume()
            return true
        }

        private func end(_ error: RouteKitError?) {
            condition.lock()
            finished = true
            if failure == nil { failure = error }
            let w = waiting
            waiting = nil
            condition.broadcast()
            condition.unlock()
            w?.resume()
        }

        func cancel() {
            condition.lock()
            cancelled = true
            finished = true
            queue = []
            head = 0
            let w = waiting
            waiting = nil
            let before = previous
            condition.broadcast()
            condition.unlock()
            w?.resume()
            // Wakes this reader's thread if it waits for the previous reader (it then ends without reading).
            if let before {
                before.condition.lock()
                before.condition.broadcast()
                before.condition.unlock()
            }
        }

        private enum Take {
            case item(GPXEvent, Int)
            case end(RouteKitError?)
            case empty
        }

        /// Takes an event if one is queued (never waits).
        private func take() -> Take {
            condition.lock()
            defer { condition.unlock() }
            if cancelled { return .end(nil) }
            if head < queue.count {
                let item = queue[head]
                head += 1
                if head > 64 && head * 2 > queue.count {
                    queue.removeFirst(head)
                    head = 0
                }
                // Broadcast, not signal: the reader of the next file may wait on this condition too (for the end of
                // this one), and a signal that woke it instead of this reading thread would leave both waiting.
                condition.broadcast()
                return .item(item.0, item.1)
            }
            return finished ? .end(failure) : .empty
        }

        /// Parks `c` until an event, the end or a cancel arrives; resumes it at once if one already has (or
        /// if another consumer is already parked: one consumer at a time).
        private func park(_ c: CheckedContinuation<Void, Never>) {
            condition.lock()
            if head < queue.count || finished || waiting != nil {
                condition.unlock()
                c.resume()
            } else {
                waiting = c
                condition.unlock()
            }
        }

        func next() async throws(RouteKitError) -> (GPXEvent, Int)? {
            while true {
                switch take() {
                case .item(let e, let b): return (e, b)
                case .end(let f?): throw f
                case .end(nil): return nil
                case .empty:
                    if Task.isCancelled {
                        cancel()
                        return nil
                    }
                    await withTaskCancellationHandler {
                        await withCheckedContinuation { park($0) }
                    } onCancel: {
                        self.cancel()
                    }
                }
            }
        }
    }
}
