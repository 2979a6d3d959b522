// libFuzzer target for the Apple Health export.xml scanner (RouteKitHealth.HealthXMLScanner).
//
// For every input: scan it handed out whole and again 1...64 bytes at a time (taken from the first byte), with the
// same chunk size: both must give the same events (name, depth, attributes) and fail alike (code, line, column).
// Depth never passes the scanner's bound. A broken rule calls fatalError.

import CLibFuzzer
import RouteKit
@_spi(RouteKitInternals) import RouteKitHealth

@_cdecl("FuzzHealthScanner_main")
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

struct Outcome: Equatable {
    var events: [String] = []
    var error: String?
}

func scan(_ bytes: [UInt8], readSize: Int, chunkSize: Int) -> Outcome {
    var out = Outcome()
    let scanner = HealthXMLScanner(
        bytes: bytes, readSize: readSize, fileName: "export.xml", chunkSize: chunkSize, maxMarkup: 4096, maxDepth: 32)
    do {
        while let event = try scanner.next() {
            if scanner.depth > 32 { fatalError("depth \(scanner.depth) past the bound of 32") }
            switch event {
            case .start:
                out.events.append(
                    "+\(scanner.name)@\(scanner.depth)"
                        + scanner.allAttributes.map { " \($0.name)=\($0.value)" }.joined())
            case .end:
                out.events.append("-\(scanner.name)")
            }
        }
    } catch {
        out.error = "\(error.code) \(error.line ?? -1):\(error.column ?? -1)"
    }
    return out
}

func fuzz(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    let bytes = start.map { Array(UnsafeRawBufferPointer(start: $0, count: count)) } ?? []
    let small = Int((bytes.first ?? 0) % 64) + 1
    let whole = scan(bytes, readSize: .max, chunkSize: 4096)
    let pieces = scan(bytes, readSize: small, chunkSize: 4096)
    if whole != pieces {
        fatalError("whole and \(small)-byte reads scan differently: \(whole.error ?? "ok") vs \(pieces.error ?? "ok")")
    }
    return 0
}
