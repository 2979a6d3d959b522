private import CLibdeflate
private import CRouteKitZlib
import RouteKit

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#elseif canImport(Musl)
    import Musl
#endif

/// Reading an input file whole (formats that are read twice, such as FIT), gzip decompressed, and telling
/// formats apart by content rather than by name.
package enum InputFile {
    /// A format RouteKit reads.
    package enum Format: String, Sendable, Hashable {
        /// GPX (or anything else that starts like XML; the GPX reader names what is wrong with it).
        case gpx
        /// Garmin FIT.
        case fit
        /// Garmin TCX (Training Center Database): XML whose root element is `TrainingCenterDatabase`.
        case tcx
        /// An Apple Health `export.xml`: root element `HealthData`, or a document type declaration naming it (its
        /// inline DTD is longer than ``headSize``). Imported by RouteKitHealth's `HealthImporter`.
        case healthExport
        /// GeoJSON (or any other JSON object: the GeoJSON reader names what is wrong with it): the first byte after a
        /// byte order mark and whitespace is `{`. Read by RouteKitGeoJSON.
        case geojson
    }

    /// The largest input read whole, after decompression (a gzip bomb stops here).
    package static let defaultLimit = 512 << 20

    /// The format of the file at `path`, from its first bytes (decompressed when it is gzip).
    /// - Throws: `RouteKitError.Code.io` when it cannot be read, `RouteKitError.Code.compression` for
    ///   corrupt gzip.
    package static func format(of path: String) throws(RouteKitError) -> Format {
        let head = try contents(of: path, limit: headSize, stopAtLimit: true).bytes
        // Too short to tell by content: the name decides (an empty .fit gets a FIT error, not a GPX one).
        let lower = path.lowercased()
        if head.count < 12 && (lower.hasSuffix(".fit") || lower.hasSuffix(".fit.gz")) { return .fit }
        return format(ofHead: head)
    }

    /// How much of a file ``format(of:)`` reads to tell its format.
    package static let headSize = 4096

    /// The format of a file that starts with `head` (decompressed; ``headSize`` bytes are enough).
    package static func format(ofHead head: [UInt8]) -> Format {
        if head.count >= 12, head[0] >= 12, head[8] == 0x2E, head[9] == 0x46, head[10] == 0x49, head[11] == 0x54 {
            return .fit
        }
        if startsWithJSONObject(head) { return .geojson }
        let root = rootElement(head)
        if root == Array("TrainingCenterDatabase".utf8) { return .tcx }
        if root == Array("HealthData".utf8) || startsWithHealthDoctype(head) { return .healthExport }
        return .gpx
    }

    /// The formats RouteKit reads, by name, for messages about a file that is none of them (`not a route file: looks
    /// like a PDF document; RouteKit reads GPX, FIT, …`): what `routekit import` and an upload take.
    package static let readableFormats =
        "RouteKit reads GPX, FIT, TCX and GeoJSON files (plain or gzip-compressed), zip archives of them, "
        + "and Strava and Apple Health exports"

    /// What a file that starts with `head` is, when it is none of the formats RouteKit reads and its first bytes say
    /// so (`a PDF document`, `a PNG image`, `a zip archive`…); `nil` otherwise, and then the reader of the format it
    /// was taken for names what is wrong. Messages say `not a route file: looks like …` with it, and
    /// ``readableFormats``.
    package static func lookalike(ofHead head: [UInt8]) -> String? {
        func starts(_ magic: [UInt8], at offset: Int = 0) -> Bool {
            head.count >= offset + magic.count && head[offset..<(offset + magic.count)].elementsEqual(magic)
        }
        if starts(Array("%PDF-".utf8)) { return "a PDF document" }
        if starts([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return "a PNG image" }
        if starts([0xFF, 0xD8, 0xFF]) { return "a JPEG image" }
        if starts(Array("GIF87a".utf8)) || starts(Array("GIF89a".utf8)) { return "a GIF image" }
        if starts(Array("RIFF".utf8)) && starts(Array("WEBP".utf8), at: 8) { return "a WebP image" }
        if starts(Array("ftyp".utf8), at: 4) { return "a video or a HEIC picture" }
        if starts([0x50, 0x4B, 0x03, 0x04]) || starts([0x50, 0x4B, 0x05, 0x06]) {
            return "a zip archive (routekit import reads the route files in one)"
        }
        if starts([0xD0, 0xCF, 0x11, 0xE0, 0xA1, 0xB1, 0x1A, 0xE1]) { return "a Microsoft Office document" }
        if starts([0x7F, 0x45, 0x4C, 0x46]) { return "a program (ELF)" }
        return nil
    }

    /// Whether `head`'s first byte after a UTF-8 byte order mark and JSON whitespace is `{`: a JSON object, which no
    /// XML or FIT file starts with.
    static func startsWithJSONObject(_ head: [UInt8]) -> Bool {
        var i = 0
        if head.count >= 3 && head[0] == 0xEF && head[1] == 0xBB && head[2] == 0xBF { i = 3 }
        while i < head.count, head[i] == 0x20 || head[i] == 0x09 || head[i] == 0x0A || head[i] == 0x0D { i += 1 }
        return i < head.count && head[i] == UInt8(ascii: "{")
    }

    /// Whether `head` has `<!DOCTYPE HealthData` before any element (Apple Health's export.xml).
    static func startsWithHealthDoctype(_ head: [UInt8]) -> Bool {
        let marker = Array("<!DOCTYPE HealthData".utf8)
        guard head.count >= marker.count, let lt = head.firstIndex(of: UInt8(ascii: "<")) else { return false }
        var i = lt
        while i + marker.count <= head.count {
            if head[i] == UInt8(ascii: "<") {
                if head[i..<(i + marker.count)].elementsEqual(marker) { return true }
                // An element before the doctype: not a Health export header.
                if i + 1 < head.count, head[i + 1] != UInt8(ascii: "?"), head[i + 1] != UInt8(ascii: "!") {
                    return false
                }
            }
            i += 1
        }
        return false
    }

    /// The local name of the first element of XML that starts with `head`, after a byte order mark, whitespace
    /// (which Strava writes before `<?xml`), the declaration, comments and a doctype; `nil` if `head` ends first.
    static func rootElement(_ head: [UInt8]) -> [UInt8]? {
        var i = 0
        if head.count >= 3 && head[0] == 0xEF && head[1] == 0xBB && head[2] == 0xBF { i = 3 }
        func starts(_ s: String, at j: Int) -> Bool {
            let b = Array(s.utf8)
            return j + b.count <= head.count && Array(head[j..<(j + b.count)]) == b
        }
        func skip(past s: String) -> Bool {
            var j = i
            while j < head.count {
                if starts(s, at: j) {
                    i = j + s.utf8.count
                    return true
                }
                j += 1
            }
            return false
        }
        while i < head.count {
            switch head[i] {
            case 0x20, 0x09, 0x0A, 0x0D: i += 1
            case UInt8(ascii: "<"):
                if starts("<?", at: i) {
                    guard skip(past: "?>") else { return nil }
                } else if starts("<!--", at: i) {
                    guard skip(past: "-->") else { return nil }
                } else if starts("<!", at: i) {
                    guard skip(past: ">") else { return nil }
                } else {
                    var name: [UInt8] = []
                    var j = i + 1
                    while j < head.count,
                        ![0x20, 0x09, 0x0A, 0x0D, UInt8(ascii: ">"), UInt8(ascii: "/")].contains(head[j])
                    {
                        name.append(head[j])
                        j += 1
                    }
                    guard j < head.count else { return nil }
                    if let colon = name.lastIndex(of: UInt8(ascii: ":")) { name = Array(name[(colon + 1)...]) }
                    return name
                }
            default: return nil
            }
        }
        return nil
    }

    /// The file's bytes, decompressed when it is gzip (with `gzip` true).
    /// - Parameters:
    ///   - path: the file.
    ///   - limit: the most bytes returned; past it the read fails with `RouteKitError.Code.io` (or stops, with
    ///     `stopAtLimit`).
    ///   - stopAtLimit: return the first `limit` bytes instead of failing.
    /// - Throws: `RouteKitError.Code.io` when the file cannot be read or is larger than `limit`,
    ///   `RouteKitError.Code.compression` for corrupt or truncated gzip.
    package static func contents(of path: String, limit: Int = defaultLimit, stopAtLimit: Bool = false)
        throws(RouteKitError) -> (bytes: [UInt8], gzip: Bool)
    {
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else {
            throw RouteKitError(.io, "cannot open the file: \(String(cString: strerror(errno)))", file: path)
        }
        defer { close(fd) }
        var st = stat()
        if fstat(fd, &st) == 0 && (st.st_mode & S_IFMT) == S_IFDIR {
            throw RouteKitError(.io, "is a directory, not a file", file: path)
        }
        // A head (format detection) needs a few KiB: reading 256 KiB for it cost a folder import more than parsing
        // some of its files.
        let chunk = stopAtLimit ? min(256 * 1024, max(limit, 16 * 1024)) : 256 * 1024
        let raw = UnsafeMutableRawBufferPointer.allocate(byteCount: chunk, alignment: 1)
        defer { raw.deallocate() }
        var out: [UInt8] = []
        if (st.st_mode & S_IFMT) == S_IFREG && st.st_size > 0 {
            // Read into place, without growing (and copying) the array on the way.
            out.reserveCapacity(min(Int(st.st_size), limit))
        }
        var inflater: Inflater?
        var first = true
        var full = false
        func tooLarge() -> RouteKitError {
            RouteKitError(
                .io, "the \(inflater == nil ? "file" : "decompressed data") is larger than \(sizeText(limit))",
                file: path)
        }
        while !full {
            let n = read(fd, raw.baseAddress, chunk)
            if n < 0 {
                if errno == EINTR { continue }
                throw RouteKitError(.io, "read failed: \(String(cString: strerror(errno)))", file: path)
            }
            if n == 0 { break }
            let bytes = UnsafeRawBufferPointer(rebasing: raw[0..<n])
            if first {
                first = false
                if Self.isGzip(bytes) { inflater = try Inflater(fileName: path) }
            }
            if let inflater {
                try inflater.inflate(bytes) { (p: UnsafePointer<UInt8>, count: Int) throws(RouteKitError) in
                    if out.count + count > limit {
                        if !stopAtLimit { throw tooLarge() }
                        out.append(contentsOf: UnsafeBufferPointer(start: p, count: limit - out.count))
                        full = true
                        return
                    }
                    out.append(contentsOf: UnsafeBufferPointer(start: p, count: count))
                }
            } else {
                if out.count + n > limit {
                    if !stopAtLimit { throw tooLarge() }
                    out.append(contentsOf: bytes[0..<(limit - out.count)])
                    break
                }
                out.append(contentsOf: bytes)
            }
        }
        if let inflater, !inflater.ended, !full {
            throw RouteKitError(.compression, "the gzip data ends early (truncated file)", file: path)
        }
        return (out, inflater != nil)
    }

    /// Whether `bytes` start with gzip's magic number.
    package static func isGzip(_ bytes: some Collection<UInt8>) -> Bool {
        var i = bytes.makeIterator()
        return i.next() == 0x1F && i.next() == 0x8B
    }

    /// Decompresses gzip held in memory (an archive's `.gz` entry).
    /// - Throws: `RouteKitError.Code.compression` for corrupt or truncated data or more than `limit` bytes out.
    package static func gunzip(_ bytes: [UInt8], name: String, limit: Int = defaultLimit) throws(RouteKitError)
        -> [UInt8]
    {
        try inflate(bytes, name: name, limit: limit, stopAtLimit: false)
    }

    /// Decompresses gzip held in memory, as ``contents(of:limit:stopAtLimit:)`` does a file: past `limit` bytes out it
    /// fails, or with `stopAtLimit` returns the first `limit` bytes (and then decompresses no further). The output is
    /// reserved from the gzip trailer's size; the input is fed 64 KiB at a time (1 KiB when it may stop early).
    private static func inflate(_ bytes: [UInt8], name: String, limit: Int, stopAtLimit: Bool) throws(RouteKitError)
        -> [UInt8]
    {
        if !stopAtLimit, let whole = wholeMember(bytes, limit: limit) { return whole }
        let inflater = try Inflater(fileName: name)
        var out: [UInt8] = []
        out.reserveCapacity(gzipSizeHint(bytes, limit: limit))
        var full = false
        let step = stopAtLimit ? 1024 : 64 * 1024
        let failure = bytes.withUnsafeBytes { (input: UnsafeRawBufferPointer) -> RouteKitError? in
            var offset = 0
            // Past the end of a member too: the next member of concatenated gzip data (the inflater resets for it).
            while offset < input.count && !full {
                let end = min(offset + step, input.count)
                do throws(RouteKitError) {
                    try inflater.inflate(UnsafeRawBufferPointer(rebasing: input[offset..<end])) {
                        (p: UnsafePointer<UInt8>, count: Int) throws(RouteKitError) in
                        if out.count + count > limit {
                            guard stopAtLimit else {
                                throw RouteKitError(
                                    .compression, "the decompressed data is larger than \(sizeText(limit))", file: name)
                            }
                            out.append(contentsOf: UnsafeBufferPointer(start: p, count: limit - out.count))
                            full = true
                            return
                        }
                        out.append(contentsOf: UnsafeBufferPointer(start: p, count: count))
                    }
                } catch {
                    return error
                }
                offset = end
            }
            return nil
        }
        if let failure { throw failure }
        if !inflater.ended && !full {
            throw RouteKitError(.compression, "the gzip data ends early (truncated file)", file: name)
        }
        return out
    }

    /// The data decompressed in one call to libdeflate (instead of zlib's streaming inflate; `Benchmarks/README.md`
    /// compares the two), when it is one gzip member whose trailer announces its size exactly and no more than
    /// `limit`. `nil` when that does not hold (several members, a trailer that does not match, corrupt data, an
    /// empty member): the streaming path then decompresses it, or names what is wrong, as it always has.
    package static func wholeMember(_ bytes: [UInt8], limit: Int) -> [UInt8]? {
        let size = gzipSizeHint(bytes, limit: limit)
        // The hint is the trailer's size only when neither the limit nor deflate's largest ratio cut it.
        guard size > 0, size == trailerSize(bytes), let decompressor = libdeflate_alloc_decompressor()
        else { return nil }
        defer { libdeflate_free_decompressor(decompressor) }
        var consumed = 0
        var produced = 0
        var status = LIBDEFLATE_BAD_DATA
        let out = [UInt8](unsafeUninitializedCapacity: size) { buffer, initialized in
            status = bytes.withUnsafeBytes { input in
                libdeflate_gzip_decompress_ex(
                    decompressor, input.baseAddress, input.count, buffer.baseAddress, size, &consumed, &produced)
            }
            initialized = status == LIBDEFLATE_SUCCESS ? min(produced, size) : 0
        }
        guard status == LIBDEFLATE_SUCCESS, consumed == bytes.count, produced == size else { return nil }
        return out
    }

    /// The size field of the gzip trailer (the last 4 bytes, little-endian); 0 when the data is too short for one.
    private static func trailerSize(_ bytes: [UInt8]) -> Int {
        guard bytes.count >= 18 else { return 0 }
        return littleEndian32(bytes[(bytes.count - 4)...])
    }

    /// Four bytes as a little-endian unsigned 32-bit number (a gzip trailer's size field); 0 unless there are four.
    package static func littleEndian32(_ bytes: some Collection<UInt8>) -> Int {
        guard bytes.count == 4 else { return 0 }
        return bytes.reversed().reduce(0) { $0 << 8 | Int($1) }
    }

    /// The CRC-32 of `bytes` (zlib's, as zip and gzip use it).
    package static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt = 0
        bytes.withUnsafeBufferPointer { buffer in
            var offset = 0
            // zlib's length is a 32-bit integer: feed a gigabyte at a time.
            repeat {
                let count = min(buffer.count - offset, 1 << 30)
                crc = CRouteKitZlib.crc32(crc, buffer.baseAddress.map { $0 + offset }, UInt32(count))
                offset += count
            } while offset < buffer.count
        }
        return UInt32(truncatingIfNeeded: crc)
    }

    /// A limit as people read it: whole MiB when it is one, else bytes with thousands separators.
    package static func sizeText(_ bytes: Int) -> String {
        if bytes >= 1 << 20 && bytes % (1 << 20) == 0 { return "\(bytes >> 20) MiB" }
        var digits = Array(String(bytes))
        var i = digits.count - 3
        while i > 0 {
            digits.insert(",", at: i)
            i -= 3
        }
        return String(digits) + " bytes"
    }

    /// The first `count` bytes gzip data decompresses to (fewer when it is shorter), to tell its format without
    /// decompressing all of it; `nil` when the data is not gzip or is corrupt before then.
    package static func gunzipHead(_ bytes: [UInt8], count: Int = headSize) -> [UInt8]? {
        guard isGzip(bytes) else { return nil }
        return try? inflate(bytes, name: "", limit: count, stopAtLimit: true)
    }

    /// The decompressed size gzip data announces in its trailer (the last member's size modulo 2³², so only a hint),
    /// bounded by `limit` and by deflate's largest possible ratio (1,032:1), so that a forged trailer reserves nothing
    /// the data could not fill; 0 when there is no trailer.
    package static func gzipSizeHint(_ bytes: [UInt8], limit: Int) -> Int {
        min(trailerSize(bytes), limit, bytes.count &* 1032)
    }

    /// What `stat` says of a path (following links).
    package struct Status: Sendable, Hashable {
        /// A regular file.
        package var isRegularFile: Bool
        /// A folder.
        package var isDirectory: Bool
        /// Its size in bytes.
        package var size: Int
        /// The device and inode: two paths with the same are the same file.
        package var identity: [UInt64]
    }

    /// What `stat` says of `path`, `nil` when it cannot be read.
    package static func status(of path: String) -> Status? {
        var st = stat()
        guard stat(path, &st) == 0 else { return nil }
        let type = st.st_mode & S_IFMT
        return Status(
            isRegularFile: type == S_IFREG, isDirectory: type == S_IFDIR, size: Int(st.st_size),
            identity: [UInt64(st.st_dev), UInt64(st.st_ino)])
    }
}
