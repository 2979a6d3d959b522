public import RouteKit
public import RouteKitIngest

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#elseif canImport(Musl)
    import Musl
#endif

/// A streaming GPX reader: call ``next()`` until it returns `nil`.
///
/// Memory stays bounded by the chunk size, one batch of points and the largest single XML token, whatever
/// the file size. gzip-compressed input (`.gpx` or `.gpx.gz`) is detected by its magic bytes and
/// decompressed on the fly (with a `gzip` warning).
///
/// ```swift
/// let reader = try GPXReader(path: "ride.gpx")
/// while let event = try reader.next() {
///     if case .trackPoints(let batch) = event { /* feed a route builder */ }
/// }
/// ```
///
/// A reader is used by one task at a time (it is not `Sendable`). Errors name the file, line and column.
public final class GPXReader {
    private var core: GPXStreamParser
    private var input: Input
    private var eventIndex = 0
    private var finished = false
    private var inflater: Inflater?
    private var sniffed = false
    /// Whether reading from memory counts toward ``bytesRead`` (not when the memory is a gzip input decompressed
    /// whole: ``bytesRead`` counts compressed bytes, all read by then).
    private var countsReads = true
    /// Whether a gzip input was decompressed in one call (``wholeGzip(head:)``) rather than streamed.
    private(set) var decompressedWhole = false
    private var scratch: UnsafeMutablePointer<UInt8>
    private let chunkSize: Int

    private enum Input {
        case file(Int32)
        case bytes([UInt8], offset: Int)
        case source(any ByteSource)
    }

    /// The name used in errors (the path as given).
    package let fileName: String

    /// Opens a GPX file.
    /// - Throws: `RouteKitError.Code.io` if it cannot be opened.
    public init(path: String, options: GPXReadOptions = GPXReadOptions()) throws(RouteKitError) {
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else {
            throw RouteKitError(.io, "cannot open the file: \(String(cString: strerror(errno)))", file: path)
        }
        var st = stat()
        if fstat(fd, &st) == 0 && (st.st_mode & S_IFMT) == S_IFDIR {
            close(fd)
            throw RouteKitError(.io, "is a directory, not a GPX file", file: path)
        }
        let options = Self.clamped(options)
        self.fileName = path
        self.input = .file(fd)
        self.chunkSize = options.chunkSize
        self.core = GPXStreamParser(options: options, fileName: path)
        // At least 2 bytes: sniffing gathers the gzip magic even with 1-byte chunks.
        self.scratch = .allocate(capacity: max(self.chunkSize, 2))
    }

    /// Reads GPX from memory, handing the parser `chunkSize` bytes at a time (tests use 1 and 7).
    public init(
        bytes: [UInt8], name: String = "<memory>", chunkSize: Int? = nil, options: GPXReadOptions = GPXReadOptions()
    ) {
        var options = options
        if let chunkSize { options.chunkSize = chunkSize }
        options = Self.clamped(options)
        self.fileName = name
        self.input = .bytes(bytes, offset: 0)
        self.chunkSize = options.chunkSize
        self.core = GPXStreamParser(options: options, fileName: name)
        self.scratch = .allocate(capacity: max(self.chunkSize, 2))
    }

    /// Reads GPX from `source` a chunk at a time (an archive's entry inflated as it is read): memory stays the
    /// reader's window whatever the entry's size. gzip data is decompressed as it streams.
    package init(source: any ByteSource, name: String, options: GPXReadOptions = GPXReadOptions()) {
        let options = Self.clamped(options)
        self.fileName = name
        self.input = .source(source)
        self.chunkSize = options.chunkSize
        self.core = GPXStreamParser(options: options, fileName: name)
        self.scratch = .allocate(capacity: max(self.chunkSize, 2))
    }

    /// `options` with the chunk size in 1 byte...64 MiB and the batch size in 1...2^20.
    private static func clamped(_ options: GPXReadOptions) -> GPXReadOptions {
        var options = options
        options.chunkSize = min(max(options.chunkSize, 1), 64 << 20)
        options.batchSize = min(max(options.batchSize, 1), 1 << 20)
        return options
    }

    deinit {
        scratch.deallocate()
        if case .file(let fd) = input { close(fd) }
        inflater?.end()
    }

    /// The next event, or `nil` at the end of the document.
    /// - Throws: a `RouteKitError` naming file, line and column; after an error the reader is spent.
    public func next() throws(RouteKitError) -> GPXEvent? {
        while true {
            if eventIndex < core.events.count {
                let event = core.events[eventIndex]
                eventIndex += 1
                return event
            }
            if eventIndex > 0 {
                core.events.removeAll(keepingCapacity: true)
                eventIndex = 0
            }
            if finished { return nil }
            do {
                try step()
            } catch {
                finished = true
                core.events.removeAll()
                throw error
            }
        }
    }

    /// Reads one chunk (or finishes) and parses it.
    private func step() throws(RouteKitError) {
        if !sniffed {
            try sniff()
            return
        }
        if let inflater {
            let n = try readRaw(into: scratch, capacity: chunkSize)
            if n == 0 {
                guard inflater.ended else {
                    try core.parse(final: false, force: true)
                    throw RouteKitError(.compression, "the gzip data ends early (truncated file)", file: fileName)
                }
                try core.parse(final: true)
                finished = true
                return
            }
            do {
                try inflater.inflate(UnsafeRawBufferPointer(start: scratch, count: n)) {
                    (p: UnsafePointer<UInt8>, count: Int) throws(RouteKitError) in
                    core.input.append(p, count)
                    try core.parse(final: false)
                    try core.checkTokenLimit()
                }
            } catch  where error.code == .compression {
                // Errors in stream order: what decompressed before the corruption is parsed first.
                try core.parse(final: false, force: true)
                throw error
            }
            return
        }
        // Plain input: read straight into the parser's buffer unless bytes must be transcoded.
        let n: Int
        if core.input.isTranscoding {
            n = try readRaw(into: scratch, capacity: chunkSize)
            if n > 0 { core.input.append(scratch, n) }
        } else {
            core.input.compact()
            core.input.bytes.reserve(chunkSize)
            n = try readRaw(into: core.input.bytes.base + core.input.bytes.count, capacity: chunkSize)
            core.input.bytes.count += n
        }
        if n == 0 {
            try core.parse(final: true)
            finished = true
        } else {
            try core.parse(final: false)
            try core.checkTokenLimit()
        }
    }

