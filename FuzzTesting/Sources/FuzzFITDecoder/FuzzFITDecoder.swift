// libFuzzer target for the streaming FIT decoder.
//
// For every input:
//  (a) decode it in one chunk and again in chunks of 1...64 bytes (taken from the first byte): both must give
//      the same messages (global number, offset, timestamp, content bytes) and the same warnings, or fail with
//      the same error code and byte offset;
//  (b) the summary pass and the conversion to GPX events must not crash, and a summary's counts must agree
//      with the messages decoded.
// A broken rule calls fatalError: in a fuzz target a crash is how a bug is reported.

import CLibFuzzer
import RouteKit
@_spi(RouteKitInternals) import RouteKitFIT
import RouteKitIngest

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

@_cdecl("FuzzFITDecoder_main")
func fuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    var argc = argc
    var argv = argv
    return LLVMFuzzerRunDriver(&argc, &argv) { data, size in fuzz(data.map(UnsafeRawPointer.init), size) }
}

struct Decoded: Equatable {
    var messages: [[Int]] = []
    var warnings: [FITDecoder.Warning] = []
    var records = 0
}

func decode(_ bytes: [UInt8], chunk: Int) -> Result<Decoded, RouteKitError> {
    var out = Decoded()
    var decoder = FITDecoder()
    let body: (FITDecoder.Event) throws -> Void = { e in
        switch e {
        case .header(let h): out.messages.append([-1, h.offset, h.size, Int(h.dataSize)])
        case .fileEnd(let ok): out.messages.append([-2, ok ? 1 : 0])
        case .message(let m):
            if m.globalNumber == 20 { out.records += 1 }
            var row = [Int(m.globalNumber), m.offset, Int(m.timestamp ?? 0)]
            for f in m.definition.fields { row.append(Int(m.integer(field: f.number) ?? -1)) }
            out.messages.append(row)
        }
    }
    do {
        var i = 0
        while i < bytes.count {
            let end = min(bytes.count, i + chunk)
            try bytes.withUnsafeBytes { b in try decoder.feed(UnsafeRawBufferPointer(rebasing: b[i..<end]), body) }
            i = end
        }
        try decoder.finish(body)
    } catch let e as RouteKitError {
        return .failure(e)
    } catch {
        fatalError("the decoder threw something that is not a RouteKitError: \(error)")
    }
    out.warnings = decoder.warnings
    return .success(out)
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    let bytes = start.map { Array(UnsafeRawBufferPointer(start: $0, count: count)) } ?? []
    let chunk = Int((bytes.first ?? 0) % 64) + 1
    let whole = decode(bytes, chunk: max(bytes.count, 1))
    let chunked = decode(bytes, chunk: chunk)
    switch (whole, chunked) {
    case (.success(let a), .success(let b)):
        if a != b { fatalError("whole and \(chunk)-byte chunks decode differently") }
        do {
            let s = try FITFile.summary(bytes)
            if s.records != a.records { fatalError("the summary counts \(s.records) records, the decoder \(a.records)") }
            var points = 0
            try FITFile.gpxEvents(bytes) { (e: GPXEvent) throws(RouteKitError) in
                if case .trackPoints(let p) = e { points += p.count }
            }
            if points > s.recordsWithPosition { fatalError("more GPX points than positioned records") }
        } catch {
            // A file type RouteKit does not convert: fine, as long as it is a typed error.
            if error.code != .invalidFIT { fatalError("unexpected error code \(error.code)") }
        }
    case (.failure(let a), .failure(let b)):
        if a.code != b.code || a.byteOffset != b.byteOffset {
            fatalError("whole and \(chunk)-byte chunks fail differently: \(a) vs \(b)")
        }
    case (.success, .failure(let e)):
        fatalError("the whole input decodes but \(chunk)-byte chunks fail: \(e)")
    case (.failure(let e), .success):
        fatalError("\(chunk)-byte chunks decode but the whole input fails: \(e)")
    }
    return 0
}
