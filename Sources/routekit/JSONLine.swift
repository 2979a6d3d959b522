import Foundation
import RouteKit

/// Prints one JSON object per line (sorted keys, no slashes escaped).
func printJSONLine(_ value: some Encodable) {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    if let data = try? encoder.encode(value), let text = String(data: data, encoding: .utf8) {
        print(text)
        fflush(nil)  // a reader (a pipe, a file being followed) sees each object when it is complete
    }
}

/// Writes a line to standard error.
func printError(_ text: String) { printErrorRaw(text + "\n") }

/// Writes to standard error as is.
func printErrorRaw(_ text: String) {
    // write(2), not FileHandle.write: Foundation's write traps on EINTR and EPIPE.
    let bytes = Array(text.utf8)
    bytes.withUnsafeBytes { buffer in
        guard let base = buffer.baseAddress else { return }
        var offset = 0
        while offset < buffer.count {
            let n = write(2, base + offset, buffer.count - offset)
            if n > 0 {
                offset += n
            } else if n < 0 && errno == EINTR {
                continue
            } else {
                return
            }
        }
    }
}

/// Whether standard error is a terminal (progress is shown only then).
var stderrIsTerminal: Bool { isatty(2) == 1 }
