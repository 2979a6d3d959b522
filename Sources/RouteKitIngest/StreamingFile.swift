import RouteKit

/// Bytes read a buffer at a time from a raw source, gzip decompressed on the fly when they start with gzip's magic:
/// the reader for formats parsed as a stream (TCX), from a file or an archive's entry, so that memory does not grow
/// with the input or with what it decompresses to. At most `limit` bytes come out; past it, reading fails.
package final class StreamingFile {
    /// The name errors give.
    package let path: String
    private let limit: Int
    private let raw: (UnsafeMutableRawBufferPointer) throws(RouteKitError) -> Int
    private var inflater: Inflater?
    private var sniffed = false
    /// Decompressed bytes waiting to be read.
    private var pending: [UInt8] = []
    private var pendingOffset = 0
    private let chunk: UnsafeMutableRawBufferPointer
    private var rawEnded = false
    /// Bytes handed out so far.
    package private(set) var produced = 0
    /// Whether the input is gzip-compressed (known after the first read).
    package private(set) var isGzip = false

    /// Reads what `raw` gives (0 at its end), named `name` in errors.
    package init(
        name: String, limit: Int = InputFile.defaultLimit,
        raw: @escaping (UnsafeMutableRawBufferPointer) throws(RouteKitError) -> Int
    ) {
        self.path = name
        self.limit = limit
        self.raw = raw
        self.chunk = .allocate(byteCount: 64 << 10, alignment: 1)
    }

    /// Opens the file at `path`.
    /// - Throws: `RouteKitError.Code.io` when it cannot be opened or is a folder.
    package convenience init(path: String, limit: Int = InputFile.defaultLimit) throws(RouteKitError) {
        let file = try FileByteSource(path: path)
        self.init(name: path, limit: limit) { (b: UnsafeMutableRawBufferPointer) throws(RouteKitError) in
            try file.read(into: b)
        }
    }

    deinit { chunk.deallocate() }

    /// Reads the next raw chunk: 64 KiB of plain input, 1 KiB of gzip data (which inflates at most about 1,000
    /// times: what waits in `pending` stays near 1 MiB, whatever the data).
    private func readRaw() throws(RouteKitError) -> Int {
        let want = inflater == nil && sniffed ? chunk.count : 1024
        return try raw(UnsafeMutableRawBufferPointer(rebasing: chunk[0..<want]))
    }

    /// Reads up to `buffer.count` bytes (decompressed); 0 at the end.
    /// - Throws: `RouteKitError.Code.io` when reading fails or more than the limit comes out;
    ///   `RouteKitError.Code.compression` for corrupt or truncated gzip data.
    package func read(into buffer: UnsafeMutableRawBufferPointer) throws(RouteKitError) -> Int {
        guard let out = buffer.baseAddress, buffer.count > 0 else { return 0 }
        while pendingOffset >= pending.count {
            pending.removeAll(keepingCapacity: true)
            pendingOffset = 0
            if rawEnded { return 0 }
            var n = try readRaw()
            if !sniffed {
                // Two bytes tell gzip (a source may hand out one byte at a time).
                while n == 1 {
                    let more = try raw(UnsafeMutableRawBufferPointer(rebasing: chunk[1..<2]))
                    if more == 0 { break }
                    n += more
                }
                sniffed = true
                if n >= 2 && InputFile.isGzip(UnsafeRawBufferPointer(rebasing: chunk[0..<n])) {
                    isGzip = true
                    inflater = try Inflater(fileName: path)
                }
            }
            if n == 0 {
                rawEnded = true
                if let inflater, !inflater.ended {
                    throw RouteKitError(.compression, "the gzip data ends early (truncated file)", file: path)
                }
                return 0
            }
            if let inflater {
                try inflater.inflate(UnsafeRawBufferPointer(rebasing: chunk[0..<n])) {
                    (p: UnsafePointer<UInt8>, count: Int) throws(RouteKitError) in
                    pending.append(contentsOf: UnsafeBufferPointer(start: p, count: count))
                }
            } else {
                pending.append(contentsOf: UnsafeRawBufferPointer(rebasing: chunk[0..<n]))
            }
        }
        let n = min(buffer.count, pending.count - pendingOffset)
        pending.withUnsafeBytes { src in
            if let from = src.baseAddress { out.copyMemory(from: from + pendingOffset, byteCount: n) }
        }
        pendingOffset += n
        produced += n
        if produced > limit {
            throw RouteKitError(
                .io, "the \(isGzip ? "decompressed data" : "file") is larger than \(InputFile.sizeText(limit))",
                file: path)
        }
        return n
    }
}

extension StreamingFile: ByteSource {}
