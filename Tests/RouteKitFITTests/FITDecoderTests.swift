import Foundation
import RouteKit
@_spi(RouteKitInternals) import RouteKitFIT
import Testing

/// Writes small FIT files for tests: a header, definitions and messages, the CRC.
struct FITWriter {
    var data: [UInt8] = []
    var bigEndian = false

    /// A definition of local type `local` for message `global` with fields (number, size, base type).
    mutating func define(
        local: UInt8, global: UInt16, fields: [(UInt8, UInt8, UInt8)], architecture: UInt8? = nil,
        developer: [(UInt8, UInt8, UInt8)] = []
    ) {
        data.append(0x40 | (developer.isEmpty ? 0 : 0x20) | local)
        data.append(0)
        data.append(architecture ?? (bigEndian ? 1 : 0))
        let g = bigEndian ? global.bigEndian : global.littleEndian
        data.append(UInt8(g & 0xFF))
        data.append(UInt8(g >> 8))
        data.append(UInt8(fields.count))
        for f in fields { data += [f.0, f.1, f.2] }
        if !developer.isEmpty {
            data.append(UInt8(developer.count))
            for f in developer { data += [f.0, f.1, f.2] }
        }
    }

    mutating func message(local: UInt8, _ bytes: [UInt8]) {
        data.append(local)
        data += bytes
    }

    mutating func compressed(local: UInt8, offset: UInt8, _ bytes: [UInt8]) {
        data.append(0x80 | (local << 5) | (offset & 0x1F))
        data += bytes
    }

    func u16(_ v: UInt16) -> [UInt8] {
        let x = bigEndian ? v.bigEndian : v.littleEndian
        return [UInt8(x & 0xFF), UInt8(x >> 8)]
    }
    func u32(_ v: UInt32) -> [UInt8] {
        let x = bigEndian ? v.bigEndian : v.littleEndian
        return [UInt8(x & 0xFF), UInt8((x >> 8) & 0xFF), UInt8((x >> 16) & 0xFF), UInt8(x >> 24)]
    }
    func i32(_ v: Int32) -> [UInt8] { u32(UInt32(bitPattern: v)) }

    /// The whole file: a 14-byte header (with CRC), the data, the file CRC.
    func file(dataSize: UInt32? = nil, headerCRC: Bool = true, corruptCRC: Bool = false) -> [UInt8] {
        let size = dataSize ?? UInt32(data.count)
        var header: [UInt8] = [14, 0x20, 0x54, 0x08]
        header += [UInt8(size & 0xFF), UInt8((size >> 8) & 0xFF), UInt8((size >> 16) & 0xFF), UInt8(size >> 24)]
        header += Array(".FIT".utf8)
        let hc = headerCRC ? crc(header) : 0
        header += [UInt8(hc & 0xFF), UInt8(hc >> 8)]
        var out = header + data
        var c = crc(out)
        if corruptCRC { c ^= 0x5555 }
        out += [UInt8(c & 0xFF), UInt8(c >> 8)]
        return out
    }

    func crc(_ bytes: [UInt8]) -> UInt16 {
        bytes.withUnsafeBytes { FITCRC.update(0, $0) }
    }
}

/// A minimal activity: file_id, a session, records with position, heart rate and time.
func activityFIT(records: Int, start: UInt32 = 1_000_000_000, positions: Bool = true) -> FITWriter {
    var w = FITWriter()
    w.define(local: 0, global: 0, fields: [(0, 1, 0x00), (4, 4, 0x86)])
    w.message(local: 0, [4] + w.u32(start))
    // record: timestamp, lat, lon, heart rate, enhanced altitude
    w.define(local: 1, global: 20, fields: [(253, 4, 0x86), (0, 4, 0x85), (1, 4, 0x85), (3, 1, 0x02), (78, 4, 0x86)])
    for i in 0..<records {
        let lat: Int32 = positions ? Int32(596_523_235 + i * 1000) : .max  // ~50°, or invalid
        let lon: Int32 = positions ? Int32(83_519_065 + i * 1000) : .max  // ~7°
        w.message(local: 1, w.u32(start + UInt32(i)) + w.i32(lat) + w.i32(lon) + [UInt8(100 + i % 50)] + w.u32(2_600))
    }
    // session: timestamp, start_time, total_elapsed_time (ms), sport
    w.define(local: 2, global: 18, fields: [(253, 4, 0x86), (2, 4, 0x86), (7, 4, 0x86), (5, 1, 0x00)])
    w.message(local: 2, w.u32(start + UInt32(records)) + w.u32(start) + w.u32(UInt32(records) * 1000) + [1])
    return w
}

