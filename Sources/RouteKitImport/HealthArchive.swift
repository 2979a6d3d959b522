import Foundation
import RouteKit
import RouteKitHealth
import ZIPFoundation

/// An Apple Health export inside a zip archive (the `export.zip` the Health app shares): `export.xml` inflated as a
/// stream each time it is read (it can be gigabytes), the route files it references read whole from their entries.
/// Nothing is unpacked to the filesystem.
struct ZipHealthExport: HealthExportFiles {
    let archive: ZipArchive
    /// The archive file (each pass over `export.xml` opens it again, on a reading thread of its own).
    let archivePath: String
    /// The folder of `export.xml` inside the archive (`apple_health_export/`, or empty).
    let prefix: String

    /// The export in `archive` (a file at `path`): an `export.xml` at its root or one folder down whose root element
    /// is `HealthData`; `nil` when there is none.
    static func find(in archive: ZipArchive, path: String) -> ZipHealthExport? {
        for entry in archive.paths where entry == "export.xml" || entry.hasSuffix("/export.xml") {
            guard entry.split(separator: "/").count <= 2 else { continue }
            let export = ZipHealthExport(
                archive: archive, archivePath: path, prefix: String(entry.dropLast("export.xml".count)))
            guard let stream = try? export.openXML() else { continue }
            if HealthImporter.rootElement(of: stream, name: export.xmlName) == "HealthData" { return export }
        }
        return nil
    }

    var xmlName: String { "\(archive.name)!\(prefix)export.xml" }

    var xmlSize: Int? { archive.size(of: prefix + "export.xml") }

    func openXML() throws(RouteKitError) -> any HealthByteStream {
        try ZipEntryStream(
            archivePath: archivePath, entry: prefix + "export.xml", label: xmlName, limits: archive.limits)
    }

    func contents(of path: String) throws(RouteKitError) -> [UInt8] {
        do {
            return try archive.contents(of: prefix + path)
        } catch let error where error.code == .notFound {
            throw RouteKitError(.io, "the file is missing from the export", file: label(path))
        }
    }

    func label(_ path: String) -> String { "\(archive.name)!\(prefix)\(path)" }
}

/// One zip entry, inflated on a thread of its own (ZIPFoundation hands out an entry's bytes by calling back) and read
/// by the consumer a buffer at a time, with at most ``capacity`` inflated chunks waiting: memory stays bounded
/// whatever the entry's size. The entry's CRC is checked at its end; the archive's limits on total size and
/// compression ratio apply as it is read. Releasing the stream stops the thread.
final class ZipEntryStream: HealthByteStream {
    /// Inflated chunks (of 64 KiB) waiting at most.
    static let capacity = 4
    private let state = State()

    /// Starts inflating `entry` of the archive at `archivePath`, which this stream opens for itself.
    /// - Throws: `RouteKitError.Code.compression` when the archive cannot be opened, `.notFound` for a missing entry.
    init(archivePath: String, entry path: String, label: String, limits: ArchiveLimits) throws(RouteKitError) {
        let archive: Archive
        do {
            archive = try Archive(url: URL(fileURLWithPath: archivePath), accessMode: .read)
        } catch {
            throw RouteKitError(.compression, "not a readable zip archive (\(error))", file: archivePath)
        }
        guard let entry = archive[path] else {
            throw RouteKitError(.notFound, "the archive has no entry \(path)", file: archivePath)
        }
        let state = self.state
        // The thread is the archive's only user from here on.
        let owned = UncheckedBox((archive, entry))
        let thread = Thread {
            let (archive, entry) = owned.value
            let compressed = max(1, Int(clamping: entry.compressedSize))
            var total = 0
            var refusal: RouteKitError?
            do {
                _ = try archive.extract(entry, bufferSize: 1 << 16, skipCRC32: false) { data in
                    total += data.count
                    if total > limits.maxTotalBytes {
                        refusal = RouteKitError(
                            .compression, "the entry is larger than \(limits.maxTotalBytes >> 30) GiB decompressed",
                            file: label)
                    } else if total > 1 << 20 && Double(total) / Double(compressed) > limits.maxRatio {
                        refusal = RouteKitError(
                            .compression,
                            "the entry decompresses more than \(Int(limits.maxRatio))× (a zip bomb?); refused",
                            file: label)
                    }
                    if let refusal { throw refusal }
                    guard state.put(data) else { throw CancellationError() }
                }
                state.finish(nil)
            } catch {
                state.finish(refusal ?? RouteKitError(.compression, "the entry cannot be read: \(error)", file: label))
            }
        }
        thread.name = "routekit-zip-entry"
        thread.start()
    }

    deinit { state.cancel() }

    func read(into buffer: UnsafeMutableRawBufferPointer) throws(RouteKitError) -> Int {
        try state.take(into: buffer)
    }

    /// The chunks handed from the inflating thread to the reader.
    final class State: @unchecked Sendable {
        private let condition = NSCondition()
        private var chunks: [Data] = []
        private var current = Data()
        private var offset = 0
        private var finished = false
        private var failure: RouteKitError?
        private var cancelled = false

        /// Queues a chunk, waiting while ``ZipEntryStream/capacity`` are queued; `false` once the reader is gone.
        func put(_ data: Data) -> Bool {
            condition.lock()
            defer { condition.unlock() }
            while chunks.count >= ZipEntryStream.capacity && !cancelled { condition.wait() }
            if cancelled { return false }
            chunks.append(data)
            condition.broadcast()
            return true
        }

        /// The end of the entry, or why it could not be read.
        func finish(_ error: RouteKitError?) {
            condition.lock()
            finished = true
            failure = error
            condition.broadcast()
            condition.unlock()
        }

        /// The reader is gone: the inflating thread stops at its next chunk.
        func cancel() {
            condition.lock()
            cancelled = true
            chunks = []
            condition.broadcast()
            condition.unlock()
        }

        func take(into buffer: UnsafeMutableRawBufferPointer) throws(RouteKitError) -> Int {
            condition.lock()
            defer { condition.unlock() }
            while true {
                if offset < current.count {
                    let n = min(buffer.count, current.count - offset)
                    current.withUnsafeBytes { src in
                        if let from = src.baseAddress {
                            buffer.baseAddress?.copyMemory(from: from + offset, byteCount: n)
                        }
                    }
                    offset += n
                    return n
                }
                if !chunks.isEmpty {
                    current = chunks.removeFirst()
                    offset = 0
                    condition.broadcast()
                    continue
                }
                if finished {
                    if let failure { throw failure }
                    return 0
                }
                condition.wait()
            }
        }
    }
}

/// A value handed to one thread that alone uses it from then on.
private struct UncheckedBox<T>: @unchecked Sendable {
    let value: T
    init(_ value: T) { self.value = value }
}
