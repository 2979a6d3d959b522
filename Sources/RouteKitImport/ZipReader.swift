import CRouteKitZlib
import Foundation
import RouteKit
import RouteKitIngest

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#elseif canImport(Musl)
    import Musl
#endif

// A zip reader of our own: the central directory (with zip64) parsed with checked arithmetic, and entries inflated
// by zlib as they are read. ZIPFoundation, which this replaces, trapped on hostile sizes (a zip64 size of 2^63 or
// more in its `Int(...)` conversions, offsets that overflow when added): one upload of 134 bytes stopped the server.
// Here every number read from the archive is range-checked before it is used, and a number out of range is a
// `RouteKitError` naming the archive, the entry and the field.

/// The archive's bytes: a file read with `pread(2)`, or bytes in memory (an archive inside an archive).
final class ZipSource: @unchecked Sendable {
    private enum Storage {
        case file(Int32)
        case memory([UInt8])
    }
    private let storage: Storage
    /// The archive's size in bytes.
    let size: Int
    /// The name errors give.
    let name: String

    init(path: String) throws(RouteKitError) {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            throw RouteKitError(.io, "cannot open the file: \(String(cString: strerror(errno)))", file: path)
        }
        var st = stat()
        guard fstat(fd, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG, let size = Int(exactly: st.st_size) else {
            close(fd)
            throw RouteKitError(.io, "is not a regular file", file: path)
        }
        self.storage = .file(fd)
        self.size = size
        self.name = path
    }

    init(bytes: [UInt8], name: String) {
        self.storage = .memory(bytes)
        self.size = bytes.count
        self.name = name
    }

    deinit {
        if case .file(let fd) = storage { close(fd) }
    }

    /// Reads exactly `buffer.count` bytes from `offset`; the caller has checked that they lie inside the archive.
    func read(at offset: Int, into buffer: UnsafeMutableRawBufferPointer) throws(RouteKitError) {
        guard offset >= 0, buffer.count <= size, offset <= size - buffer.count else {
            throw RouteKitError(.compression, "a read past the end of the archive", file: name, byteOffset: offset)
        }
        switch storage {
        case .memory(let bytes):
            bytes.withUnsafeBytes { src in
                if let from = src.baseAddress, buffer.count > 0 {
                    buffer.baseAddress?.copyMemory(from: from + offset, byteCount: buffer.count)
                }
            }
        case .file(let fd):
            var done = 0
            while done < buffer.count {
                let n = pread(fd, buffer.baseAddress.map { $0 + done }, buffer.count - done, off_t(offset + done))
                if n < 0 && errno == EINTR { continue }
                guard n > 0 else {
                    let why = n < 0 ? String(cString: strerror(errno)) : "the file is shorter than it was"
                    throw RouteKitError(.io, "read failed: \(why)", file: name, byteOffset: offset + done)
                }
                done += n
            }
        }
    }

    /// `count` bytes from `offset`.
    func bytes(at offset: Int, count: Int) throws(RouteKitError) -> [UInt8] {
        var failure: RouteKitError?
        let out = [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            do throws(RouteKitError) {
                try read(at: offset, into: UnsafeMutableRawBufferPointer(buffer))
                initialized = count
            } catch {
                failure = error
                initialized = 0
            }
        }
        if let failure { throw failure }
        return out
    }
}

/// Little-endian fields read from a byte array with bounds checks: past the end gives `nil`, never a trap.
struct ZipFields {
    let bytes: [UInt8]
    var position = 0

    init(_ bytes: [UInt8], at position: Int = 0) {
        self.bytes = bytes
        self.position = position
    }

    var remaining: Int { bytes.count - position }

    mutating func u16() -> UInt16? {
        guard remaining >= 2 else { return nil }
        defer { position += 2 }
        return UInt16(bytes[position]) | UInt16(bytes[position + 1]) << 8
    }

    mutating func u32() -> UInt32? {
        guard remaining >= 4 else { return nil }
        var v: UInt32 = 0
        for k in (0..<4).reversed() { v = v << 8 | UInt32(bytes[position + k]) }
        position += 4
        return v
    }

