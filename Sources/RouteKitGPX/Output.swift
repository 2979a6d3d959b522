public import RouteKit

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#elseif canImport(Musl)
    import Musl
#endif

/// Where a writer's bytes go: a file (written in 1 MiB blocks) or memory.
public final class OutputSink {
    /// The message of the error a write gets when the reader closed the pipe (`| head -1`): a command ends quietly on
    /// it, as the reader asked for no more.
    package static let closedByReader = "write failed: the reader closed the pipe"

    private var buffer: RawBytes
    private var fd: Int32 = -1
    private var ownsFD = false
    private var memory: [UInt8]?
    private let flushAt = 1 << 20
    /// The path, for errors.
    package let name: String

    /// Writes to a new file at `path` (replacing it).
    public init(path: String) throws(RouteKitError) {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        guard fd >= 0 else {
            throw RouteKitError(.io, "cannot create the file: \(String(cString: strerror(errno)))", file: path)
        }
        self.fd = fd
        self.ownsFD = true
        self.name = path
        self.buffer = RawBytes(capacity: 1 << 20 + 4096)
    }

    /// Writes to standard output.
    public static func standardOutput() -> OutputSink { OutputSink(fd: 1, name: "<stdout>") }

    private init(fd: Int32, name: String) {
        self.fd = fd
        self.name = name
        self.buffer = RawBytes(capacity: 1 << 20 + 4096)
    }

    /// Collects into memory; read ``bytes`` after ``close()``.
    public init() {
        self.name = "<memory>"
        self.memory = []
        self.buffer = RawBytes(capacity: 64 * 1024)
    }

    deinit {
        if ownsFD && fd >= 0 { _ = Glibc_close(fd) }
    }

    /// What was written, for a memory sink.
    public var bytes: [UInt8] { memory ?? [] }

    /// Writes text as UTF-8; buffered, and flushed when the buffer grows large or on ``flush()``.
    package func writeText(_ s: String) throws(RouteKitError) {
        write(s)
        try maybeFlush()
    }

    @inline(__always) package func write(_ s: StaticString) {
        buffer.append(s.utf8Start, s.utf8CodeUnitCount)
    }

    @inline(__always) package func write(_ s: String) {
        buffer.append(s)
    }

    @inline(__always) package func write(_ bytes: [UInt8]) {
        buffer.append(bytes)
    }

    @inline(__always) package func writeByte(_ b: UInt8) {
        buffer.append(b)
    }

    /// Writes `count` spaces.
    @inline(__always) func writeSpaces(_ count: Int) {
        buffer.reserve(count)
        for _ in 0..<count { buffer.append(0x20) }
    }

    /// Writes text escaped for element content.
    func writeEscaped(_ s: String, attribute: Bool = false) {
        var needs = false
        for u in s.utf8 where u == 0x26 || u == 0x3C || u == 0x3E || (attribute && u == 0x22) || u < 0x20 {
            needs = true
            break
        }
        if !needs {
            write(s)
            return
        }
        for u in s.utf8 {
            switch u {
            case 0x26: write("&amp;")
            case 0x3C: write("&lt;")
            case 0x3E: write("&gt;")
            case 0x22 where attribute: write("&quot;")
            case 0x09, 0x0A, 0x0D:
                if attribute { write("&#\(u);") } else { writeByte(u) }
            case 0..<0x20: continue  // not representable in XML 1.0
            default: writeByte(u)
            }
        }
    }

    /// Writes a `Double` in the shortest decimal text that reads back as the same `Double`, never in
    /// exponent notation (XML Schema's `xsd:decimal` has none).
    package func writeDecimal(_ value: Double) {
        buffer.appendDecimal(value)
    }

    /// Hands the buffer to `body` for many appends at once: one access to it instead of one per value (each
    /// access to a class's stored property is checked for exclusivity at run time).
    @inline(__always) package func withBuffer<R>(_ body: (inout RawBytes) -> R) -> R {
        body(&buffer)
    }

    /// Writes a timestamp as ISO 8601 without allocating.
    func writeTimestamp(_ t: Timestamp) {
        buffer.reserve(40)
        t.writeISO8601 { byte in buffer.append(byte) }
    }

    /// Flushes buffered bytes when over the block size.
    @inline(__always) package func maybeFlush() throws(RouteKitError) {
        if buffer.count >= flushAt { try flush() }
    }

    /// Writes everything buffered.
    package func flush() throws(RouteKitError) {
        if memory != nil {
            memory?.append(contentsOf: UnsafeBufferPointer(start: buffer.base, count: buffer.count))
            buffer.count = 0
            return
        }
        var offset = 0
        while offset < buffer.count {
            let n = Glibc_write(fd, buffer.base + offset, buffer.count - offset)
            if n < 0 {
                if errno == EINTR { continue }
                if errno == EPIPE { throw RouteKitError(.io, Self.closedByReader, file: name) }
                throw RouteKitError(.io, "write failed: \(String(cString: strerror(errno)))", file: name)
            }
            offset += n
        }
        buffer.count = 0
    }

    /// Flushes and closes a file sink.
    public func close() throws(RouteKitError) {
        try flush()
        if ownsFD && fd >= 0 {
            let rc = Glibc_close(fd)
            fd = -1
            guard rc == 0 else {
                throw RouteKitError(.io, "closing the file failed: \(String(cString: strerror(errno)))", file: name)
            }
        }
    }
}

@inline(__always) private func Glibc_close(_ fd: Int32) -> Int32 { close(fd) }
@inline(__always) private func Glibc_write(_ fd: Int32, _ p: UnsafeRawPointer, _ n: Int) -> Int { write(fd, p, n) }

/// Shortest round-trip decimal text for `value`, without exponent (`-0.0` stays `-0`, integers have no
/// fraction).
func appendDecimal(_ value: Double, to out: inout [UInt8]) {
    if value == value.rounded() && abs(value) < 1e15 {
        if value == 0 && value.sign == .minus {
            out.append(contentsOf: Array("-0".utf8))
        } else {
            out.append(contentsOf: Array(String(Int64(value)).utf8))
        }
        return
    }
    let text = value.description  // shortest round-trip digits
    guard let e = text.firstIndex(where: { $0 == "e" || $0 == "E" }) else {
        out.append(contentsOf: Array(text.utf8))
        return
    }
    // d.ddde±x → plain decimal.
    var mantissa = String(text[..<e])
    let exponent = Int(text[text.index(after: e)...]) ?? 0
    var negative = false
    if mantissa.hasPrefix("-") {
        negative = true
        mantissa.removeFirst()
    }
    let parts = mantissa.split(separator: ".", omittingEmptySubsequences: false)
    let intPart = String(parts[0])
    var fracPart = parts.count > 1 ? String(parts[1]) : ""
    if fracPart == "0" { fracPart = "" }
    let digits = intPart + fracPart
    let pointIndex = intPart.count + exponent  // position of the decimal point within digits
    var result = negative ? "-" : ""
    if pointIndex <= 0 {
        result += "0." + String(repeating: "0", count: -pointIndex) + digits
    } else if pointIndex >= digits.count {
        result += digits + String(repeating: "0", count: pointIndex - digits.count)
    } else {
        let i = digits.index(digits.startIndex, offsetBy: pointIndex)
        result += digits[..<i] + "." + digits[i...]
    }
    out.append(contentsOf: Array(result.utf8))
}

/// Shortest round-trip decimal text for `value`, never in exponent notation.
package func decimalText(_ value: Double) -> String {
    var out = [UInt8]()
    appendDecimal(value, to: &out)
    return String(decoding: out, as: UTF8.self)
}
