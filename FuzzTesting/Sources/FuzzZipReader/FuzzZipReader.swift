// libFuzzer target for RouteKit's zip reader (RouteKitImport.ZipArchive).
//
// For every input: open it as an archive and read every entry. Any outcome is fine but a crash: an error must be
// a RouteKitError of code compression, io or notFound, and an entry that reads must not exceed the limits given.
// A broken rule calls fatalError: in a fuzz target a crash is how a bug is reported.

import CLibFuzzer
import RouteKit
@_spi(RouteKitInternals) import RouteKitImport

@_cdecl("FuzzZipReader_main")
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
    var limits = ArchiveLimits()
    limits.maxEntryBytes = 4 << 20
    limits.maxTotalBytes = 16 << 20
    limits.maxEntries = 1000
    do {
        let archive = try ZipArchive(bytes: bytes, name: "fuzz.zip", limits: limits)
        if archive.paths.count > limits.maxEntries { fatalError("more entries listed than the limit") }
        for path in archive.paths {
            do {
                let entry = try archive.contents(of: path)
                if entry.count > limits.maxEntryBytes { fatalError("an entry past the entry limit was returned") }
            } catch {
                check(error)
            }
        }
    } catch {
        check(error)
    }
    return 0
}

func check(_ error: RouteKitError) {
    if error.code != .compression && error.code != .io && error.code != .notFound {
        fatalError("unexpected error code \(error.code): \(error)")
    }
}
