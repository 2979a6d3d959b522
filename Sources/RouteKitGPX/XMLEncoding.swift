import Foundation
internal import RouteKit

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#elseif canImport(Musl)
    import Musl
#endif

// Encodings, part of the input layer (``XMLInput``): what the first bytes say (a UTF-8 byte order mark is skipped;
// UTF-16 and undecompressed gzip are refused), what the XML declaration says (UTF-8 and ASCII as they are;
// ISO-8859-1, ISO-8859-15 and windows-1252 transcoded to UTF-8 as bytes arrive; anything else refused). What it
// hands on: UTF-8 in `XMLInput.bytes`, whatever the document's encoding, so no later layer knows about encodings.

extension XMLInput {
    /// BOM, UTF-16 and gzip detection at the very start. Returns false when more bytes are needed.
    mutating func detectStart(final: Bool) throws(RouteKitError) -> Bool {
        let b = bytes.base
        let n = bytes.count - pos
        if n < 4 && !final { return false }
        atStart = false
        if n >= 3 && b[pos] == 0xEF && b[pos + 1] == 0xBB && b[pos + 2] == 0xBF {
            pos += 3
            declarationOffset = fileOffset + pos
            lineStart = fileOffset + pos
            tokenLineStart = lineStart
        } else if n >= 2 && ((b[pos] == 0xFE && b[pos + 1] == 0xFF) || (b[pos] == 0xFF && b[pos + 1] == 0xFE)) {
            throw error(.unsupportedEncoding, "the file is UTF-16; RouteKit reads UTF-8 and ISO-8859-1", at: pos)
        } else if n >= 2 && ((b[pos] == 0 && b[pos + 1] == LT) || (b[pos] == LT && b[pos + 1] == 0)) {
            throw error(
                .unsupportedEncoding,
                "the file looks like UTF-16 without a byte order mark; RouteKit reads UTF-8 and ISO-8859-1", at: pos)
        } else if n >= 2 && b[pos] == 0x1F && b[pos + 1] == 0x8B {
            throw error(.malformedXML, "the data is gzip-compressed but was not decompressed", at: pos)
        }
        return true
    }

    /// Applies the XML declaration's `encoding`: UTF-8 and ASCII need nothing; a single-byte encoding switches
    /// the input to transcoding (what is already buffered after the declaration too); anything else is refused.
    mutating func applyDeclaration(_ decl: String) throws(RouteKitError) {
        guard let r = decl.range(of: "encoding") else { return }
        let rest = decl[r.upperBound...].drop(while: { $0 == " " || $0 == "=" || $0 == "\t" })
        guard let q = rest.first, q == "\"" || q == "'" else { return }
        let value = rest.dropFirst().prefix(while: { $0 != q }).lowercased()
        switch value {
        case "utf-8", "utf8", "us-ascii", "ascii":
            break
        case "iso-8859-1", "iso8859-1", "iso_8859-1", "latin1", "latin-1", "l1", "iso-8859-15", "iso8859-15",
            "latin-9", "windows-1252", "cp1252":
            upperHalf = singleByteTable(value)
            isTranscoding = true
            // Transcode what is already buffered after the declaration.
            let startOfRest = tokenStart  // the declaration itself is ASCII
            let tail = bytes.count - startOfRest
            let copy = UnsafeMutablePointer<UInt8>.allocate(capacity: max(tail, 1))
            copy.update(from: bytes.base + startOfRest, count: tail)
            bytes.count = startOfRest
            // `append` compacts; keep the declaration in place by appending after it.
            let savedPos = pos
            isTranscoding = true
            appendTranscoded(copy, tail)
            pos = savedPos
            copy.deallocate()
        case "utf-16", "utf16", "ucs-2":
            throw error(
                .unsupportedEncoding, "the file declares encoding '\(value)'; RouteKit reads UTF-8 and ISO-8859-1")
        default:
            throw error(
                .unsupportedEncoding,
                "the file declares encoding '\(value)', which RouteKit does not read (it reads UTF-8, ISO-8859-1, ISO-8859-15 and windows-1252)"
            )
        }
    }

    /// The code points of bytes 0x80-0xFF in windows-1252 and ISO-8859-15 (empty for ISO-8859-1).
    func singleByteTable(_ encoding: String) -> [UInt32] {
        var table = (0x80..<0x100).map { UInt32($0) }
        if encoding == "windows-1252" || encoding == "cp1252" {
            let high: [UInt32] = [
                0x20AC, 0xFFFD, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, 0x02C6, 0x2030, 0x0160, 0x2039, 0x0152,
                0xFFFD, 0x017D, 0xFFFD, 0xFFFD, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014, 0x02DC, 0x2122,
                0x0161, 0x203A, 0x0153, 0xFFFD, 0x017E, 0x0178,
            ]
            for (i, cp) in high.enumerated() { table[i] = cp }
            return table
        }
        if encoding.hasSuffix("15") || encoding == "latin-9" {
            for (byte, cp) in [
                (0xA4, 0x20AC), (0xA6, 0x0160), (0xA8, 0x0161), (0xB4, 0x017D), (0xB8, 0x017E), (0xBC, 0x0152),
                (0xBD, 0x0153), (0xBE, 0x0178),
            ] {
                table[byte - 0x80] = UInt32(cp)
            }
            return table
        }
        return []
    }

    /// Appends with transcoding but without compacting (used mid-parse).
    mutating func appendTranscoded(_ p: UnsafePointer<UInt8>, _ n: Int) {
        guard isTranscoding else {
            bytes.append(p, n)
            return
        }
        // A single-byte encoding: bytes 0x80-0xFF through the declared code page, to UTF-8.
        bytes.reserve(3 * n)
        var o = bytes.count
        let table = upperHalf
        for i in 0..<n {
            let c = p[i]
            if c < 0x80 {
                bytes.base[o] = c
                o += 1
                continue
            }
            let cp = table.isEmpty ? UInt32(c) : table[Int(c) - 0x80]
            if cp < 0x800 {
                bytes.base[o] = UInt8(0xC0 | (cp >> 6))
                bytes.base[o + 1] = UInt8(0x80 | (cp & 0x3F))
                o += 2
            } else {
                bytes.base[o] = UInt8(0xE0 | (cp >> 12))
                bytes.base[o + 1] = UInt8(0x80 | ((cp >> 6) & 0x3F))
                bytes.base[o + 2] = UInt8(0x80 | (cp & 0x3F))
                o += 3
            }
        }
        bytes.count = o
    }
}
