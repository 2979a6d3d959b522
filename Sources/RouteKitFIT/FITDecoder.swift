import RouteKit

/// A streaming decoder of Garmin's FIT binary format: bytes in, messages out, one at a time.
///
/// Feed it the file in chunks of any size (``feed(_:_:)-([UInt8],_)``), then call ``finish(_:)``. Each complete message is
/// handed to the callback as it is decoded; nothing is kept but the message definitions, so memory does not
/// grow with the file.
///
/// What it gets right, each trap with the file that taught it (see the FIT DocC article):
/// - the header's own size (12 or 14 bytes, or more), its CRC checked and a mismatch reported, never fatal;
/// - the file CRC checked at the end of each file and a mismatch reported as a warning;
/// - chained files (several header + data + CRC units back to back), decoded to the end of the input;
/// - files that a device left unfinished (data size 0) or whose declared size ends inside a message, read to
///   the last complete message with a warning; a truncated last message is dropped with a warning;
/// - compressed-timestamp headers, resolved against the last full timestamp of any message;
/// - local message types redefined at any point; every field skipped by its declared size, whatever its base
///   type says (misaligned COROS fields); architecture bytes other than 0 and 1 read as little-endian with a
///   warning;
/// - developer fields skipped by their declared size and handed over as raw bytes.
///
/// A data message whose local type was never defined cannot be measured: decoding stops there with a warning
/// and everything before it is kept ("recovered"). Input that does not start with a FIT header is refused with
/// `RouteKitError.Code.invalidFIT` naming the byte offset.
public struct FITDecoder: Sendable {
    /// Seconds between the Unix epoch and FIT's (1989-12-31T00:00:00Z).
    package static let epochOffset: Int64 = 631_065_600
    /// FIT times below this are seconds since the device powered on, not since the FIT epoch.
    package static let minimumAbsoluteTime: UInt32 = 0x1000_0000

    /// Something odd that was read past or recovered from, with the byte offset it concerns.
    public struct Warning: Sendable, Hashable, CustomStringConvertible {
        /// What kind of oddity.
        public enum Kind: String, Sendable, Hashable {
            /// The header's CRC does not match its bytes.
            case headerCRC
            /// A file's CRC does not match its bytes.
            case fileCRC
            /// The header gives a data size of 0 or one that ends inside a message: read to the last complete
            /// message.
            case dataSize
            /// The input ended inside a message or before a file's CRC.
            case truncated
            /// A data message uses a local type that was never defined: the rest was skipped.
            case undefinedLocalType
            /// Bytes after the last file that are not another FIT file.
            case trailingBytes
            /// A definition with an architecture byte other than 0 or 1 (read as little-endian).
            case architecture
            /// More sessions, laps, timer events or developer field descriptions than a summary keeps
            /// (`FITSummary.Limits`): the first ones are kept, the rest counted.
            case limit
        }
        /// What kind of oddity.
        public var kind: Kind
        /// The byte offset in the input it concerns.
        public var offset: Int
        /// For a person.
        public var message: String

        public var description: String { "byte \(offset): \(message)" }
    }

    /// The header of one FIT file (a chained input has several).
    public struct Header: Sendable, Hashable {
        /// The header's size in bytes (12 or 14; other values are read as given).
        public var size: Int
        /// The protocol version byte (0x10 is 1.0, 0x20 is 2.0).
        public var protocolVersion: UInt8
        /// The profile version × 100 (2132 is 21.32).
        public var profileVersion: UInt16
        /// The declared size of the data, without header and CRC; 0 in files a device left unfinished.
        public var dataSize: UInt32
        /// The byte offset of the header in the input.
        public var offset: Int
    }

    /// What the decoder hands over.
    public enum Event {
        /// A FIT file's header was read (the first event of each chained file).
        case header(Header)
        /// A data message, valid only during the callback.
        case message(FITMessage)
        /// A FIT file's CRC was read (`crcMatches` tells whether it matched).
        case fileEnd(crcMatches: Bool)
    }

    private enum State {
        case header
        case records
        case crc
        /// Bytes after the last file that are not another FIT file: counted, reported at the end.
        case trailing
        case done
    }

