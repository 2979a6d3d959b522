import Foundation
import RouteKit
import RouteKitGPX
import RouteKitIngest
import Testing

@Suite("GPX reader thread")
struct ReaderThreadTests {
    static func bigFile(points: Int = 40_000) throws -> String {
        var s = "<gpx version=\"1.1\" creator=\"t\" xmlns=\"http://www.topografix.com/GPX/1/1\"><trk><trkseg>\n"
        for i in 0..<points { s += "<trkpt lat=\"47.\(i)\" lon=\"8.\(i)\"></trkpt>\n" }
        s += "</trkseg></trk></gpx>\n"
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("rk-thread-\(UUID().uuidString).gpx")
            .path
        try s.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// Waits (up to 5 minutes: under the thread sanitizer, beside every other suite on 2 cores, a test may get
    /// little time) until `condition` holds.
    static func waitUntil(_ condition: () -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(300)
        while !condition() {
            try #require(ContinuousClock.now < deadline, "the condition never held")
            try await Task.sleep(for: .milliseconds(5))
        }
    }

    /// A named pipe kept open without data (`writer` holds it, read and write): a reader of its path blocks in `read`
    /// until `writer` is closed or written to.
    static func emptyPipe() throws -> (path: String, writer: Int32) {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("rk-pipe-\(UUID().uuidString).fifo")
            .path
        try #require(mkfifo(path, 0o600) == 0)
        let writer = open(path, O_RDWR)
        try #require(writer >= 0)
        return (path, writer)
    }

    @Test("every event arrives, in order, then nil")
    func allEvents() async throws {
        let path = try Self.bigFile()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let reader = GPXReaderThread(path: path, capacity: 2)
        var points = 0
        while let (event, _) = try await reader.next() {
            if case .trackPoints(let p) = event { points += p.count }
        }
        #expect(points == 40_000)
        #expect(try await reader.next() == nil)
    }

    @Test("releasing a reader without cancel() stops its thread and frees it")
    func releaseStops() async throws {
        let path = try Self.bigFile()
        defer { try? FileManager.default.removeItem(atPath: path) }
        weak var weakReader: GPXReaderThread?
        var threadRunning: @Sendable () -> Bool = { true }
        do {
            // 40 batches through a queue of 2: the thread is blocked on the full queue when the reader goes.
            let reader = GPXReaderThread(path: path, capacity: 2)
            weakReader = reader
            threadRunning = reader.threadRunningProbe
            _ = try await reader.next()
            try await Task.sleep(for: .milliseconds(100))
            #expect(threadRunning(), "the thread waits for the consumer while the reader lives")
        }
        #expect(weakReader == nil, "nothing else keeps the reader")
        let deadline = ContinuousClock.now + .seconds(10)
        while threadRunning() && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
        #expect(!threadRunning(), "its thread ended")
    }

    @Test(
        "a reader started after another parses nothing until the other has read its whole file, or was cancelled",
        .timeLimit(.minutes(10)))  // a guard against a hang, not a speed check
    func readsAfterPrevious() async throws {
        // 5,000 points: 5 batches, more than the queue of 2 holds (CI runs this under TSan beside every suite).
        let path = try Self.bigFile(points: 5_000)
        defer { try? FileManager.default.removeItem(atPath: path) }
        // The first reader's thread blocks on its full queue of 2 after its first events.
        let first = GPXReaderThread(path: path, capacity: 2)
        let second = GPXReaderThread(path: path, capacity: 64, after: first)
        try await Self.waitUntil { first.queuedEvents == 2 }
        try await Task.sleep(for: .milliseconds(200))
        #expect(second.queuedEvents == 0, "the second file waits while the first is being read")
        var firstPoints = 0
        while let (event, _) = try await first.next() {
            if case .trackPoints(let p) = event { firstPoints += p.count }
        }
        #expect(firstPoints == 5_000)
        var secondPoints = 0
        while let (event, _) = try await second.next() {
            if case .trackPoints(let p) = event { secondPoints += p.count }
        }
        #expect(secondPoints == 5_000, "then it reads its whole file")

        let third = GPXReaderThread(path: path, capacity: 2)
        let fourth = GPXReaderThread(path: path, capacity: 2, after: third)
        _ = try await third.next()
        try await Self.waitUntil { third.queuedEvents == 2 }
        try await Task.sleep(for: .milliseconds(200))
        #expect(fourth.queuedEvents == 0)
        third.cancel()
        let event = try await fourth.next()
        if case .document? = event?.0 {} else { Issue.record("the reader after a cancelled one starts: \(String(describing: event?.0))") }
    }

    @Test(
        "a reader cancelled while it waits for the one before ends without reading, though that one is never read",
        .timeLimit(.minutes(10)))  // a guard against a hang, not a speed check
    func cancelWhileWaiting() async throws {
        // 5,000 points: 5 batches, more than the queue of 2 holds (CI runs this under TSan beside every suite).
        let path = try Self.bigFile(points: 5_000)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let first = GPXReaderThread(path: path, capacity: 2)
        let loads = Locked(0)
        let second = GPXReaderThread(name: "entry", capacity: 2, after: first, loadFirst: false) {
            loads.withLock { $0 += 1 }
            return Array("<gpx/>".utf8)
        }
        let fileReader = GPXReaderThread(path: path, capacity: 2, after: first)
        let running = [second.threadRunningProbe, fileReader.threadRunningProbe]
        try await Self.waitUntil { first.queuedEvents == 2 }
        second.cancel()
        fileReader.cancel()
        try await Self.waitUntil { !running[0]() && !running[1]() }
        #expect(loads.withLock { $0 } == 0, "nothing loaded")
        #expect(try await second.next() == nil && fileReader.queuedEvents == 0)
        #expect(first.queuedEvents == 2, "the first reader is untouched")
    }

    @Test(
        "a consumer waiting in next() returns when another task cancels the reader",
        .timeLimit(.minutes(10)))  // a guard against a hang, not a speed check (CI runs this under TSan)
    func cancelWakesConsumer() async throws {
        let (fifo, writer) = try Self.emptyPipe()
        defer { unlink(fifo) }
        let reader = GPXReaderThread(path: fifo)
        let consumer = Task { try await reader.next() == nil }
        try await Task.sleep(for: .milliseconds(200))
        reader.cancel()
        let gotNil = try await consumer.value
        #expect(gotNil)
        _ = write(writer, "x", 1)
        close(writer)
    }

    @Test(
        "the reading thread carries its name where the kernel shows it (/proc/self/task/TID/comm)",
        .timeLimit(.minutes(10)))  // a guard against a hang, not a speed check (CI runs this under TSan)
    func threadName() async throws {
        guard FileManager.default.fileExists(atPath: "/proc/self/task") else { return }  // not Linux: nothing to see
        let (fifo, writer) = try Self.emptyPipe()
        defer { unlink(fifo) }
        let reader = GPXReaderThread(path: fifo)
        let running = reader.threadRunningProbe
        try await Self.waitUntil { reader.threadKernelID != nil }
        // The thread is blocked reading the pipe, so its entry in /proc is there.
        let tid = try #require(reader.threadKernelID)
        let comm = try String(contentsOfFile: "/proc/self/task/\(tid)/comm", encoding: .utf8)
        #expect(comm.trimmingCharacters(in: .whitespacesAndNewlines) == GPXReaderThread.threadName)
        reader.cancel()
        close(writer)  // the blocked read sees the end of the pipe, so the cancelled thread ends
        try await Self.waitUntil { !running() }
    }
}
