private import CRouteKitZlib
import RouteKit

/// Bytes read in order from something that is neither a file nor memory: an archive's entry inflated as it is read.
package protocol ByteSource: AnyObject {
    /// Reads up to `buffer.count` bytes; 0 at the end.
    func read(into buffer: UnsafeMutableRawBufferPointer) throws(RouteKitError) -> Int
}

/// Bytes held in memory as a ``ByteSource`` (a small archive entry that inflates large).
package final class MemoryByteSource: ByteSource {
    private let bytes: [UInt8]
    private var offset = 0

    /// A source of `bytes`, from the start.
    package init(_ bytes: [UInt8]) { self.bytes = bytes }

    package func read(into buffer: UnsafeMutableRawBufferPointer) throws(RouteKitError) -> Int {
        let n = min(buffer.count, bytes.count - offset)
        guard n > 0, let base = buffer.baseAddress else { return 0 }
        bytes.withUnsafeBytes { b in
            if let from = b.baseAddress { base.copyMemory(from: from + offset, byteCount: n) }
        }
        offset += n
        return n
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
