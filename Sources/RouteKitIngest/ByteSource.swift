private import CRouteKitZlib
import RouteKit

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#elseif canImport(Musl)
    import Musl
#endif

/// Bytes read in order, a buffer at a time: a file (``FileByteSource``), memory (``MemoryByteSource``), a file or
/// source gzip-decompressed as it is read (``StreamingFile``), an archive's entry inflated as it is read. The GPX and
/// FIT readers and Apple Health's `export.xml` scanner read through one, so that none needs its whole input at once.
package protocol ByteSource: AnyObject {
    /// Reads up to `buffer.count` bytes into `buffer`; returns how many, 0 at the end.
    /// - Throws: `RouteKitError.Code.io` when reading fails (a source that decompresses also throws
    ///   `RouteKitError.Code.compression`).
    func read(into buffer: UnsafeMutableRawBufferPointer) throws(RouteKitError) -> Int
}

/// Bytes held in memory as a ``ByteSource`` (a small archive entry that inflates large), handed out at most
/// `readSize` at a time (tests and the Health fuzzer use small reads to put chunk boundaries everywhere).
package final class MemoryByteSource: ByteSource {
    private let bytes: [UInt8]
    private var offset = 0
    private let readSize: Int

    /// A source of `bytes`, from the start, handing out at most `readSize` bytes a read (at least 1).
    package init(_ bytes: [UInt8], readSize: Int = .max) {
        self.bytes = bytes
        self.readSize = max(1, readSize)
    }

    package func read(into buffer: UnsafeMutableRawBufferPointer) throws(RouteKitError) -> Int {
        let n = min(buffer.count, readSize, bytes.count - offset)
        guard n > 0, let base = buffer.baseAddress else { return 0 }
        bytes.withUnsafeBytes { b in
            if let from = b.baseAddress { base.copyMemory(from: from + offset, byteCount: n) }
        }
        offset += n
        return n
    }
}

/// `read(2)`, outside the type whose `read` method would hide it.
private func readFile(_ fd: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int {
    read(fd, buffer, count)
}

/// A file read in order with `read(2)`, from its start or from a given byte, closed when released: the raw input of
/// ``StreamingFile``, and Apple Health's `export.xml` (whose second pass starts part way in).
package final class FileByteSource: ByteSource {
    private let fd: Int32
    private let path: String

    /// Opens `path`, to be read from byte `offset`.
    /// - Throws: `RouteKitError.Code.io` when it cannot be opened, is a folder, or cannot be read from `offset`.
    package init(path: String, offset: Int = 0) throws(RouteKitError) {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            throw RouteKitError(.io, "cannot open the file: \(String(cString: strerror(errno)))", file: path)
        }
        var st = stat()
        if fstat(fd, &st) == 0 && (st.st_mode & S_IFMT) == S_IFDIR {
            close(fd)
            throw RouteKitError(.io, "is a directory, not a file", file: path)
        }
        if offset > 0 && lseek(fd, off_t(offset), SEEK_SET) < 0 {
            let reason = String(cString: strerror(errno))
            close(fd)
            throw RouteKitError(.io, "cannot seek: \(reason)", file: path)
        }
        self.fd = fd
        self.path = path
    }

    deinit { close(fd) }

    package func read(into buffer: UnsafeMutableRawBufferPointer) throws(RouteKitError) -> Int {
        while true {
            let n = readFile(fd, buffer.baseAddress, buffer.count)
            if n >= 0 { return n }
            if errno == EINTR { continue }
            throw RouteKitError(.io, "read failed: \(String(cString: strerror(errno)))", file: path)
        }
    }
}

/// gzip decompression over zlib, streaming.
package final class Inflater {
    private var stream = z_stream()
    private let out: UnsafeMutablePointer<UInt8>
    private let outSize = 256 * 1024
    private let fileName: String
    package private(set) var ended = false
    private var active = true

    package init(fileName: String) throws(RouteKitError) {
        self.fileName = fileName
        self.out = .allocate(capacity: outSize)
        // 16 + 15: gzip wrapper, 32 KiB window.
        let rc = inflateInit2_(&stream, 31, zlibVersion(), Int32(MemoryLayout<z_stream>.size))
        guard rc == Z_OK else {
            out.deallocate()
            active = false
            throw RouteKitError(.compression, "zlib could not start (code \(rc))", file: fileName)
        }
    }

    package func end() {
        if active {
            inflateEnd(&stream)
            out.deallocate()
            active = false
        }
    }

    deinit { end() }

    package func inflate(
        _ input: UnsafeRawBufferPointer,
        _ sink: (UnsafePointer<UInt8>, Int) throws(RouteKitError) -> Void
    ) throws(RouteKitError) {
        guard let base = input.baseAddress, input.count > 0 else { return }
        stream.next_in = UnsafeMutablePointer(mutating: base.assumingMemoryBound(to: UInt8.self))
        stream.avail_in = UInt32(input.count)
        while stream.avail_in > 0 {
            if ended {
                // Zero padding after the last member (tape and block tools add it; gzip ignores it).
                if let next = stream.next_in,
                    UnsafeBufferPointer(start: next, count: Int(stream.avail_in)).allSatisfy({ $0 == 0 })
                {
                    stream.avail_in = 0
                    break
                }
                // Another gzip member follows (concatenated .gz files are valid).
                guard inflateReset(&stream) == Z_OK else {
                    throw RouteKitError(
                        .compression, "zlib could not continue with the next gzip member", file: fileName)
                }
                ended = false
            }
            stream.next_out = out
            stream.avail_out = UInt32(outSize)
            let rc = CRouteKitZlib.inflate(&stream, Z_NO_FLUSH)
            let produced = outSize - Int(stream.avail_out)
            if produced > 0 { try sink(out, produced) }
            if rc == Z_STREAM_END {
                ended = true
            } else if rc != Z_OK && rc != Z_BUF_ERROR {
                let reason = stream.msg.map { String(cString: $0) } ?? "code \(rc)"
                throw RouteKitError(.compression, "the gzip data is corrupt: \(reason)", file: fileName)
            } else if rc == Z_BUF_ERROR && produced == 0 {
                break
            }
        }
    }
}
