/// PNG images made without any library, for tests that need map tiles: RGB, 8 bits a channel, the image data in
/// stored (uncompressed) deflate blocks. Any PNG reader (a browser, cairo) reads them.
public enum TestPNG {
    /// A `width` × `height` image: every pixel `pixel(x, y)`, an (r, g, b) triple.
    public static func image(width: Int, height: Int, pixel: (Int, Int) -> (UInt8, UInt8, UInt8)) -> [UInt8] {
        var raw: [UInt8] = []
        raw.reserveCapacity(height * (1 + 3 * width))
        for y in 0..<height {
            raw.append(0)  // filter: none
            for x in 0..<width {
                let (r, g, b) = pixel(x, y)
                raw.append(contentsOf: [r, g, b])
            }
        }
        var out: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        var header = bigEndian(UInt32(width)) + bigEndian(UInt32(height))
        header += [8, 2, 0, 0, 0]  // 8 bits, RGB, deflate, adaptive filtering, no interlace
        chunk("IHDR", header, into: &out)
        chunk("IDAT", zlibStored(raw), into: &out)
        chunk("IEND", [], into: &out)
        return out
    }

    /// A 256 × 256 tile of one colour with a darker one-pixel border (so tiles are told apart on a screenshot).
    public static func tile(red: UInt8, green: UInt8, blue: UInt8) -> [UInt8] {
        image(width: 256, height: 256) { x, y in
            x == 0 || y == 0 ? (red / 2, green / 2, blue / 2) : (red, green, blue)
        }
    }

    static func bigEndian(_ v: UInt32) -> [UInt8] {
        [UInt8(v >> 24 & 0xFF), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)]
    }

    static func chunk(_ type: String, _ data: [UInt8], into out: inout [UInt8]) {
        let typeBytes = Array(type.utf8)
        out += bigEndian(UInt32(data.count))
        out += typeBytes
        out += data
        out += bigEndian(crc32(typeBytes + data))
    }

    /// A zlib stream of stored blocks (at most 65,535 bytes each) with its Adler-32.
    static func zlibStored(_ data: [UInt8]) -> [UInt8] {
        var out: [UInt8] = [0x78, 0x01]
        var offset = 0
        repeat {
            let n = min(65_535, data.count - offset)
            let last: UInt8 = offset + n >= data.count ? 1 : 0
            out.append(last)
            out.append(UInt8(n & 0xFF))
            out.append(UInt8(n >> 8 & 0xFF))
            out.append(UInt8(~n & 0xFF))
            out.append(UInt8(~n >> 8 & 0xFF))
            out += data[offset..<(offset + n)]
            offset += n
        } while offset < data.count
        var a: UInt32 = 1
        var b: UInt32 = 0
        for byte in data {
            a = (a + UInt32(byte)) % 65_521
            b = (b + a) % 65_521
        }
        out += bigEndian(b << 16 | a)
        return out
    }

    static let crcTable: [UInt32] = (0..<256).map { n -> UInt32 in
        var c = UInt32(n)
        for _ in 0..<8 { c = c & 1 != 0 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
        return c
    }

    static func crc32(_ data: [UInt8]) -> UInt32 {
        var c: UInt32 = 0xFFFF_FFFF
        for byte in data { c = crcTable[Int((c ^ UInt32(byte)) & 0xFF)] ^ (c >> 8) }
        return c ^ 0xFFFF_FFFF
    }
}