    mutating func u64() -> UInt64? {
        guard remaining >= 8 else { return nil }
        var v: UInt64 = 0
        for k in (0..<8).reversed() { v = v << 8 | UInt64(bytes[position + k]) }
        position += 8
        return v
    }

    mutating func skip(_ n: Int) -> Bool {
        guard n >= 0, remaining >= n else { return false }
        position += n
        return true
    }

    mutating func take(_ n: Int) -> ArraySlice<UInt8>? {
        guard n >= 0, remaining >= n else { return nil }
        defer { position += n }
        return bytes[position..<(position + n)]
    }
}

/// One entry of the central directory, its numbers checked against the archive's size.
struct ZipEntry: Sendable {
    enum Kind: Sendable { case file, directory, symbolicLink }
    var path: String
    var kind: Kind
    /// 0 stored, 8 deflated; anything else cannot be read.
    var method: UInt16
    var flags: UInt16
    var crc32: UInt32
    var compressedSize: Int
    var uncompressedSize: Int
    var localHeaderOffset: Int

    var isEncrypted: Bool { flags & 1 != 0 }
}

/// The central directory of a zip archive.
enum ZipDirectory {
    static let endSignature: UInt32 = 0x0605_4B50
    static let zip64LocatorSignature: UInt32 = 0x0706_4B50
    static let zip64EndSignature: UInt32 = 0x0606_4B50
    static let entrySignature: UInt32 = 0x0201_4B50
    static let localSignature: UInt32 = 0x0403_4B50
    /// The largest central directory read (it is read whole): far above 10,000 entries with long names.
    static let maxDirectoryBytes = 64 << 20

