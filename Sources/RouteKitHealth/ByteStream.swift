import RouteKit

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#elseif canImport(Musl)
    import Musl
#endif

/// Bytes read in order, a buffer at a time: a file, memory, or (later) an archive's entry being inflated.
/// ``HealthXMLScanner`` reads `export.xml` through one, so it never needs the whole document.
package protocol HealthByteStream: AnyObject {
    /// Reads up to `buffer.count` bytes into `buffer`; returns how many, 0 at the end.
    /// - Throws: `RouteKitError.Code.io` when reading fails.
    func read(into buffer: UnsafeMutableRawBufferPointer) throws(RouteKitError) -> Int
}

/// `read(2)`, outside the types whose `read` method would hide it.
private func readFD(_ fd: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int {
    read(fd, buffer, count)
}

/// A file read with `read(2)`.
package final class FileByteStream: HealthByteStream {
    private let fd: Int32
    private let path: String

    /// Opens `path`, to be read from byte `offset`.
    /// - Throws: `RouteKitError.Code.io` when it cannot be opened or is a folder.
    package init(path: String, offset: Int = 0) throws(RouteKitError) {
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else {
            throw RouteKitError(.io, "cannot open the file: \(String(cString: strerror(errno)))", file: path)
        }
        var st = stat()
        if fstat(fd, &st) == 0 && (st.st_mode & S_IFMT) == S_IFDIR {
            close(fd)
            throw RouteKitError(.io, "is a directory, not a file", file: path)
        }
        if offset > 0 && lseek(fd, off_t(offset), SEEK_SET) < 0 {
            close(fd)
            throw RouteKitError(.io, "cannot seek: \(String(cString: strerror(errno)))", file: path)
        }
        self.fd = fd
        self.path = path
    }

    deinit { close(fd) }

    package func read(into buffer: UnsafeMutableRawBufferPointer) throws(RouteKitError) -> Int {
        while true {
            let n = readFD(fd, buffer.baseAddress, buffer.count)
            if n >= 0 { return n }
            if errno == EINTR { continue }
            throw RouteKitError(.io, "read failed: \(String(cString: strerror(errno)))", file: path)
        }
    }
}

/// Bytes held in memory, handed out at most `readSize` at a time (tests use 1 and 7 to put chunk boundaries
/// everywhere).
package final class MemoryByteStream: HealthByteStream {
    private let bytes: [UInt8]
    private var offset = 0
    private let readSize: Int

    /// A stream over `bytes`.
    package init(_ bytes: [UInt8], readSize: Int = .max) {
        self.bytes = bytes
        self.readSize = max(1, readSize)
    }

    package func read(into buffer: UnsafeMutableRawBufferPointer) throws(RouteKitError) -> Int {
        let n = min(buffer.count, readSize, bytes.count - offset)
        guard n > 0 else { return 0 }
        bytes.withUnsafeBytes { src in
            if let from = src.baseAddress { buffer.baseAddress?.copyMemory(from: from + offset, byteCount: n) }
        }
        offset += n
        return n
    }
}
