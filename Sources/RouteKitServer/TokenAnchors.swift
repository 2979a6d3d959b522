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
    ///
    /// The anchors an admin-wide webhook subscription delivers are sealed alike, for the person whose change set each
    /// delivery carries rather than for a token: `w1.`, the subscription's id, `.`, then the box, keyed by HKDF-SHA256
    /// from the subscription's random anchor key and the person's id. Any token of that person opens it (the server
    /// reads the key from the store), so a receiver of everyone's changes resumes a person's feed with a token of
    /// theirs; deleting the subscription voids it.
    enum TokenAnchors {
        static let prefix = "s1."
        /// The prefix of an anchor an admin-wide webhook subscription delivered.
        static let webhookPrefix = "w1."

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

        /// A new anchor key of an admin-wide webhook subscription (``text(_:webhook:person:keyText:)``), as text a
        /// store keeps: base64 of 32 random bytes.
        static func newWebhookKeyText() -> String {
            SymmetricKey(size: .bits256).withUnsafeBytes { Data($0).base64EncodedString() }
        }

        /// The anchor's text as admin-wide webhook subscription `id`, whose anchor key is `keyText`, delivers it in a
        /// change set of `person`'s.
        static func text(_ anchor: ChangeAnchor, webhook id: UUID, person: PersonID, keyText: String?) -> String {
            guard let key = webhookKey(keyText, person: person) else { return webhookPrefix }
            let sealed = seal(anchor, with: key)
            return webhookPrefix + id.lowercaseText + "." + String(sealed.dropFirst(prefix.count))
        }

        /// `anchor` as `subscription` delivers it: sealed for the person's tokens when it is a person's cursor of an
        /// admin-wide subscription, otherwise as the token that made it reads anchors (``text(_:keyText:)``).
        static func text(_ anchor: ChangeAnchor, deliveredBy subscription: WebhookSubscription) -> String {
            if let parent = subscription.parent, let person = subscription.person {
                return text(anchor, webhook: parent, person: person, keyText: subscription.anchorKey)
            }
            return text(anchor, keyText: subscription.anchorKey)
        }

        /// The admin-wide webhook subscription whose delivery `text` came in, when it is such an anchor.
        static func webhook(of text: String) -> UUID? {
            guard text.hasPrefix(webhookPrefix) else { return nil }
            return UUID(uuidString: String(text.dropFirst(webhookPrefix.count).prefix(36)))
        }

        /// The anchor an admin-wide webhook subscription, whose anchor key is `keyText` (`nil`: it is gone), delivered
        /// in a change set of `person`'s (``text(_:webhook:person:keyText:)``).
        /// - Throws: ``RouteKitError/Code/anchorMalformed`` when it is not one, or not one of `person`'s.
        static func anchor(_ text: String, person: PersonID, webhookKeyText keyText: String?) throws(RouteKitError)
            -> ChangeAnchor
        {
            let head = webhookPrefix.count + 37
            guard text.count < 400, text.count > head, let key = webhookKey(keyText, person: person) else {
                throw foreign
            }
            return try unsealed(String(text.dropFirst(head)), with: key)
        }

        /// The key of an admin-wide webhook subscription's anchors for `person`, from its anchor key's text.
        static func webhookKey(_ keyText: String?, person: PersonID) -> SymmetricKey? {
            guard let keyText, let bytes = Data(base64Encoded: keyText), bytes.count == 32 else { return nil }
            return HKDF<SHA256>.deriveKey(
                inputKeyMaterial: SymmetricKey(data: bytes),
                info: Array("routekit webhook anchor v1\n\(person)".utf8), outputByteCount: 32)
        }

        /// The anchor sealed in `box` (base64url text) with `key`.
        /// - Throws: ``RouteKitError/Code/anchorMalformed`` when `key` does not open it, or it holds no anchor.
        static func unsealed(_ box: String, with key: SymmetricKey) throws(RouteKitError) -> ChangeAnchor {
            guard let bytes = Base64URL.decode(box), let sealed = try? ChaChaPoly.SealedBox(combined: bytes),
                let plain = try? ChaChaPoly.open(sealed, using: key)
            else { throw foreign }
            return try ChangeAnchor(text: String(decoding: plain, as: UTF8.self))
        }

        /// The anchor `token` sent back.
        /// - Throws: ``RouteKitError/Code/anchorMalformed`` when it is not an anchor, or not one made for this token.
        static func anchor(_ text: String, for token: APIToken) throws(RouteKitError) -> ChangeAnchor {
            guard Self.seals(token) else {
                guard !text.hasPrefix(prefix) else { throw foreign }
                return try ChangeAnchor(text: text)
            }
            guard text.count < 400, text.hasPrefix(prefix) else { throw foreign }
            return try unsealed(String(text.dropFirst(prefix.count)), with: key(token))
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
