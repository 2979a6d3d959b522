// libFuzzer target for the streaming GPX reader.
//
// For every input:
//  (a) parse it in one chunk and again in chunks of 1...64 bytes (taken from the first byte); both must
//      give the same document, or both must fail with the same error code, line and column;
//  (b) a document that parses must write (GPXWriter.data(for:)) and the output must read back.
// A broken rule calls fatalError: in a fuzz target a crash is how a bug is reported. Messages name
// only what differs and where, never coordinates (RouteKitError.description holds none).

import CLibFuzzer
import RouteKit
import RouteKitGPX
import RouteKitIngest

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The program's entry point. SwiftPM (tools version 5.5 and later) links every executable with
/// `--defsym main=<Module>_main` so that tests can link the module; with `-parse-as-library` no such symbol
/// is generated, and libFuzzer's own `main` is never used. So this defines it and hands over to libFuzzer.
@_cdecl("FuzzGPXReader_main")
func fuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    var argc = argc
    var argv = argv
    return LLVMFuzzerRunDriver(&argc, &argv) { data, size in fuzz(data.map(UnsafeRawPointer.init), size) }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    let bytes = start.map { Array(UnsafeRawBufferPointer(start: $0, count: count)) } ?? []
    let chunk = max(Int((bytes.first ?? 0) % 64) + 1, minimumChunk)
    // "Whole": the input handed over in a single chunk of exactly its size (a tight buffer lets ASan
    // see reads past the data; the default 1 MiB chunk would hide them inside the allocation).
    let whole = parse(bytes, chunkSize: max(bytes.count, 1))
    let chunked = parse(bytes, chunkSize: chunk)

    switch (whole, chunked) {
    case (.success(let a), .success(let b)):
        if a != b {
            fatalError("whole and \(chunk)-byte chunks give different documents: \(difference(a, b))")
        }
        roundTrip(a)
    case (.failure(let a), .failure(let b)):
        if a.code != b.code || a.line != b.line || a.column != b.column {
            fatalError("whole and \(chunk)-byte chunks fail differently: \(a) vs \(b)")
        }
    case (.success, .failure(let e)):
        fatalError("whole input parses but \(chunk)-byte chunks fail: \(e)")
    case (.failure(let e), .success):
        fatalError("\(chunk)-byte chunks parse but the whole input fails: \(e)")
    }
    return 0
}

/// The smallest chunk size tried: 1, unless FUZZ_GPX_MIN_CHUNK raises it (to fuzz past a bug that only small
/// chunks hit while it is being fixed).
let minimumChunk: Int = {
    guard let value = getenv("FUZZ_GPX_MIN_CHUNK"), let n = Int(String(cString: value)) else { return 1 }
    return min(max(n, 1), 64)
}()

func parse(_ bytes: [UInt8], chunkSize: Int) -> Result<GPXDocument, RouteKitError> {
    do throws(RouteKitError) {
        return .success(try GPXDocument(bytes: bytes, name: "fuzz.gpx", chunkSize: chunkSize))
    } catch {
        return .failure(error)
    }
}

/// What GPXWriter writes must read back.
func roundTrip(_ document: GPXDocument) {
    let written: [UInt8]
    do throws(RouteKitError) {
        written = try GPXWriter.data(for: document)
    } catch {
        fatalError("GPXWriter cannot write a document the reader accepted: \(error)")
    }
    do throws(RouteKitError) {
        _ = try GPXDocument(bytes: written, name: "written.gpx")
    } catch {
        fatalError("the reader rejects what GPXWriter wrote (\(written.count) bytes): \(error)")
    }
}

/// Where two documents differ, without any coordinate or value.
func difference(_ a: GPXDocument, _ b: GPXDocument) -> String {
    if a.info != b.info { return "root attributes (version/creator/namespace)" }
    if a.metadata != b.metadata { return "metadata" }
    if a.extensions != b.extensions { return "root extensions" }
    if a.warnings != b.warnings {
        return
            "warnings [\(a.warnings.map(\.kind).joined(separator: ","))] vs [\(b.warnings.map(\.kind).joined(separator: ","))]"
    }
    if let d = points("waypoints", a.waypoints, b.waypoints) { return d }
    if a.routes.count != b.routes.count { return "route count \(a.routes.count) vs \(b.routes.count)" }
    for (i, (r, s)) in zip(a.routes, b.routes).enumerated() {
        if r.info != s.info { return "routes[\(i)].info" }
        if let d = points("routes[\(i)].points", r.points, s.points) { return d }
    }
    if a.tracks.count != b.tracks.count { return "track count \(a.tracks.count) vs \(b.tracks.count)" }
    for (i, (t, u)) in zip(a.tracks, b.tracks).enumerated() {
        if t.info != u.info { return "tracks[\(i)].info" }
        if t.events.count != u.events.count || t.events != u.events {
            return "tracks[\(i)].events (\(t.events.count) vs \(u.events.count))"
        }
        if t.segments.count != u.segments.count {
            return "tracks[\(i)] segment count \(t.segments.count) vs \(u.segments.count)"
        }
        for (j, (s, v)) in zip(t.segments, u.segments).enumerated() {
            if s.extensions != v.extensions { return "tracks[\(i)].segments[\(j)].extensions" }
            if let d = points("tracks[\(i)].segments[\(j)].points", s.points, v.points) { return d }
        }
    }
    return "documents compare unequal but no field differs (an == that is not reflexive?)"
}

func points(_ what: String, _ a: [GPXPoint], _ b: [GPXPoint]) -> String? {
    if a.count != b.count { return "\(what): count \(a.count) vs \(b.count)" }
    for (i, (p, q)) in zip(a, b).enumerated() where p != q {
        let part = p.location != q.location ? "location" : p.values != q.values ? "extension values" : "extras"
        return "\(what)[\(i)]: \(part) differ"
    }
    return nil
}