    private var state = State.header
    private var buffer: [UInt8] = []
    /// Offset in the input of `buffer[0]` (or of the next byte fed when the buffer is empty).
    private var consumed = 0
    /// Data bytes of the current file still to read; `nil` when read to the end of the input.
    private var remaining: Int?
    private var crc: UInt16 = 0
    private var definitions: [FITDefinition?] = Array(repeating: nil, count: 16)
    private var lastTimestamp: UInt32?
    private var trailingStart = 0
    private var trailingCount = 0
    /// How many FIT files (header + data) were started.
    package private(set) var files = 0
    /// Data messages handed over.
    package private(set) var messages = 0
    /// Definition messages read.
    package private(set) var definitionCount = 0
    /// Data messages with a compressed-timestamp header.
    package private(set) var compressedTimestampMessages = 0
    /// What was read past or recovered from.
    public private(set) var warnings: [Warning] = []
    /// Whether anything was skipped or cut short (a warning of kind truncated, dataSize or
    /// undefinedLocalType).
    package var recovered: Bool {
        warnings.contains { [.truncated, .dataSize, .undefinedLocalType].contains($0.kind) }
    }

    /// Whether file CRCs are computed and checked (a second pass over a file already checked can skip them).
    public let checksCRC: Bool

    /// A new decoder.
    /// - Parameter checksCRC: compute and check file CRCs (the header's CRC is always checked); with `false`,
    ///   ``Event/fileEnd(crcMatches:)`` always says `true`.
    public init(checksCRC: Bool = true) { self.checksCRC = checksCRC }

    /// Decodes as much of `chunk` (and what was held back from earlier chunks) as makes complete messages.
    /// - Throws: `RouteKitError.Code.invalidFIT` when the input does not start with a FIT header, or
    ///   whatever `emit` throws.
    public mutating func feed(_ chunk: UnsafeRawBufferPointer, _ emit: (Event) throws -> Void) throws {
        if state == .done { return }
        if state == .trailing {
            trailingCount += chunk.count
            return
        }
        if buffer.isEmpty {
            let used = try decode(chunk, emit)
            if used < chunk.count { buffer.append(contentsOf: chunk[used...]) }
            consumed += used
        } else {
            buffer.append(contentsOf: chunk)
            let used = try buffer.withUnsafeBytes { try decode($0, emit) }
            buffer.removeFirst(used)
            consumed += used
        }
    }

    /// Decodes a whole input held in memory.
    public mutating func feed(_ bytes: [UInt8], _ emit: (Event) throws -> Void) throws {
        try bytes.withUnsafeBytes { try feed($0, emit) }
    }

    /// Ends the input: what is held back is reported (a truncated message, a missing CRC, trailing bytes).
    /// - Throws: `RouteKitError.Code.invalidFIT` when the input held no FIT file at all.
    public mutating func finish(_ emit: (Event) throws -> Void) throws {
        defer { state = .done }
        switch state {
        case .done: return
        case .header:
            if files == 0 {
                throw RouteKitError(
                    .invalidFIT,
                    buffer.isEmpty
                        ? "the input is empty" : "the input ends inside the FIT header (\(buffer.count) bytes)",
                    byteOffset: consumed)
            }
            if !buffer.isEmpty {
                warn(.trailingBytes, consumed, "\(buffer.count) byte(s) after the last FIT file were ignored")
            }
        case .trailing:
            warn(.trailingBytes, trailingStart, "\(trailingCount) byte(s) after the last FIT file were ignored")
        case .records:
            if remaining == nil && buffer.count == 2 {
                // Read to the end: the last two bytes are the CRC.
                let stored = UInt16(buffer[0]) | UInt16(buffer[1]) << 8
                let matches = stored == crc || !checksCRC
                if !matches { warn(.fileCRC, consumed, "the file CRC does not match its contents") }
                try emit(.fileEnd(crcMatches: matches))
            } else if remaining == nil && buffer.isEmpty {
                warn(.truncated, consumed, "the input ends without the file's CRC")
            } else {
                warn(
                    .truncated, consumed,
                    "the input ends inside a message (\(buffer.count) byte(s) dropped)"
                        + (remaining.map { ", \($0) declared data byte(s) missing" } ?? ""))
            }
        case .crc:
            warn(.truncated, consumed, "the input ends before the file's CRC")
        }
        buffer = []
    }