    /// Looks at the first bytes: gzip or not.
    private func sniff() throws(RouteKitError) {
        sniffed = true
        var n = 0
        // Gather at least two bytes (1-byte chunks in tests).
        let capacity = max(chunkSize, 2)
        while n < 2 {
            let k = try readRaw(into: scratch + n, capacity: capacity - n)
            if k == 0 { break }
            n += k
        }
        if n >= 2 && scratch[0] == 0x1F && scratch[1] == 0x8B {
            let warning = GPXWarning(
                kind: "gzip", message: "the file is gzip-compressed; it was decompressed while reading")
            if let whole = wholeGzip(head: n) {
                // Read from memory from here on, as plain input is.
                core.events.append(.warning(warning))
                input = .bytes(whole, offset: 0)
                countsReads = false
                decompressedWhole = true
                return
            }
            inflater = try Inflater(fileName: fileName)
            core.events.append(.warning(warning))
            do {
                try inflater?.inflate(UnsafeRawBufferPointer(start: scratch, count: n)) {
                    (p: UnsafePointer<UInt8>, count: Int) throws(RouteKitError) in
                    core.input.append(p, count)
                    try core.parse(final: false)
                }
            } catch  where error.code == .compression {
                try core.parse(final: false, force: true)
                throw error
            }
        } else if n == 0 {
            try core.parse(final: true)
            finished = true
        } else {
            core.input.append(scratch, n)
            try core.parse(final: false)
        }
    }

    /// The largest gzip input decompressed whole (compressed, and as its trailer announces it decompressed).
    static let wholeGzipLimit = 64 << 20

    /// The whole gzip input decompressed in one call (`InputFile.wholeMember`, libdeflate, instead of zlib's
    /// streaming inflate) when it is one member of at most ``wholeGzipLimit`` bytes either way, held in memory or
    /// a regular file; `n` bytes of it are in `scratch`. `nil` otherwise, with nothing moved: the file's offset is
    /// where it was (the rest is read with `pread`), and the streaming path reads on as before, errors and all.
    private func wholeGzip(head n: Int) -> [UInt8]? {
        switch input {
        case .source:
            return nil
        case .bytes(let bytes, _):
            guard bytes.count <= Self.wholeGzipLimit,
                let whole = InputFile.wholeMember(bytes, limit: Self.wholeGzipLimit)
            else { return nil }
            bytesRead = bytes.count
            return whole
        case .file(let fd):
            var st = stat()
            guard fstat(fd, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG, st.st_size >= 18,
                st.st_size <= Self.wholeGzipLimit
            else { return nil }
            let size = Int(st.st_size)
            // The trailer's size first: a file that decompresses past the limit is streamed without reading it twice.
            var trailer: [UInt8] = [0, 0, 0, 0]
            guard pread(fd, &trailer, 4, off_t(size - 4)) == 4 else { return nil }
            let announced = InputFile.littleEndian32(trailer)
            guard announced > 0, announced <= Self.wholeGzipLimit else { return nil }
            var complete = false
            let compressed = [UInt8](unsafeUninitializedCapacity: size) { buffer, initialized in
                guard let base = buffer.baseAddress else { return }
                base.update(from: scratch, count: min(n, size))
                var offset = min(n, size)
                while offset < size {
                    let k = pread(fd, base + offset, size - offset, off_t(offset))
                    if k < 0 && errno == EINTR { continue }
                    if k <= 0 { break }
                    offset += k
                }
                initialized = offset
                complete = offset == size
            }
            guard complete, let whole = InputFile.wholeMember(compressed, limit: Self.wholeGzipLimit) else {
                return nil
            }
            close(fd)
            bytesRead = size
            return whole
        }
    }

    /// Bytes of the input read so far (compressed bytes for gzip input): what a progress bar shows.
    public private(set) var bytesRead = 0

    private func readRaw(into p: UnsafeMutablePointer<UInt8>, capacity: Int) throws(RouteKitError) -> Int {
        switch input {
        case .file(let fd):
            while true {
                let n = read(fd, p, capacity)
                if n >= 0 {
                    bytesRead += n
                    return n
                }
                if errno == EINTR { continue }
                throw RouteKitError(.io, "read failed: \(String(cString: strerror(errno)))", file: fileName)
            }
        case .source(let source):
            let n = try source.read(into: UnsafeMutableRawBufferPointer(start: p, count: capacity))
            bytesRead += n
            return n
        case .bytes(let bytes, let offset):
            let n = min(capacity, chunkSize, bytes.count - offset)
            if n <= 0 { return 0 }
            bytes.withUnsafeBufferPointer { b in
                if let base = b.baseAddress { p.update(from: base + offset, count: n) }
            }
            input = .bytes(bytes, offset: offset + n)
            if countsReads { bytesRead += n }
            return n
        }
    }
}

@available(*, unavailable)
extension GPXReader: Sendable {}
