import Foundation
public import RouteKit

/// Reads a GPX file on a thread of its own, handing events to an async consumer through a small bounded
/// queue: the importer parses on one core while the other packs and stores the previous batch.
///
/// Memory: at most ``capacity`` events are queued (each at most one batch of points); the reading thread
/// waits when the queue is full. ``cancel()`` (or releasing the reader) stops the thread.
public final class GPXReaderThread: @unchecked Sendable {
    /// Events queued at most.
    public let capacity: Int
    private let condition = NSCondition()
    private var queue: [(GPXEvent, Int)] = []
    private var head = 0
    private var finished = false
    private var failure: RouteKitError?
    private var cancelled = false
    private var waiting: CheckedContinuation<Void, Never>?

    /// Starts reading `path` at once.
    public init(path: String, capacity: Int = 8, options: GPXReadOptions = GPXReadOptions()) {
        self.capacity = max(1, capacity)
        let thread = Thread { [self] in self.produce(path: path, options: options) }
        thread.name = "routekit-gpx-reader"
        thread.start()
    }

    deinit { cancel() }

    private func produce(path: String, options: GPXReadOptions) {
        do {
            let reader = try GPXReader(path: path, options: options)
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
        failure = error
        let w = waiting
        waiting = nil
        condition.unlock()
        w?.resume()
    }

    /// Stops the reading thread (events not yet taken are dropped).
    public func cancel() {
        condition.lock()
        cancelled = true
        condition.broadcast()
        condition.unlock()
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

    /// Parks `c` until an event or the end arrives; resumes it at once if one already has.
    private func park(_ c: CheckedContinuation<Void, Never>) {
        condition.lock()
        if head < queue.count || finished {
            condition.unlock()
            c.resume()
        } else {
            waiting = c
            condition.unlock()
        }
    }

    /// The next event with the bytes read when it was parsed; `nil` at the end.
    /// - Throws: the reader's error (file, line, column), after the events before it.
    public func next() async throws(RouteKitError) -> (GPXEvent, Int)? {
        while true {
            switch take() {
            case .item(let e, let b): return (e, b)
            case .end(let f?): throw f
            case .end(nil): return nil
            case .empty: await withCheckedContinuation { park($0) }
            }
        }
    }
}
