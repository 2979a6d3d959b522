import Foundation
public import RouteKit

/// Reads a GPX file on a thread of its own, handing events to an async consumer through a small bounded
/// queue: the importer parses on one core while the other packs and stores the previous batch.
///
/// Memory: at most ``capacity`` events are queued (each at most one batch of points); the reading thread
/// waits when the queue is full. ``cancel()``, or releasing the reader, stops the thread and ends ``next()``.
/// One consumer at a time.
public final class GPXReaderThread: Sendable {
    /// Events queued at most.
    public let capacity: Int
    private let state: State

    /// Starts reading `path` at once.
    public init(path: String, capacity: Int = 8, options: GPXReadOptions = GPXReadOptions()) {
        self.capacity = max(1, capacity)
        let state = State(capacity: max(1, capacity))
        self.state = state
        // The thread holds only the shared state, so releasing the reader runs `deinit`, which stops it.
        let thread = Thread {
            state.produce(path: path, options: options)
            state.threadEnded()
        }
        thread.name = "routekit-gpx-reader"
        thread.start()
    }

    /// Starts reading GPX held in memory (an archive's entry) at once.
    public init(bytes: [UInt8], name: String, capacity: Int = 8, options: GPXReadOptions = GPXReadOptions()) {
        self.capacity = max(1, capacity)
        let state = State(capacity: max(1, capacity))
        self.state = state
        let thread = Thread {
            state.produce(bytes: bytes, name: name, options: options)
            state.threadEnded()
        }
        thread.name = "routekit-gpx-reader"
        thread.start()
    }

    deinit { state.cancel() }

    /// Whether the reading thread is still running, asked through a closure that does not keep the reader alive
    /// (tests use it to see the thread stop when the reader is released).
    package var threadRunningProbe: @Sendable () -> Bool {
        let state = state
        return { state.isThreadRunning }
    }

    /// Stops the reading thread; events not yet taken are dropped and ``next()`` returns `nil`.
    public func cancel() { state.cancel() }

    /// The next event with the bytes read when it was parsed; `nil` at the end, after ``cancel()``, or when the
    /// consuming task is cancelled.
    /// - Throws: the reader's error (file, line, column), after the events before it.
    public func next() async throws(RouteKitError) -> (GPXEvent, Int)? {
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

        init(capacity: Int) { self.capacity = capacity }

        /// Called by the reading thread as its last act.
        func threadEnded() {
            condition.lock()
            threadRunning = false
            condition.unlock()
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

        func produce(bytes: [UInt8], name: String, options: GPXReadOptions) {
            run(GPXReader(bytes: bytes, name: name, options: options))
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
            condition.broadcast()
            condition.unlock()
            w?.resume()
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
                condition.signal()
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