    private mutating func warn(_ kind: Warning.Kind, _ offset: Int, _ message: String) {
        // A damaged file could produce a warning per message; a person needs the first few and a count.
        if warnings.count < 100 { warnings.append(Warning(kind: kind, offset: offset, message: message)) }
    }

    /// Decodes from `bytes` (whose first byte is at input offset `consumed`); returns how many were used.
    private mutating func decode(_ bytes: UnsafeRawBufferPointer, _ emit: (Event) throws -> Void) throws -> Int {
        guard let base = bytes.baseAddress else { return 0 }
        let n = bytes.count
        var p = 0
        while p < n {
            switch state {
            case .done, .trailing:
                return n
            case .header:
                let size = Int(base.load(fromByteOffset: p, as: UInt8.self))
                if size < 12 {
                    if files == 0 {
                        throw RouteKitError(
                            .invalidFIT, "not a FIT file: the header size byte is \(size), at least 12 expected",
                            byteOffset: consumed + p)
                    }
                    state = .trailing
                    trailingStart = consumed + p
                    trailingCount = n - p
                    return n
                }
                // The signature first, as soon as there are 12 bytes: a large size byte must not make the decoder
                // wait for bytes that are not FIT at all.
                guard n - p >= 12 else { return p }
                let h = base + p
                let signature = UInt32(littleEndian: h.loadUnaligned(fromByteOffset: 8, as: UInt32.self))  // ".FIT"
                guard signature == 0x5449_462E else {
                    if files == 0 {
                        throw RouteKitError(
                            .invalidFIT, "not a FIT file: no \".FIT\" signature in the header", byteOffset: consumed + p
                        )
                    }
                    state = .trailing
                    trailingStart = consumed + p
                    trailingCount = n - p
                    return n
                }
                guard n - p >= size else { return p }
                let header = Header(
                    size: size, protocolVersion: h.load(fromByteOffset: 1, as: UInt8.self),
                    profileVersion: Self.u16(h + 2, bigEndian: false), dataSize: Self.u32(h + 4, bigEndian: false),
                    offset: consumed + p)
                crc = FITCRC.update(0, UnsafeRawBufferPointer(start: h, count: size >= 14 ? 12 : size))
                if size >= 14 {
                    let headerCRC = Self.u16(h + 12, bigEndian: false)
                    if headerCRC != 0 && headerCRC != crc {
                        warn(.headerCRC, consumed + p, "the header CRC does not match the header")
                    }
                    crc = FITCRC.update(crc, UnsafeRawBufferPointer(start: h + 12, count: size - 12))
                }
                files += 1
                definitions = Array(repeating: nil, count: 16)
                if header.dataSize == 0 {
                    remaining = nil
                    warn(
                        .dataSize, consumed + p,
                        "the header gives a data size of 0 (a file the device did not finish): read to the last complete message"
                    )
                } else {
                    remaining = Int(header.dataSize)
                }
                p += size
                state = .records
                try emit(.header(header))
            case .records:
                if remaining == 0 {
                    state = .crc
                    continue
                }
                let start = p
                let available = n - p
                let h = base.load(fromByteOffset: p, as: UInt8.self)
                var recordSize: Int
                if h & 0x80 == 0 && h & 0x40 != 0 {
                    // Definition: header, reserved, architecture, global number (2), field count, fields.
                    guard available >= 6 else { return p }
                    let fieldCount = Int(base.load(fromByteOffset: p + 5, as: UInt8.self))
                    recordSize = 6 + fieldCount * 3
                    if h & 0x20 != 0 {
                        guard available >= recordSize + 1 else { return p }
                        recordSize += 1 + Int(base.load(fromByteOffset: p + recordSize, as: UInt8.self)) * 3
                    }
                } else {
                    let local = h & 0x80 != 0 ? Int((h >> 5) & 0x03) : Int(h & 0x0F)
                    guard let definition = definitions[local] else {
                        let left = remaining.map { "\($0) declared data byte(s)" } ?? "the rest of the input"
                        warn(
                            .undefinedLocalType, consumed + p,
                            "a data message uses local type \(local), which has no definition: \(left) skipped")
                        state = .done
                        return n
                    }
                    recordSize = 1 + definition.size
                }
                if let r = remaining, recordSize > r {
                    // The declared size ends inside this message: the size is wrong, not the message.
                    warn(
                        .dataSize, consumed + p,
                        "the header's data size ends inside a message: read on to the last complete message")
                    remaining = nil
                }
                guard available >= recordSize else { return p }
                let record = UnsafeRawBufferPointer(start: base + p, count: recordSize)
                if checksCRC { crc = FITCRC.update(crc, record) }
                p += recordSize
                if let r = remaining { remaining = r - recordSize }
                if h & 0x80 == 0 && h & 0x40 != 0 {
                    try define(record, at: consumed + start)
                } else {
                    try dataMessage(record, header: h, at: consumed + start, emit)
                }
            case .crc:
                guard n - p >= 2 else { return p }
                let stored = Self.u16(base + p, bigEndian: false)
                let matches = stored == crc || !checksCRC
                if !matches { warn(.fileCRC, consumed + p, "the file CRC does not match its contents") }
                p += 2
                state = .header
                try emit(.fileEnd(crcMatches: matches))
            }
        }
        return p
    }