    /// The archive's entries in directory order.
    /// - Throws: `RouteKitError.Code.compression` for an archive whose structure is not a zip's, or whose numbers lie
    ///   outside it; naming the limit when it lists more than `limits.maxEntries` entries.
    static func read(_ source: ZipSource, limits: ArchiveLimits) throws(RouteKitError) -> [ZipEntry] {
        let name = source.name
        func bad(_ what: String, at offset: Int? = nil) -> RouteKitError {
            RouteKitError(.compression, "not a readable zip archive (\(what))", file: name, byteOffset: offset)
        }
        guard source.size >= 22 else { throw bad("it is shorter than an end record") }
        // The end record: 22 bytes and a comment of at most 65,535.
        let tailCount = min(source.size, 22 + 0xFFFF)
        let tailStart = source.size - tailCount
        let tail = try source.bytes(at: tailStart, count: tailCount)
        var endAt: Int?
        var i = tail.count - 22
        while i >= 0 {
            if tail[i] == 0x50 && tail[i + 1] == 0x4B && tail[i + 2] == 0x05 && tail[i + 3] == 0x06 {
                endAt = i
                break
            }
            i -= 1
        }
        guard let endIndex = endAt else { throw bad("no end of central directory record") }
        var end = ZipFields(tail, at: endIndex + 4)
        guard let disk = end.u16(), let directoryDisk = end.u16(), let entriesOnDisk = end.u16(),
            let totalEntries16 = end.u16(), let directorySize32 = end.u32(), let directoryOffset32 = end.u32()
        else { throw bad("a truncated end record", at: tailStart + endIndex) }
        var totalEntries = UInt64(totalEntries16)
        var directorySize = UInt64(directorySize32)
        var directoryOffset = UInt64(directoryOffset32)
        var disks = (UInt32(disk), UInt32(directoryDisk))
        _ = entriesOnDisk
        // Zip64: a locator just before the end record points at the zip64 end record.
        let endOffset = tailStart + endIndex
        if endOffset >= 20 {
            let locator = try source.bytes(at: endOffset - 20, count: 20)
            var l = ZipFields(locator)
            if l.u32() == zip64LocatorSignature, let _ = l.u32(), let recordOffset64 = l.u64() {
                guard let recordOffset = Int(exactly: recordOffset64), recordOffset <= source.size - 56 else {
                    throw bad("the zip64 end record's offset \(recordOffset64) lies outside the archive")
                }
                var r = ZipFields(try source.bytes(at: recordOffset, count: 56))
                guard r.u32() == zip64EndSignature, r.skip(8 + 2 + 2), let d = r.u32(), let dd = r.u32(),
                    r.skip(8), let total = r.u64(), let size = r.u64(), let offset = r.u64()
                else { throw bad("a damaged zip64 end record", at: recordOffset) }
                disks = (d, dd)
                totalEntries = total
                directorySize = size
                directoryOffset = offset
            }
        }
        guard disks.0 == 0 && disks.1 == 0 else { throw bad("it spans several disks") }
        guard totalEntries <= UInt64(limits.maxEntries) else {
            throw RouteKitError(
                .compression,
                "the archive lists \(totalEntries) entries, more than the limit of \(limits.maxEntries)",
                file: name)
        }
        guard let dirSize = Int(exactly: directorySize), let dirOffset = Int(exactly: directoryOffset),
            dirSize <= source.size, dirOffset <= source.size - dirSize
        else {
            throw bad("its central directory (\(directorySize) bytes at \(directoryOffset)) lies outside the archive")
        }
        guard dirSize <= maxDirectoryBytes else {
            throw RouteKitError(
                .compression, "the central directory is larger than \(maxDirectoryBytes >> 20) MiB", file: name)
        }
        var f = ZipFields(try source.bytes(at: dirOffset, count: dirSize))
        var entries: [ZipEntry] = []
        entries.reserveCapacity(Int(totalEntries))
        for index in 0..<Int(totalEntries) {
            let at = dirOffset + f.position
            guard f.u32() == entrySignature, let madeBy = f.u16(), f.skip(2), let flags = f.u16(),
                let method = f.u16(), f.skip(4), let crc = f.u32(), let compressed32 = f.u32(),
                let uncompressed32 = f.u32(), let nameLength = f.u16(), let extraLength = f.u16(),
                let commentLength = f.u16(), f.skip(2 + 2), let external = f.u32(), let offset32 = f.u32(),
                let nameBytes = f.take(Int(nameLength)), let extra = f.take(Int(extraLength)),
                f.skip(Int(commentLength))
            else { throw bad("central directory entry \(index) is damaged", at: at) }
            var compressed = UInt64(compressed32)
            var uncompressed = UInt64(uncompressed32)
            var offset = UInt64(offset32)
            // The zip64 extra field holds, in this order, those of the three that are 0xFFFFFFFF above.
            var e = ZipFields(Array(extra))
            while e.remaining >= 4, let id = e.u16(), let length = e.u16() {
                guard let body = e.take(Int(length)) else { break }
                guard id == 0x0001 else { continue }
                var z = ZipFields(Array(body))
                if uncompressed32 == 0xFFFF_FFFF { uncompressed = z.u64() ?? uncompressed }
                if compressed32 == 0xFFFF_FFFF { compressed = z.u64() ?? compressed }
                if offset32 == 0xFFFF_FFFF { offset = z.u64() ?? offset }
            }
            let path = decodeName(nameBytes, utf8: flags & 0x800 != 0)
            func field(_ value: UInt64, _ what: String) throws(RouteKitError) -> Int {
                guard let v = Int(exactly: value), v <= 1 << 51 else {
                    throw RouteKitError(
                        .compression, "the entry's \(what) (\(value)) is out of range", file: "\(name)!\(path)")
                }
                return v
            }
            let entry = ZipEntry(
                path: path, kind: kind(path: path, madeBy: madeBy, external: external), method: method,
                flags: flags, crc32: crc, compressedSize: try field(compressed, "compressed size"),
                uncompressedSize: try field(uncompressed, "uncompressed size"),
                localHeaderOffset: try field(offset, "local header offset"))
            guard entry.localHeaderOffset <= source.size - 30,
                entry.compressedSize <= source.size - 30
            else {
                throw RouteKitError(
                    .compression,
                    "the entry's data (\(compressed) bytes at \(offset)) lies outside the archive (\(source.size) bytes)",
                    file: "\(name)!\(path)")
            }
            entries.append(entry)
        }
        return entries
    }

