import Foundation

extension StoredRecord {
    /// A route body read without `JSONDecoder` when it has the shape ``body(of:)-(RouteSample)`` writes (sorted keys,
    /// no whitespace, times as `{"instant":{"nanoseconds":N,"seconds":S},"utcOffsetSeconds":O}`): the times are
    /// scanned by hand and only a non-empty metadata object goes through the decoder. Anything else (another
    /// shape, a number out of range) gives `nil`, and the caller decodes the whole body as before.
    ///
    /// Reading a page of the change feed decodes thousands of route bodies; `JSONDecoder` spent most of that time
    /// on the two timestamps.
    package static func scanRouteBody(_ text: String) -> (
        start: Timestamp?, end: Timestamp?, metadata: [String: MetadataValue]
    )? {
        var text = text
        return text.withUTF8 { bytes -> (Timestamp?, Timestamp?, [String: MetadataValue])? in
            var s = BodyScanner(bytes: bytes)
            guard s.literal("{") else { return nil }
            var start: Timestamp?
            var end: Timestamp?
            if s.literal("\"end\":") {
                guard let t = s.timestamp(), s.literal(",") else { return nil }
                end = t
            }
            guard s.literal("\"metadata\":") else { return nil }
            var metadata: [String: MetadataValue] = [:]
            if !s.literal("{}") {
                guard let object = s.object(),
                    let decoded = try? decoder.decode([String: MetadataValue].self, from: Data(object))
                else { return nil }
                metadata = decoded
            }
            if s.literal(",\"start\":") {
                guard let t = s.timestamp() else { return nil }
                start = t
            }
            guard s.literal("}"), s.atEnd else { return nil }
            return (start, end, metadata)
        }
    }
}

/// A cursor over JSON text of a known shape.
struct BodyScanner {
    let bytes: UnsafeBufferPointer<UInt8>
    var position = 0

    var atEnd: Bool { position == bytes.count }

    /// Consumes `text` if the input continues with it.
    mutating func literal(_ text: StaticString) -> Bool {
        let count = text.utf8CodeUnitCount
        guard bytes.count - position >= count else { return false }
        let expected = UnsafeBufferPointer(start: text.utf8Start, count: count)
        for i in 0..<count where bytes[position + i] != expected[i] { return false }
        position += count
        return true
    }

    /// A JSON integer that fits an `Int64` (no fraction, no exponent).
    mutating func integer() -> Int64? {
        var negative = false
        if position < bytes.count && bytes[position] == UInt8(ascii: "-") {
            negative = true
            position += 1
        }
        var value: Int64 = 0
        var digits = 0
        while position < bytes.count, bytes[position] >= UInt8(ascii: "0"), bytes[position] <= UInt8(ascii: "9") {
            let digit = Int64(bytes[position] - UInt8(ascii: "0"))
            let (times10, o1) = value.multipliedReportingOverflow(by: 10)
            let (next, o2) =
                negative ? times10.subtractingReportingOverflow(digit) : times10.addingReportingOverflow(digit)
            guard !o1 && !o2 else { return nil }
            value = next
            digits += 1
            position += 1
        }
        guard digits > 0 else { return nil }
        if position < bytes.count {
            let next = bytes[position]
            if next == UInt8(ascii: ".") || next == UInt8(ascii: "e") || next == UInt8(ascii: "E") { return nil }
        }
        return value
    }

    /// `{"instant":{"nanoseconds":N,"seconds":S}}`, with `"utcOffsetSeconds":O` after the instant when present.
    mutating func timestamp() -> Timestamp? {
        guard literal("{\"instant\":{\"nanoseconds\":"), let n = integer(), let nanoseconds = Int32(exactly: n),
            literal(",\"seconds\":"), let seconds = integer(), literal("}")
        else { return nil }
        var offset: Int32?
        if literal(",\"utcOffsetSeconds\":") {
            guard let o = integer(), let o32 = Int32(exactly: o) else { return nil }
            offset = o32
        }
        guard literal("}") else { return nil }
        return Timestamp(Instant(seconds: seconds, nanoseconds: nanoseconds), utcOffsetSeconds: offset)
    }

    /// The bytes of the JSON object starting here (strings and their escapes skipped), consumed.
    mutating func object() -> [UInt8]? {
        guard position < bytes.count, bytes[position] == UInt8(ascii: "{") else { return nil }
        let start = position
        var depth = 0
        var inString = false
        while position < bytes.count {
            let b = bytes[position]
            position += 1
            if inString {
                if b == UInt8(ascii: "\\") {
                    position += 1
                } else if b == UInt8(ascii: "\"") {
                    inString = false
                }
                continue
            }
            switch b {
            case UInt8(ascii: "\""): inString = true
            case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                depth -= 1
                if depth == 0 { return Array(bytes[start..<position]) }
            default: break
            }
        }
        return nil
    }
}
