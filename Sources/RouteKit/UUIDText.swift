import Foundation

extension UUID {
    /// The lowercase text form (`0c1d2e3f-…`), as RouteKit stores, prints and serves uuids. Written directly from the
    /// bytes: `uuidString.lowercased()` costs two strings and a case mapping, which showed in reading large change
    /// sets.
    package var lowercaseText: String {
        let hex: [UInt8] = Array("0123456789abcdef".utf8)
        return withUnsafeBytes(of: uuid) { raw in
            String(unsafeUninitializedCapacity: 36) { out in
                var o = 0
                for (i, b) in raw.enumerated() {
                    if i == 4 || i == 6 || i == 8 || i == 10 {
                        out[o] = UInt8(ascii: "-")
                        o += 1
                    }
                    out[o] = hex[Int(b >> 4)]
                    out[o + 1] = hex[Int(b & 15)]
                    o += 2
                }
                return o
            }
        }
    }

    /// Reads a uuid's text (either case, with its four dashes); `nil` for anything else. Foundation's
    /// `UUID(uuidString:)` goes through `sscanf` on Linux.
    package init?(text: String) {
        var bytes = [UInt8](repeating: 0, count: 16)
        var n = 0
        var high = true
        var count = 0
        for (i, c) in text.utf8.enumerated() {
            count += 1
            if i == 8 || i == 13 || i == 18 || i == 23 {
                guard c == UInt8(ascii: "-") else { return nil }
                continue
            }
            let v: UInt8
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): v = c - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): v = c - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): v = c - UInt8(ascii: "A") + 10
            default: return nil
            }
            guard n < 16 else { return nil }
            if high {
                bytes[n] = v << 4
            } else {
                bytes[n] |= v
                n += 1
            }
            high.toggle()
        }
        guard count == 36, n == 16 else { return nil }
        self.init(
            uuid: (
                bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7], bytes[8], bytes[9],
                bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]
            ))
    }
}
