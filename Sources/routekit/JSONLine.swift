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

/// The `error` object of the JSON shapes in DESIGN.md.
struct JSONError: Encodable {
    var code: String
    var message: String
    var line: Int?
    var column: Int?
    var byteOffset: Int?

    init(_ error: RouteKitError) {
        byteOffset = error.byteOffset
        code = error.code.description
        message = error.message
        line = error.line
        column = error.column
    }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(code, forKey: .code)
        try c.encode(message, forKey: .message)
        try c.encode(line, forKey: .line)
        try c.encode(column, forKey: .column)
        // Binary formats (FIT) name a byte offset instead of a line and column.
        try c.encodeIfPresent(byteOffset, forKey: .byteOffset)
    }

    enum CodingKeys: String, CodingKey { case code, message, line, column, byteOffset }
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
