// libFuzzer target for the Apple Health export.xml scanner (RouteKitHealth.HealthXMLScanner).
//
// For every input: scan it whole and again handed out 1...64 bytes at a time with a small chunk size (taken from the
// first byte): both must give the same events (name, depth, attributes) and fail alike (code, line, column). Depth
// never passes the scanner's bound. A broken rule calls fatalError.

import CLibFuzzer
import RouteKit
import RouteKitHealth

@_cdecl("FuzzHealthScanner_main")
func fuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    var argc = argc
    var argv = argv
    return LLVMFuzzerRunDriver(&argc, &argv) { data, size in fuzz(data.map(UnsafeRawPointer.init), size) }
}

struct Outcome: Equatable {
    var events: [String] = []
    var error: String?
}

func scan(_ bytes: [UInt8], readSize: Int, chunkSize: Int) -> Outcome {
    var out = Outcome()
    let scanner = HealthXMLScanner(
        stream: MemoryByteStream(bytes, readSize: readSize), fileName: "export.xml", chunkSize: chunkSize,
        maxMarkup: 4096, maxDepth: 32)
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
    let whole = scan(bytes, readSize: .max, chunkSize: 1 << 16)
    let pieces = scan(bytes, readSize: small, chunkSize: 4096)
    if whole != pieces {
        fatalError("whole and \(small)-byte reads scan differently: \(whole.error ?? "ok") vs \(pieces.error ?? "ok")")
    }
    return 0
}