    private mutating func define(_ record: UnsafeRawBufferPointer, at offset: Int) throws {
        definitionCount += 1
        let h = record[0]
        let architecture = record[2]
        if architecture > 1 {
            warn(.architecture, offset, "a definition gives architecture \(architecture): read as little-endian")
        }
        let bigEndian = architecture == 1
        let global = UInt16(record[3]) | UInt16(record[4]) << 8
        let number = bigEndian ? global.byteSwapped : global
        let fieldCount = Int(record[5])
        var fields: [FITDefinition.Field] = []
        fields.reserveCapacity(fieldCount)
        var at = 0
        for i in 0..<fieldCount {
            let o = 6 + i * 3
            let size = Int(record[o + 1])
            fields.append(.init(number: record[o], size: size, baseType: record[o + 2], offset: at))
            at += size
        }
        var developerFields: [FITDefinition.DeveloperField] = []
        if h & 0x20 != 0 {
            let d = 6 + fieldCount * 3
            let count = Int(record[d])
            for i in 0..<count {
                let o = d + 1 + i * 3
                let size = Int(record[o + 1])
                developerFields.append(.init(number: record[o], size: size, developerIndex: record[o + 2], offset: at))
                at += size
            }
        }
        definitions[Int(h & 0x0F)] = FITDefinition(
            globalNumber: number, bigEndian: bigEndian, fields: fields, developerFields: developerFields, size: at)
    }

    private mutating func dataMessage(
        _ record: UnsafeRawBufferPointer, header h: UInt8, at offset: Int, _ emit: (Event) throws -> Void
    ) throws {
        let compressed = h & 0x80 != 0
        let local = compressed ? Int((h >> 5) & 0x03) : Int(h & 0x0F)
        guard let definition = definitions[local], let base = record.baseAddress else { return }
        var message = FITMessage(definition: definition, bytes: base + 1, offset: offset, timestamp: nil)
        if compressed {
            compressedTimestampMessages += 1
            if let last = lastTimestamp {
                let timeOffset = UInt32(h & 0x1F)
                var t = (last & ~0x1F) &+ timeOffset
                if timeOffset < last & 0x1F { t &+= 0x20 }
                lastTimestamp = t
                message.timestamp = t
            }
        } else if let t = message.uint32(field: 253) {
            lastTimestamp = t
            message.timestamp = t
        }
        messages += 1
        try emit(.message(message))
    }

    @inline(__always) static func u16(_ p: UnsafeRawPointer, bigEndian: Bool) -> UInt16 {
        let v = UInt16(p.load(as: UInt8.self)) | UInt16(p.load(fromByteOffset: 1, as: UInt8.self)) << 8
        return bigEndian ? v.byteSwapped : v
    }

