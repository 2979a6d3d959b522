// libFuzzer target for the TCX reader (RouteKitTCX.TCXDocument, parsed as a stream through XMLParser).
//
// For every input: parse it. A document or a RouteKitError (malformedXML, invalidTCX) are fine; any other
// error code or a crash is a bug. A parsed document's trackpoints have finite coordinates (their range is checked
// when they are imported).

import CLibFuzzer
import RouteKit
@_spi(RouteKitInternals) import RouteKitTCX

@_cdecl("FuzzTCXDocument_main")
func fuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    var argc = argc
    var argv = argv
    return LLVMFuzzerRunDriver(&argc, &argv) { data, size in fuzz(data.map(UnsafeRawPointer.init), size) }
}

// libFuzzer's own entry point, for when the linker takes libFuzzer's `main` rather than this target's (it does for
// targets that link FoundationXML).
@_cdecl("LLVMFuzzerTestOneInput")
func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    fuzz(data.map(UnsafeRawPointer.init), size)
}

func fuzz(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    let bytes = start.map { Array(UnsafeRawBufferPointer(start: $0, count: count)) } ?? []
    do {
        let document = try TCXDocument.parse(bytes)
        for activity in document.activities {
            for point in activity.trackpoints {
                if let lat = point.latitude, !lat.isFinite { fatalError("latitude \(lat)") }
                if let lon = point.longitude, !lon.isFinite { fatalError("longitude \(lon)") }
            }
        }
    } catch {
        if error.code != .malformedXML && error.code != .invalidTCX && error.code != .invalidValue {
            fatalError("unexpected error code \(error.code)")
        }
    }
    return 0
}
