import Foundation

/// One batch of a route query: locations in route order, and whether it is the last.
public struct LocationBatch: Hashable, Sendable {
    /// The locations, in route order.
    public var locations: [Location]
    /// `true` on the last batch (HealthKit's `done`).
    public var isDone: Bool

    /// Creates a batch.
    package init(locations: [Location], isDone: Bool) {
        self.locations = locations
        self.isDone = isDone
    }
}

/// One batch of a series query: samples in time order, and whether it is the last.
public struct SampleBatch: Hashable, Sendable {
    /// The samples, in time order.
    public var samples: [QuantitySample]
    /// `true` on the last batch.
    public var isDone: Bool
}

/// A route's locations as an `AsyncSequence` of ordered batches (HealthKit's `HKWorkoutRouteQuery`).
///
/// ```swift
/// for try await batch in store.locations(of: routeID, batchSize: 4096) {
///     consume(batch.locations)
///     if batch.isDone { print("done") }
/// }
/// ```
///
/// - The last batch has ``LocationBatch/isDone`` set (a route with no location in range yields one empty,
///   done batch).
/// - The whole iteration reads one consistent version of the store: a route replaced or deleted while it is
///   read is still read whole, never mixed with the new version.
/// - Leaving the loop early, or cancelling the consuming task, stops the query and releases what it held.
/// - Memory: one decoded chunk plus one batch (and, on SQLite, the packed bytes of a route of up to 64 chunks,
///   which it reads whole in one transaction: about 6 KB a chunk).
public struct RouteQuery: AsyncSequence, Sendable {
    /// Locations per batch unless told otherwise.
    public static let defaultBatchSize = 1024

    let store: any RouteStore
    let route: UUID
    let batchSize: Int
    let interval: ClosedRange<Instant>?

    public typealias Element = LocationBatch
    public typealias Failure = RouteKitError

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(
            engine: BatchEngine(batchSize: batchSize) { [store, route, interval] () async throws(RouteKitError) in
                try await store.routeChunks(ofRoute: route, kind: .locations, interval: interval)
            } decode: { [interval] (bytes: [UInt8]) throws(RouteKitError) -> [Location] in
                let all = try LocationChunk.decode(bytes)
                guard let interval else { return all }
                return all.filter { $0.timestamp.map { interval.contains($0.instant) } ?? false }
            })
    }

    /// Iterates a ``RouteQuery``.
    public struct AsyncIterator: AsyncIteratorProtocol {
        var engine: BatchEngine<Location>

        public mutating func next() async throws(RouteKitError) -> LocationBatch? {
            guard let (items, done) = try await engine.next() else { return nil }
            return LocationBatch(locations: items, isDone: done)
        }
    }
}

/// A workout's samples of one type as an `AsyncSequence` of batches in time order.
public struct SeriesQuery: AsyncSequence, Sendable {
    let store: any RouteStore
    let workout: UUID
    let type: QuantityType
    let batchSize: Int

    public typealias Element = SampleBatch
    public typealias Failure = RouteKitError

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(
            engine: BatchEngine(batchSize: batchSize) { [store, workout, type] () async throws(RouteKitError) in
                try await store.workoutChunks(ofWorkout: workout, kind: .quantity(type))
            } decode: { (bytes: [UInt8]) throws(RouteKitError) -> [QuantitySample] in
                try QuantityChunk.decode(bytes)
            })
    }

    /// Iterates a ``SeriesQuery``.
    public struct AsyncIterator: AsyncIteratorProtocol {
        var engine: BatchEngine<QuantitySample>

        public mutating func next() async throws(RouteKitError) -> SampleBatch? {
            guard let (items, done) = try await engine.next() else { return nil }
            return SampleBatch(samples: items, isDone: done)
        }
    }
}

/// Turns a cursor of chunks into batches of a fixed size, with one chunk of look-ahead to mark the last.
struct BatchEngine<Item> {
    let batchSize: Int
    let open: @Sendable () async throws(RouteKitError) -> any ChunkCursor
    let decode: @Sendable ([UInt8]) throws(RouteKitError) -> [Item]
    var cursor: (any ChunkCursor)?
    var buffer: [Item] = []
    var position = 0
    var opened = false
    var finished = false

    init(
        batchSize: Int, open: @escaping @Sendable () async throws(RouteKitError) -> any ChunkCursor,
        decode: @escaping @Sendable ([UInt8]) throws(RouteKitError) -> [Item]
    ) {
        self.batchSize = batchSize
        self.open = open
        self.decode = decode
    }

    /// Refills the buffer from the next non-empty chunk; `false` at the end.
    private mutating func refill() async throws(RouteKitError) -> Bool {
        while let c = cursor {
            guard let chunk = try await c.next() else {
                c.close()
                cursor = nil
                return false
            }
            let items = try decode(chunk.bytes)
            if !items.isEmpty {
                buffer = items
                position = 0
                return true
            }
        }
        return false
    }

    private mutating func stop() {
        cursor?.close()
        cursor = nil
        finished = true
        buffer = []
    }

    mutating func next() async throws(RouteKitError) -> ([Item], Bool)? {
        if finished { return nil }
        if Task.isCancelled {
            stop()
            return nil
        }
        do throws(RouteKitError) {
            if !opened {
                opened = true
                guard batchSize >= 1 else {
                    throw RouteKitError(.invalidArgument, "the batch size must be at least 1, not \(batchSize)")
                }
                cursor = try await open()
            }
            var batch: [Item] = []
            while batch.count < batchSize {
                if position == buffer.count {
                    guard try await refill() else { break }
                }
                let take = Swift.min(batchSize - batch.count, buffer.count - position)
                if batch.isEmpty && position == 0 && take == buffer.count {
                    // A whole decoded chunk: hand it over without copying.
                    swap(&batch, &buffer)
                    buffer.removeAll()
                    position = 0
                    continue
                }
                if batch.isEmpty { batch.reserveCapacity(Swift.min(batchSize, 65_536)) }
                batch.append(contentsOf: buffer[position..<(position + take)])
                position += take
            }
            // Look ahead one chunk so the last batch can say it is the last.
            var more = position < buffer.count
            if !more { more = try await refill() }
            if !more { stop() }
            return (batch, !more)
        } catch {
            stop()
            throw error
        }
    }
}
