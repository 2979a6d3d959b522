import Foundation
import RouteKit
import RouteKitGPX
import Testing

@Suite("GPX reader thread")
struct ReaderThreadTests {
    static func bigFile() throws -> String {
        var s = "<gpx version=\"1.1\" creator=\"t\" xmlns=\"http://www.topografix.com/GPX/1/1\"><trk><trkseg>\n"
        for i in 0..<40_000 { s += "<trkpt lat=\"47.\(i)\" lon=\"8.\(i)\"></trkpt>\n" }
        s += "</trkseg></trk></gpx>\n"
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("rk-thread-\(UUID().uuidString).gpx")
            .path
        try s.write(toFile: path, atomically: true, encoding: .utf8)
        return path
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
        "a consumer waiting in next() returns when another task cancels the reader",
        .timeLimit(.minutes(1)))  // a guard against a hang, not a speed check
    func cancelWakesConsumer() async throws {
        let fifo = FileManager.default.temporaryDirectory.appendingPathComponent("rk-thread-\(UUID().uuidString).fifo")
            .path
        try #require(mkfifo(fifo, 0o600) == 0)
        defer { unlink(fifo) }
        let writer = open(fifo, O_RDWR)  // keeps the pipe open without data: the reading thread blocks
        let reader = GPXReaderThread(path: fifo)
        let consumer = Task { try await reader.next() == nil }
        try await Task.sleep(for: .milliseconds(200))
        reader.cancel()
        let gotNil = try await consumer.value
        #expect(gotNil)
        _ = write(writer, "x", 1)
        close(writer)
    }
}