/// Every record of `bytes` fed `chunk` bytes at a time, with the decoder's warnings.
func decodeRecords(_ bytes: [UInt8], chunk: Int) throws -> ([FITRecord], [FITDecoder.Warning], Int) {
    var decoder = FITDecoder()
    var records: [FITRecord] = []
    var messages = 0
    let body: (FITDecoder.Event) throws -> Void = { e in
        if case .message(let m) = e {
            messages += 1
            if m.globalNumber == 20 { records.append(FITRecord(m)) }
        }
    }
    var i = 0
    while i < bytes.count {
        let end = min(bytes.count, i + chunk)
        try bytes.withUnsafeBytes { b in try decoder.feed(UnsafeRawBufferPointer(rebasing: b[i..<end]), body) }
        i = end
    }
    try decoder.finish(body)
    return (records, decoder.warnings, messages)
}

@Suite("FIT decoder")
struct FITDecoderTests {
    @Test("a small activity decodes: positions, heart rate, altitude with scale and offset, times")
    func smallActivity() throws {
        let bytes = activityFIT(records: 10).file()
        let (records, warnings, messages) = try decodeRecords(bytes, chunk: bytes.count)
        #expect(warnings.isEmpty)
        #expect(messages == 12)
        #expect(records.count == 10)
        #expect(records[3].timestamp == 1_000_000_003)
        #expect(records[3].heartRate == 103)
        #expect(records[0].altitude == 20)  // 2600 / 5 - 500
        let lat = try #require(records[0].latitude)
        #expect(abs(lat - 50.0) < 1e-6)
        let summary = try FITFile.summary(bytes)
        #expect(summary.fileType == 4)
        #expect(summary.records == 10)
        #expect(summary.recordsWithPosition == 10)
        #expect(summary.sessions.count == 1)
        #expect(summary.sessions[0].totalElapsedTime == 10)
        #expect(summary.sessions[0].sport == 1)
    }

    @Test("any chunking gives the same messages as the whole file", arguments: [1, 2, 3, 7, 64])
    func chunked(size: Int) throws {
        let bytes = activityFIT(records: 40).file()
        let whole = try decodeRecords(bytes, chunk: bytes.count)
        let parts = try decodeRecords(bytes, chunk: size)
        #expect(whole.0 == parts.0)
        #expect(whole.1 == parts.1)
        #expect(whole.2 == parts.2)
    }

    @Test("invalid values read as absent, never 0")
    func invalidSentinels() throws {
        let bytes = activityFIT(records: 3, positions: false).file()
        let (records, _, _) = try decodeRecords(bytes, chunk: bytes.count)
        #expect(records.allSatisfy { $0.latitude == nil && $0.longitude == nil })
        let summary = try FITFile.summary(bytes)
        #expect(summary.recordsWithPosition == 0)
        #expect(summary.recordsWithHeartRate == 3)
    }

    @Test("a bad file CRC is a warning; every message is still read")
    func fileCRC() throws {
        let bytes = activityFIT(records: 5).file(corruptCRC: true)
        let (records, warnings, _) = try decodeRecords(bytes, chunk: bytes.count)
        #expect(records.count == 5)
        #expect(warnings.map(\.kind) == [.fileCRC])
        #expect(warnings[0].offset == bytes.count - 2)
    }

    @Test("a bad header CRC is a warning; a header CRC of 0 is none")
    func headerCRC() throws {
        var bytes = activityFIT(records: 2).file()
        let (_, none, _) = try decodeRecords(activityFIT(records: 2).file(headerCRC: false), chunk: 1000)
        #expect(none.isEmpty)
        bytes[12] ^= 0xFF
        let (records, warnings, _) = try decodeRecords(bytes, chunk: 1000)
        #expect(records.count == 2)
        #expect(warnings.map(\.kind).contains(.headerCRC))
    }

    @Test("an unfinished file (data size 0) is read to its last complete message")
    func dataSizeZero() throws {
        let bytes = activityFIT(records: 6).file(dataSize: 0)
        let (records, warnings, _) = try decodeRecords(bytes, chunk: 5)
        #expect(records.count == 6)
        #expect(warnings.first?.kind == .dataSize)
        #expect(!warnings.contains { $0.kind == .fileCRC })  // the last two bytes were taken as the CRC
    }

    @Test("a truncated file keeps every complete message and says where it ends")
    func truncated() throws {
        let full = activityFIT(records: 8).file()
        // Cut inside the 6th record: header 14, file_id def 12 + msg 6, record def 21, records of 18 bytes.
        let cut = 14 + 12 + 6 + 21 + 18 * 5 + 7
        let bytes = Array(full[0..<cut])
        let (records, warnings, _) = try decodeRecords(bytes, chunk: 9)
        #expect(records.count == 5)
        #expect(warnings.map(\.kind) == [.truncated])
        #expect(warnings[0].offset == cut - 7)
    }

