internal import RouteKit

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#elseif canImport(Musl)
    import Musl
#endif

// Characters and references, part of the input layer (``XMLInput``): the control characters XML 1.0 forbids, and
// entity and character references (`&lt;`, `&#233;`, `&#xE9;`; no DTD, so no other entity). The tokenizer and the
// tag and namespace layers call these on ranges of `bytes`; what they hand back is a decoded character (the caller
// appends it where the text goes) or an error at the offending byte.

extension XMLInput {
    /// XML 1.0 allows no control character but tab, line feed and carriage return.
    @inline(__always) static func isForbiddenControl(_ c: UInt8) -> Bool {
        c < 0x20 && c != 0x09 && c != 0x0A && c != 0x0D
    }

    /// Refuses the control characters XML 1.0 does not allow in `b[from..<to]`.
    mutating func checkChars(_ from: Int, _ to: Int) throws(RouteKitError) {
        let b = bytes.base
        var i = from
        while i < to {
            if XMLInput.isForbiddenControl(b[i]) {
                let hex = String(b[i], radix: 16, uppercase: true)
                throw error(
                    .malformedXML, "control character U+\(hex.count < 2 ? "000" : "00")\(hex) is not allowed in XML",
                    at: i)
            }
            i += 1
        }
    }

    /// Checks that every `&` in `b[from..<to]` starts a valid reference.
    mutating func checkEntities(_ from: Int, _ to: Int) throws(RouteKitError) {
        try checkChars(from, to)
        var i = from
        while let amp = memchrOffset(bytes.base, i, to, AMP) {
            i = try decodeReference(amp, to).next
        }
    }

    /// Decodes the reference at `b[amp]`: the character it stands for, and the offset after its `;`.
    func decodeReference(_ amp: Int, _ to: Int) throws(RouteKitError) -> (scalar: Unicode.Scalar, next: Int) {
        let b = bytes.base
        guard let semi = memchrOffset(b, amp + 1, min(to, amp + 64), SEMI) else {
            throw error(.malformedXML, "'&' does not start an entity or character reference (write &amp;)", at: amp)
        }
        let n = semi - amp - 1
        let s = b + amp + 1
        func eq(_ lit: StaticString) -> Bool {
            n == lit.utf8CodeUnitCount && memcmp(s, lit.utf8Start, n) == 0
        }
        let scalar: Unicode.Scalar
        if eq("lt") {
            scalar = "<"
        } else if eq("gt") {
            scalar = ">"
        } else if eq("amp") {
            scalar = "&"
        } else if eq("quot") {
            scalar = "\""
        } else if eq("apos") {
            scalar = "'"
        } else if n >= 2 && s[0] == UInt8(ascii: "#") {
            var value: UInt32 = 0
            var ok = true
            if s[1] == UInt8(ascii: "x") {
                ok = n >= 3
                for k in 2..<max(n, 2) {
                    let c = s[k] | 0x20
                    let d: UInt32
                    if c >= 48 && c <= 57 {
                        d = UInt32(c - 48)
                    } else if c >= 97 && c <= 102 {
                        d = UInt32(c - 87)
                    } else {
                        ok = false
                        break
                    }
                    // Past U+10FFFF it is invalid anyway: stop before the arithmetic can overflow.
                    value = min(value, 0x11_0000) * 16 + d
                }
            } else {
                for k in 1..<n {
                    let d = s[k] &- 48
                    if d > 9 {
                        ok = false
                        break
                    }
                    value = min(value, 0x11_0000) * 10 + UInt32(d)
                }
            }
            guard ok, let decoded = Unicode.Scalar(value),
                value == 0x9 || value == 0xA || value == 0xD || value >= 0x20,
                value != 0xFFFE && value != 0xFFFF
            else {
                throw error(.malformedXML, "invalid character reference", at: amp)
            }
            scalar = decoded
        } else {
            throw error(
                .malformedXML,
                "unknown entity reference (only &lt; &gt; &amp; &quot; &apos; and &#…; exist without a DTD)", at: amp)
        }
        return (scalar, semi + 1)
    }
}
