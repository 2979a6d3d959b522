import Foundation

/// base64url without padding (RFC 4648 §5), for the opaque texts RouteKit hands out: change anchors, API tokens,
/// stream tickets, sealed anchors.
package enum Base64URL {
    /// The text of `bytes`.
    package static func encode(_ bytes: some Sequence<UInt8>) -> String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    /// The bytes of `text`, or `nil` when it is not base64url.
    package static func decode(_ text: some StringProtocol) -> [UInt8]? {
        var b64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while b64.count % 4 != 0 { b64 += "=" }
        return Data(base64Encoded: b64).map { [UInt8]($0) }
    }
}

extension RandomAccessCollection {
    /// The first index whose element satisfies `belongs`, for a collection where every element that does comes
    /// after every one that does not (a binary search); `endIndex` when none does.
    package func partitioningIndex(where belongs: (Element) throws -> Bool) rethrows -> Index {
        var low = startIndex
        var count = self.count
        while count > 0 {
            let half = count / 2
            let mid = index(low, offsetBy: half)
            if try belongs(self[mid]) {
                count = half
            } else {
                low = index(after: mid)
                count -= half + 1
            }
        }
        return low
    }
}

/// JSON string escaping, the one definition for every JSON RouteKit writes by hand (change sets, GeoJSON,
/// locations): `"` and `\` escaped, control characters as `\n`, `\r`, `\t`, `\b`, `\f` or `\u00XX`, the rest as
/// UTF-8 (slashes and non-ASCII unescaped, as `JSONEncoder` with `.withoutEscapingSlashes` writes them).
package enum JSONEscaping {
    /// Appends `text` as a JSON string literal, quotes included.
    package static func appendQuoted(_ text: String, to bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "\""))
        appendEscaped(text, to: &bytes)
        bytes.append(UInt8(ascii: "\""))
    }

    /// `text` escaped for a JSON string literal, without the quotes.
    package static func escaped(_ text: String) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count)
        appendEscaped(text, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends `text` escaped, without quotes.
    package static func appendEscaped(_ text: String, to bytes: inout [UInt8]) {
        for b in text.utf8 {
            switch b {
            case UInt8(ascii: "\""): bytes.append(contentsOf: [92, 34])
            case UInt8(ascii: "\\"): bytes.append(contentsOf: [92, 92])
            case 0x0A: bytes.append(contentsOf: [92, UInt8(ascii: "n")])
            case 0x0D: bytes.append(contentsOf: [92, UInt8(ascii: "r")])
            case 0x09: bytes.append(contentsOf: [92, UInt8(ascii: "t")])
            case 0x08: bytes.append(contentsOf: [92, UInt8(ascii: "b")])
            case 0x0C: bytes.append(contentsOf: [92, UInt8(ascii: "f")])
            case 0..<0x20:
                let hex: StaticString = "0123456789abcdef"
                let digit = { (n: UInt8) in hex.withUTF8Buffer { $0[Int(n)] } }
                bytes.append(contentsOf: [92, UInt8(ascii: "u"), 48, 48, digit(b >> 4), digit(b & 15)])
            default: bytes.append(b)
            }
        }
    }
}

/// How a follower of the change feed waits out a store that cannot be reached (``RouteKitError/Code/unavailable``:
/// a database server restarting): 0.1 s, doubling up to 2 s, from the same anchor again each time; back to 0.1 s
/// once the store answers. The policy of `ChangeTail`, the one tailing loop that `ChangeUpdates`
/// (`routekit changes --follow`) and the HTTP service's event streams and long-polls run.
package struct UnavailableBackoff: Sendable {
    /// The next wait, in seconds.
    package private(set) var seconds = 0.1

    package init() {}

    /// The store answered: the next wait is the shortest again.
    package mutating func reset() { seconds = 0.1 }

    /// Waits, then doubles the next wait (at most 2 s). Throws `CancellationError` when the task is cancelled.
    package mutating func wait() async throws {
        try await Task.sleep(for: .milliseconds(Int(seconds * 1000)))
        seconds = Swift.min(seconds * 2, 2)
    }
}