    @Test("chained files are read to the end, with a header event each")
    func chained() throws {
        let a = activityFIT(records: 3).file()
        let b = activityFIT(records: 4, start: 1_000_001_000).file()
        var decoder = FITDecoder()
        var headers = 0
        var ends = 0
        var records = 0
        let body: (FITDecoder.Event) throws -> Void = { e in
            switch e {
            case .header: headers += 1
            case .fileEnd(let ok):
                #expect(ok)
                ends += 1
            case .message(let m): if m.globalNumber == 20 { records += 1 }
            }
        }
        try decoder.feed(a + b, body)
        try decoder.finish(body)
        #expect(headers == 2 && ends == 2 && records == 7)
        #expect(decoder.files == 2)
        #expect(decoder.warnings.isEmpty)
        // Bytes after the last file that are not FIT: a warning, not an error.
        var decoder2 = FITDecoder()
        try decoder2.feed(a + [1, 2, 3], body)
        try decoder2.finish(body)
        #expect(decoder2.warnings.map(\.kind) == [.trailingBytes])
    }

    @Test("compressed timestamps resolve against the last full timestamp, with rollover")
    func compressedTimestamps() throws {
        var w = FITWriter()
        w.define(local: 0, global: 0, fields: [(0, 1, 0x00)])
        w.message(local: 0, [4])
        w.define(local: 1, global: 20, fields: [(253, 4, 0x86), (3, 1, 0x02)])
        let t0: UInt32 = 1_000_000_030  // low 5 bits: 30
        w.message(local: 1, w.u32(t0) + [90])
        w.define(local: 2, global: 20, fields: [(3, 1, 0x02)])
        w.compressed(local: 2, offset: 31, [91])  // 30 → 31: +1
        w.compressed(local: 2, offset: 2, [92])  // 31 → 2: rolled over, +3
        let (records, warnings, _) = try decodeRecords(w.file(), chunk: 3)
        #expect(warnings.isEmpty)
        #expect(records.map(\.timestamp) == [t0, t0 + 1, t0 + 4])
        #expect(records.map(\.heartRate) == [90, 91, 92])
    }

    @Test("big-endian definitions, a redefined local type, misaligned field sizes, developer fields")
    func layouts() throws {
        var w = FITWriter()
        w.define(local: 0, global: 0, fields: [(0, 1, 0x00)])
        w.message(local: 0, [4])
        w.bigEndian = true
        w.define(local: 1, global: 20, fields: [(253, 4, 0x86), (3, 1, 0x02)])
        w.message(local: 1, w.u32(1_000_000_000) + [120])
        w.bigEndian = false
        // Local type 1 redefined: a uint32 field of size 1 (as COROS writes) and a developer field of 3 bytes.
        w.define(
            local: 1, global: 20, fields: [(253, 4, 0x86), (5, 1, 0x86), (3, 1, 0x02)], developer: [(0, 3, 0)])
        w.message(local: 1, w.u32(1_000_000_001) + [7] + [121] + [9, 9, 9])
        w.message(local: 1, w.u32(1_000_000_002) + [7] + [122] + [9, 9, 9])
        let (records, warnings, messages) = try decodeRecords(w.file(), chunk: 4)
        #expect(warnings.isEmpty)
        #expect(messages == 4)
        #expect(records.map(\.timestamp) == [1_000_000_000, 1_000_000_001, 1_000_000_002])
        #expect(records.map(\.heartRate) == [120, 121, 122])
    }

    @Test("an architecture byte other than 0 or 1 is read as little-endian, with a warning")
    func architecture() throws {
        var w = FITWriter()
        w.define(local: 0, global: 20, fields: [(253, 4, 0x86), (3, 1, 0x02)], architecture: 0x42)
        w.message(local: 0, w.u32(1_000_000_000) + [77])
        let (records, warnings, _) = try decodeRecords(w.file(), chunk: 100)
        #expect(records.map(\.heartRate) == [77])
        #expect(warnings.map(\.kind) == [.architecture])
    }

    @Test("a data message of an undefined local type stops decoding with a warning naming its offset")
    func undefinedLocal() throws {
        var w = activityFIT(records: 2)
        let offset = 14 + w.data.count
        w.message(local: 9, [1, 2, 3])
        let (records, warnings, _) = try decodeRecords(w.file(), chunk: 100)
        #expect(records.count == 2)
        #expect(warnings.map(\.kind) == [.undefinedLocalType])
        #expect(warnings[0].offset == offset)
    }

    @Test("input that is not FIT is refused with the byte offset")
    func notFIT() throws {
        let gpx = Array("<?xml version=\"1.0\"?><gpx></gpx>".utf8)
        var decoder = FITDecoder()
        #expect(throws: RouteKitError.self) { try decoder.feed(gpx) { _ in } }
        do {
            var d = FITDecoder()
            try d.feed(gpx) { _ in }
            Issue.record("no error")
        } catch let e as RouteKitError {
            #expect(e.code == .invalidFIT)
            #expect(e.byteOffset == 0)
        }
        var empty = FITDecoder()
        #expect(throws: RouteKitError.self) { try empty.finish { _ in } }
    }
}
