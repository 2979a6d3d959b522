import Foundation
public import RouteKit

/// What every ``TokenStore`` must do, run against each backend.
public enum TokenStoreConformance {
    /// Saves, reads back, lists, touches and revokes tokens; a second save of one id is refused.
    /// - Throws: ``ConformanceFailure`` naming what differed.
    public static func run(_ store: any TokenStore) async throws {
        func check(_ ok: Bool, _ what: String) throws {
            if !ok { throw ConformanceFailure(description: "token store: \(what)") }
        }
        let created = Date(timeIntervalSince1970: 1_700_000_000)
        let a = APIToken(
            id: UUID(), name: "phone", source: try Source(name: "phone"), scopes: [.read, .write],
            secretHash: String(repeating: "ab", count: 32), created: created)
        let b = APIToken(
            id: UUID(), name: "viewer", source: try Source(name: "viewer"),
            scopes: [.reading(.workouts), .reading(.routes), .reading(.quantity(.power)), .writing(.effort)],
            readableSources: [try Source(name: "phone"), try Source(name: "watch")],
            secretHash: String(repeating: "cd", count: 32), created: created.addingTimeInterval(1),
            expires: created.addingTimeInterval(86_400))
        try check(try await store.tokens().isEmpty, "a new store has no tokens")
        try await store.saveToken(a)
        try await store.saveToken(b)
        try check(try await store.token(id: a.id) == a, "a token reads back as saved")
        try check(
            try await store.token(id: b.id) == b,
            "readable sources, expiry and scopes narrowed to some types read back")
        try check(try await store.token(id: UUID()) == nil, "an unknown id is nil")
        try check(try await store.tokens().map(\.id) == [a.id, b.id], "tokens are listed oldest first")
        do {
            try await store.saveToken(a)
            try check(false, "saving a token id twice is refused")
        } catch let error as RouteKitError {
            try check(error.code == .invalidArgument, "saving a token id twice is an invalidArgument error")
        }
        let used = created.addingTimeInterval(100)
        try await store.touchToken(id: a.id, at: used)
        try check(try await store.token(id: a.id)?.lastUsed == used, "touching records the last use")
        let revokedAt = created.addingTimeInterval(200)
        try check(try await store.revokeToken(id: a.id, at: revokedAt), "revoking a token says it existed")
        try check(
            try await store.revokeToken(id: a.id, at: revokedAt.addingTimeInterval(5)), "revoking twice still finds it")
        let revoked = try await store.token(id: a.id)
        try check(revoked?.revoked == revokedAt, "revoking twice keeps the first date")
        try check(revoked?.isActive(at: revokedAt) == false, "a revoked token is not active")
        try check(try await store.revokeToken(id: UUID(), at: revokedAt) == false, "revoking an unknown id is false")
        try check(b.isActive(at: created) && !b.isActive(at: created.addingTimeInterval(86_401)), "expiry")
        // Single-use tickets: a second use is refused until the record expires; expired records are removed.
        let key = String(repeating: "ef", count: 32)
        let t0 = created
        try check(
            try await store.redeemTicket(key: key, expires: t0.addingTimeInterval(60), now: t0),
            "a ticket's first use is accepted")
        try check(
            try await store.redeemTicket(key: key, expires: t0.addingTimeInterval(60), now: t0.addingTimeInterval(1))
                == false, "a ticket's second use is refused")
        try check(
            try await store.redeemTicket(key: "other", expires: t0.addingTimeInterval(60), now: t0),
            "another ticket is accepted")
        try check(
            try await store.redeemTicket(key: key, expires: t0.addingTimeInterval(200), now: t0.addingTimeInterval(61)),
            "a record past its expiry is removed (its ticket would be refused as expired anyway)")
    }
}