    @inline(__always) static func u32(_ p: UnsafeRawPointer, bigEndian: Bool) -> UInt32 {
        let v = p.loadUnaligned(as: UInt32.self)
        return bigEndian ? UInt32(bigEndian: v) : UInt32(littleEndian: v)
    }
}

/// How the messages of one local type are laid out (a FIT definition message).
///
/// `@_spi(RouteKitInternals)`: the decoder's bookkeeping, public only to the FIT fuzzer (FuzzTesting) and the tests;
/// applications read a message's values by field number.
@_spi(RouteKitInternals)
public final class FITDefinition: Sendable {
    /// One field: its number in the global message's profile, size in bytes, base type and offset in the message.
    public struct Field: Sendable, Hashable {
        /// The field number (253 is the timestamp of every message).
        public var number: UInt8
        /// Its size in bytes (a multiple of the base type's for arrays; not always, in real files).
        public var size: Int
        /// The base type byte (`FITBaseType`).
        public var baseType: UInt8
        /// Its offset in the message's content.
        public var offset: Int
    }
    /// One developer field: its number, size, developer data index and offset in the message.
    public struct DeveloperField: Sendable, Hashable {
        /// Its number among its developer's fields.
        public var number: UInt8
        /// Its size in bytes.
        public var size: Int
        /// Which `developer_data_id` it belongs to.
        public var developerIndex: UInt8
        /// Its offset in the message's content.
        public var offset: Int
    }

    /// The global message number (20 is `record`).
    public let globalNumber: UInt16
    /// Whether multi-byte values are big-endian.
    public let bigEndian: Bool
    /// The fields, in message order.
    public let fields: [Field]
    /// The developer fields, after the fields.
    public let developerFields: [DeveloperField]
    /// The message's content size in bytes (without its header byte).
    public let size: Int
    /// Index in ``fields`` by field number, -1 when absent.
    let index: [Int16]

    init(globalNumber: UInt16, bigEndian: Bool, fields: [Field], developerFields: [DeveloperField], size: Int) {
        self.globalNumber = globalNumber
        self.bigEndian = bigEndian
        self.fields = fields
        self.developerFields = developerFields
        self.size = size
        var index = [Int16](repeating: -1, count: 256)
        for (i, f) in fields.enumerated() where index[Int(f.number)] < 0 { index[Int(f.number)] = Int16(i) }
        self.index = index
    }
}

/// The FIT base types (the low five bits of a field's base type byte).
package enum FITBaseType: UInt8, Sendable {
    case enumeration = 0x00, sint8 = 0x01, uint8 = 0x02, sint16 = 0x03, uint16 = 0x04, sint32 = 0x05
    case uint32 = 0x06, string = 0x07, float32 = 0x08, float64 = 0x09, uint8z = 0x0A, uint16z = 0x0B
    case uint32z = 0x0C, byte = 0x0D, sint64 = 0x0E, uint64 = 0x0F, uint64z = 0x10

    /// The size of one value in bytes.
    package var size: Int {
        switch self {
        case .enumeration, .sint8, .uint8, .string, .uint8z, .byte: 1
        case .sint16, .uint16, .uint16z: 2
        case .sint32, .uint32, .float32, .uint32z: 4
        case .float64, .sint64, .uint64, .uint64z: 8
        }
    }
}

/// One decoded data message: a view of its bytes, valid only during the decoder's callback.
///
/// Values are read by field number; a field that is absent, too small for its base type or holds the base
/// type's invalid value (all ones for unsigned, the largest value for signed, zero for the `z` types) reads as
/// `nil`, never as 0.
public struct FITMessage {
    /// How the message is laid out.
    @_spi(RouteKitInternals) public let definition: FITDefinition
    let bytes: UnsafeRawPointer
    /// The byte offset of the message's header in the input.
    public let offset: Int
    /// The message's time in FIT seconds (field 253, or resolved from a compressed-timestamp header).
    public var timestamp: UInt32?

    /// The global message number.
    public var globalNumber: UInt16 { definition.globalNumber }