    private static func kind(path: String, madeBy: UInt16, external: UInt32) -> ZipEntry.Kind {
        if path.hasSuffix("/") { return .directory }
        // Unix-made entries keep the file mode in the high half of the external attributes.
        if madeBy >> 8 == 3 {
            let mode = external >> 16 & 0o170000
            if mode == 0o120000 { return .symbolicLink }
            if mode == 0o040000 { return .directory }
        }
        if madeBy >> 8 == 0 && external & 0x10 != 0 { return .directory }
        return .file
    }

    /// A name as UTF-8 when it says so or is valid UTF-8, else as code page 437's printable ASCII with other bytes
    /// as U+FFFD (names RouteKit looks for are ASCII).
    private static func decodeName(_ bytes: ArraySlice<UInt8>, utf8: Bool) -> String {
        if let s = String(validating: bytes, as: UTF8.self) { return s }
        if utf8 { return String(decoding: bytes, as: UTF8.self) }
        return String(decoding: bytes.map { $0 < 0x80 ? $0 : 0x3F }, as: UTF8.self)
    }
}

/// How much of an archive's limits its entries have used so far, shared by every entry read from it.
final class ZipBudget: @unchecked Sendable {
    private let used = Locked(0)
    let limits: ArchiveLimits
    init(limits: ArchiveLimits) { self.limits = limits }

    /// Counts `n` more bytes; `false` once the archive's total would pass ``ArchiveLimits/maxTotalBytes``.
    func take(_ n: Int) -> Bool {
        used.withLock { used in
            guard n <= limits.maxTotalBytes - used else { return false }
            used += n
            return true
        }
    }
}

/// One entry read as a stream: its compressed bytes read 64 KiB at a time and inflated by zlib, so memory stays the
/// same whatever the entry's size. The archive's limits apply as it is read; at its end the size and CRC-32 are
/// checked against the directory's.
final class ZipEntryReader: ByteSource {
    private let source: ZipSource
    private let entry: ZipEntry
    private let budget: ZipBudget
    let label: String
    private var compressedOffset = 0
    private let dataStart: Int
    private var produced = 0
    private var crc: UInt = 0
    private var stream = z_stream()
    private var inflating = false
    private var streamEnded = false
    private var finished = false
    private let input: UnsafeMutablePointer<UInt8>
    private static let inputSize = 64 << 10

    init(source: ZipSource, entry: ZipEntry, budget: ZipBudget) throws(RouteKitError) {
        self.source = source
        self.entry = entry
        self.budget = budget
        let label = "\(source.name)!\(entry.path)"
        self.label = label
        guard !entry.isEncrypted else {
            throw RouteKitError(
                .compression, "the entry is encrypted; encrypted archives are not supported", file: label)
        }
        guard entry.method == 0 || entry.method == 8 else {
            throw RouteKitError(
                .compression,
                "the entry's compression method \(entry.method) is not supported (only stored and deflate)",
                file: label)
        }
        var header = ZipFields(try source.bytes(at: entry.localHeaderOffset, count: 30))
        guard header.u32() == ZipDirectory.localSignature, header.skip(22), let nameLength = header.u16(),
            let extraLength = header.u16()
        else {
            throw RouteKitError(
                .compression, "the entry's local header is damaged", file: label, byteOffset: entry.localHeaderOffset)
        }
        // Each term is at most 2^31 × 2^20 or 2^16, so the sum cannot overflow; it must leave room for the data.
        let start = entry.localHeaderOffset + 30 + Int(nameLength) + Int(extraLength)
        guard start <= source.size, entry.compressedSize <= source.size - start else {
            throw RouteKitError(.compression, "the entry's data runs past the end of the archive", file: label)
        }
        self.dataStart = start
        self.input = .allocate(capacity: Self.inputSize)
        if entry.method == 8 {
            // -15: raw deflate, 32 KiB window.
            let rc = inflateInit2_(&stream, -15, zlibVersion(), Int32(MemoryLayout<z_stream>.size))
            guard rc == Z_OK else {
                input.deallocate()
                throw RouteKitError(.compression, "zlib could not start (code \(rc))", file: label)
            }
            inflating = true
        }
    }

    deinit {
        if inflating { inflateEnd(&stream) }
        input.deallocate()
    }

