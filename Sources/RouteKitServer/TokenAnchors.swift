#if Server
    import Crypto
    import Foundation
    import RouteKit

    /// Anchors as a token sees them. A token that reads every source gets the store's anchor text
    /// (``ChangeAnchor/text``). A token limited to some sources (`--read-source`), or to some types of object, gets it
    /// sealed: `s1.` + base64url of the anchor's text encrypted and authenticated with ChaCha20-Poly1305, keyed by
    /// HKDF-SHA256 from the token's stored secret hash, under a fresh random nonce each time. The store's anchor
    /// counts every commit of every source; sealed, it says nothing (not even whether it moved) to a token that may
    /// not see those commits, and it is good only for the token it was made for. Any server sharing the store opens it
    /// (the key comes from the store's record of the token), and revoking the token voids it with the token.
    enum TokenAnchors {
        static let prefix = "s1."

        /// The anchor's text for `token`.
        static func text(_ anchor: ChangeAnchor, for token: APIToken) -> String {
            guard Self.seals(token) else { return anchor.text }
            return seal(anchor, with: key(token))
        }

        /// The anchor's text sealed with `key`.
        static func seal(_ anchor: ChangeAnchor, with key: SymmetricKey) -> String {
            // Sealing fails only for a nonce it cannot make; the plain text is never handed out instead.
            guard let box = try? ChaChaPoly.seal(Array(anchor.text.utf8), using: key) else { return prefix }
            return prefix + Base64URL.encode(box.combined)
        }

        /// The key that seals `token`'s anchors, as text a store keeps (base64), `nil` when its anchors are plain: a
        /// webhook subscription delivers anchors as the token that made it reads them (``text(_:keyText:)``).
        static func keyText(for token: APIToken) -> String? {
            guard Self.seals(token) else { return nil }
            return key(token).withUnsafeBytes { Data($0).base64EncodedString() }
        }

        /// The anchor's text sealed with the key of `keyText` (``keyText(for:)``); the store's text when `nil`.
        static func text(_ anchor: ChangeAnchor, keyText: String?) -> String {
            guard let keyText else { return anchor.text }
            guard let bytes = Data(base64Encoded: keyText), bytes.count == 32 else { return prefix }
            return seal(anchor, with: SymmetricKey(data: bytes))
        }

        /// The anchor `token` sent back.
        /// - Throws: ``RouteKitError/Code/anchorMalformed`` when it is not an anchor, or not one made for this token.
        static func anchor(_ text: String, for token: APIToken) throws(RouteKitError) -> ChangeAnchor {
            guard Self.seals(token) else {
                guard !text.hasPrefix(prefix) else { throw foreign }
                return try ChangeAnchor(text: text)
            }
            guard text.count < 400, text.hasPrefix(prefix), let bytes = Base64URL.decode(text.dropFirst(prefix.count)),
                let box = try? ChaChaPoly.SealedBox(combined: bytes),
                let plain = try? ChaChaPoly.open(box, using: key(token))
            else { throw foreign }
            return try ChangeAnchor(text: String(decoding: plain, as: UTF8.self))
        }

        /// Whether `token`'s anchors are sealed: those of a token limited to some sources or narrowed to some types of
        /// object (it may not count the commits of what it may not read), and of every person but the default one (a
        /// store's positions count everyone's commits; a person learns nothing of the others' from theirs). The
        /// default person's tokens that read everything, made before people existed, keep plain anchors.
        static func seals(_ token: APIToken) -> Bool {
            token.readableSources != nil || token.person != .default || !token.grant.readsEverything
        }

        static let foreign = RouteKitError(
            .anchorMalformed, "the anchor was not made for this token; start again without an anchor")

        static func key(_ token: APIToken) -> SymmetricKey {
            HKDF<SHA256>.deriveKey(
                inputKeyMaterial: SymmetricKey(data: Array(token.secretHash.utf8)),
                info: Array("routekit change anchor v1".utf8), outputByteCount: 32)
        }
    }
#endif