    /// Whether the message has `field`.
    public func has(field: UInt8) -> Bool { definition.index[Int(field)] >= 0 }

    @inline(__always) func field(_ number: UInt8) -> FITDefinition.Field? {
        let i = Int(definition.index[Int(number)])
        return i < 0 ? nil : definition.fields[i]
    }

    /// An unsigned or signed integer field (any integer base type), widened; `nil` when absent or invalid.
    public func integer(field number: UInt8) -> Int64? {
        guard let f = field(number) else { return nil }
        return Self.integer(bytes + f.offset, size: f.size, baseType: f.baseType, bigEndian: definition.bigEndian)
    }

    /// An integer field as a `UInt32` (timestamps), `nil` when absent, invalid or negative.
    public func uint32(field number: UInt8) -> UInt32? {
        guard let v = integer(field: number), v >= 0, v <= Int64(UInt32.max) else { return nil }
        return UInt32(v)
    }

    /// A numeric field with the profile's scale and offset applied: `raw / scale - offset`.
    public func double(field number: UInt8, scale: Double = 1, offset: Double = 0) -> Double? {
        guard let f = field(number) else { return nil }
        let type = FITBaseType(rawValue: f.baseType & 0x1F)
        if type == .float32 || type == .float64 {
            guard let t = type, f.size >= t.size else { return nil }
            let p = bytes + f.offset
            if t == .float32 {
                let bits = FITDecoder.u32(p, bigEndian: definition.bigEndian)
                if bits == .max { return nil }
                let v = Double(Float(bitPattern: bits))
                return v.isFinite ? v / scale - offset : nil
            }
            var bits = p.loadUnaligned(as: UInt64.self)
            bits = definition.bigEndian ? UInt64(bigEndian: bits) : UInt64(littleEndian: bits)
            if bits == .max { return nil }
            let v = Double(bitPattern: bits)
            return v.isFinite ? v / scale - offset : nil
        }
        guard let v = integer(field: number) else { return nil }
        return Double(v) / scale - offset
    }

    /// A string field (UTF-8, up to its first NUL); `nil` when absent or empty.
    public func string(field number: UInt8) -> String? {
        guard let f = field(number) else { return nil }
        let raw = UnsafeRawBufferPointer(start: bytes + f.offset, count: f.size)
        let end = raw.firstIndex(of: 0) ?? raw.count
        guard end > 0 else { return nil }
        return String(decoding: raw[0..<end], as: UTF8.self)
    }

    /// The raw bytes of a field.
    public func bytes(field number: UInt8) -> [UInt8]? {
        guard let f = field(number) else { return nil }
        return Array(UnsafeRawBufferPointer(start: bytes + f.offset, count: f.size))
    }

    /// The raw bytes of a developer field, by developer data index and field number.
    public func developerBytes(index: UInt8, field number: UInt8) -> [UInt8]? {
        guard let f = definition.developerFields.first(where: { $0.developerIndex == index && $0.number == number })
        else { return nil }
        return Array(UnsafeRawBufferPointer(start: bytes + f.offset, count: f.size))
    }