    /// Reads up to `buffer.count` inflated bytes; 0 at the entry's end (after its size and CRC-32 were checked).
    /// - Throws: `RouteKitError.Code.compression` for corrupt data or an entry past the archive's limits.
    func read(into buffer: UnsafeMutableRawBufferPointer) throws(RouteKitError) -> Int {
        guard let out = buffer.baseAddress, buffer.count > 0, !finished else { return 0 }
        var n = 0
        if entry.method == 0 {
            let left = entry.compressedSize - compressedOffset
            n = min(buffer.count, left)
            if n > 0 {
                try source.read(
                    at: dataStart + compressedOffset, into: UnsafeMutableRawBufferPointer(start: out, count: n))
                compressedOffset += n
            }
        } else {
            guard !streamEnded else {
                try finish()
                return 0
            }
            let want = UInt32(clamping: buffer.count)
            stream.next_out = out.assumingMemoryBound(to: UInt8.self)
            stream.avail_out = want
            while stream.avail_out == want {
                if stream.avail_in == 0 {
                    let left = entry.compressedSize - compressedOffset
                    let count = min(Self.inputSize, left)
                    if count > 0 {
                        try source.read(
                            at: dataStart + compressedOffset,
                            into: UnsafeMutableRawBufferPointer(start: input, count: count))
                        compressedOffset += count
                    }
                    stream.next_in = input
                    stream.avail_in = UInt32(count)
                }
                let before = stream.avail_in
                let rc = CRouteKitZlib.inflate(&stream, Z_NO_FLUSH)
                if rc == Z_STREAM_END {
                    streamEnded = true
                    break
                }
                guard rc == Z_OK || rc == Z_BUF_ERROR else {
                    throw RouteKitError(
                        .compression, "the entry's deflate data is corrupt (zlib code \(rc))", file: label)
                }
                if stream.avail_out == want && before == 0 && stream.avail_in == 0 {
                    throw RouteKitError(.compression, "the entry's deflate data ends early", file: label)
                }
            }
            n = Int(want - stream.avail_out)
        }
        if n == 0 {
            try finish()
            return 0
        }
        try count(n, at: out)
        return n
    }

    /// The whole entry, at most ``ArchiveLimits/maxEntryBytes`` of it (the limits are checked as it is read).
    func readAll() throws(RouteKitError) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(min(entry.uncompressedSize, 64 << 20))
        let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: 256 << 10, alignment: 1)
        defer { chunk.deallocate() }
        while true {
            let n = try read(into: chunk)
            if n == 0 { return out }
            out.append(contentsOf: UnsafeRawBufferPointer(rebasing: chunk[0..<n]))
        }
    }

    private func count(_ n: Int, at p: UnsafeMutableRawPointer) throws(RouteKitError) {
        produced += n
        let limits = budget.limits
        if produced > limits.maxEntryBytes {
            throw RouteKitError(
                .compression, "the entry is larger than \(InputFile.sizeText(limits.maxEntryBytes)) decompressed",
                file: label)
        }
        if produced > entry.uncompressedSize {
            throw RouteKitError(
                .compression, "the entry holds more than the \(entry.uncompressedSize) bytes its header states",
                file: label)
        }
        if produced > 1 << 20 && Double(produced) / Double(max(1, entry.compressedSize)) > limits.maxRatio {
            throw RouteKitError(
                .compression, "the entry decompresses more than \(Int(limits.maxRatio))× (a zip bomb?); refused",
                file: label)
        }
        guard budget.take(n) else {
            throw RouteKitError(
                .compression,
                "the archive's entries together are larger than \(InputFile.sizeText(limits.maxTotalBytes)) decompressed",
                file: label)
        }
        crc = CRouteKitZlib.crc32(crc, p.assumingMemoryBound(to: UInt8.self), UInt32(n))
    }

    private func finish() throws(RouteKitError) {
        finished = true
        guard produced == entry.uncompressedSize else {
            throw RouteKitError(
                .compression,
                "the entry holds \(produced) bytes, not the \(entry.uncompressedSize) its header states",
                file: label)
        }
        guard UInt32(truncatingIfNeeded: crc) == entry.crc32 else {
            throw RouteKitError(
                .compression, "the entry's data does not match its CRC-32 (a corrupt archive)", file: label)
        }
    }
}
