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