    /// The first value of an integer of `baseType` at `p`, `nil` when too small or invalid.
    ///
    /// A switch on the base type's number (no `FITBaseType` made, no second switch for its size): this runs for
    /// every field of every record.
    @inline(__always)
    static func integer(_ p: UnsafeRawPointer, size: Int, baseType: UInt8, bigEndian: Bool) -> Int64? {
        switch baseType & 0x1F {
        case 0x00, 0x02, 0x0D:  // enum, uint8, byte
            guard size >= 1 else { return nil }
            let v = p.load(as: UInt8.self)
            return v == 0xFF ? nil : Int64(v)
        case 0x0A:  // uint8z
            guard size >= 1 else { return nil }
            let v = p.load(as: UInt8.self)
            return v == 0 ? nil : Int64(v)
        case 0x01:  // sint8
            guard size >= 1 else { return nil }
            let v = p.load(as: Int8.self)
            return v == .max ? nil : Int64(v)
        case 0x04:  // uint16
            guard size >= 2 else { return nil }
            let v = FITDecoder.u16(p, bigEndian: bigEndian)
            return v == .max ? nil : Int64(v)
        case 0x0B:  // uint16z
            guard size >= 2 else { return nil }
            let v = FITDecoder.u16(p, bigEndian: bigEndian)
            return v == 0 ? nil : Int64(v)
        case 0x03:  // sint16
            guard size >= 2 else { return nil }
            let v = Int16(bitPattern: FITDecoder.u16(p, bigEndian: bigEndian))
            return v == .max ? nil : Int64(v)
        case 0x06:  // uint32
            guard size >= 4 else { return nil }
            let v = FITDecoder.u32(p, bigEndian: bigEndian)
            return v == .max ? nil : Int64(v)
        case 0x0C:  // uint32z
            guard size >= 4 else { return nil }
            let v = FITDecoder.u32(p, bigEndian: bigEndian)
            return v == 0 ? nil : Int64(v)
        case 0x05:  // sint32
            guard size >= 4 else { return nil }
            let v = Int32(bitPattern: FITDecoder.u32(p, bigEndian: bigEndian))
            return v == .max ? nil : Int64(v)
        case 0x0E, 0x0F, 0x10:  // sint64, uint64, uint64z
            guard size >= 8 else { return nil }
            var bits = p.loadUnaligned(as: UInt64.self)
            bits = bigEndian ? UInt64(bigEndian: bits) : UInt64(littleEndian: bits)
            switch baseType & 0x1F {
            case 0x0E: return Int64(bitPattern: bits) == .max ? nil : Int64(bitPattern: bits)
            case 0x0F: return bits == .max || bits > UInt64(Int64.max) ? nil : Int64(bits)
            default: return bits == 0 || bits > UInt64(Int64.max) ? nil : Int64(bits)
            }
        default:  // string, float32, float64, and numbers that are no base type
            return nil
        }
    }
}

/// FIT's CRC-16 (CRC-16/ARC: polynomial 0x8005 reflected, initial value 0), the same values as Garmin's nibble
/// table, computed eight bytes at a time (slicing-by-8: table `k` advances a byte through `k` more zero bytes).
package enum FITCRC {
    /// Eight tables of 256 entries, back to back: `tables[k * 256 + b]`.
    static let tables: [UInt16] = {
        var t = [UInt16](repeating: 0, count: 8 * 256)
        for i in 0..<256 {
            var c = UInt16(i)
            for _ in 0..<8 { c = c & 1 != 0 ? (c >> 1) ^ 0xA001 : c >> 1 }
            t[i] = c
        }
        for k in 1..<8 {
            for i in 0..<256 {
                let previous = t[(k - 1) * 256 + i]
                t[k * 256 + i] = (previous >> 8) ^ t[Int(previous & 0xFF)]
            }
        }
        return t
    }()

    /// `crc` updated with `bytes`.
    package static func update(_ crc: UInt16, _ bytes: UnsafeRawBufferPointer) -> UInt16 {
        guard let p = bytes.baseAddress else { return crc }
        let n = bytes.count
        return tables.withUnsafeBufferPointer { table -> UInt16 in
            guard let t = table.baseAddress else { return crc }
            var c = crc
            var i = 0
            while i + 8 <= n {
                let word = UInt64(littleEndian: p.loadUnaligned(fromByteOffset: i, as: UInt64.self))
                let low = UInt16(truncatingIfNeeded: word) ^ c
                c =
                    t[7 * 256 + Int(low & 0xFF)] ^ t[6 * 256 + Int(low >> 8)]
                    ^ t[5 * 256 + Int((word >> 16) & 0xFF)] ^ t[4 * 256 + Int((word >> 24) & 0xFF)]
                    ^ t[3 * 256 + Int((word >> 32) & 0xFF)] ^ t[2 * 256 + Int((word >> 40) & 0xFF)]
                    ^ t[256 + Int((word >> 48) & 0xFF)] ^ t[Int(word >> 56)]
                i += 8
            }
            while i < n {
                c = (c >> 8) ^ t[Int((c ^ UInt16(p.load(fromByteOffset: i, as: UInt8.self))) & 0xFF)]
                i += 1
            }
            return c
        }
    }
}
