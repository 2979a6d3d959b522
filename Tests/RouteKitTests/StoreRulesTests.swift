import Foundation
import RouteKit
import Testing

/// The rules every backend applies (the conformance suite checks the backends apply them; these check the rules).
@Suite("Store rules")
struct StoreRulesTests {
    let new = UUID()
    let old = UUID()

    @Test("a sync identity's save: inserted when free, replaced by a higher version, stale at the same or lower")
    func saveOutcome() {
        #expect(StoreRules.saveOutcome(saving: new, version: 1, current: nil) == .inserted(new))
        #expect(
            StoreRules.saveOutcome(saving: new, version: 3, current: (old, 2))
                == .replaced(new, previous: old, previousVersion: 2))
        #expect(StoreRules.saveOutcome(saving: new, version: 2, current: (old, 2)) == .stale(current: old, currentVersion: 2))
        #expect(StoreRules.saveOutcome(saving: new, version: 1, current: (old, 2)) == .stale(current: old, currentVersion: 2))
    }

    @Test("provenance: a derived version keeps the raw one it replaces; a new raw version drops what was kept")
    func provenance() throws {
        let workout = UUID()
        let raw = RouteSample(
            workoutID: workout, source: try Source(name: "watch"), sync: SyncIdentity(identifier: "r", version: 1),
            start: nil, end: nil, locationCount: 0)
        var derived = raw
        derived.metadata[MetadataKey.derivedFrom] = .string(UUID().uuidString)
        #expect(StoreRules.keepsReplaced(replacedWasRaw: true, replacement: derived))
        #expect(!StoreRules.keepsReplaced(replacedWasRaw: false, replacement: derived))
        #expect(!StoreRules.keepsReplaced(replacedWasRaw: true, replacement: raw))
        #expect(StoreRules.dropsKeptProvenance(replacement: raw))
        #expect(!StoreRules.dropsKeptProvenance(replacement: derived))
    }

    @Test("ownership: another source is refused with notOwner, naming both sources")
    func ownership() throws {
        let alice = try Source(name: "alice")
        try StoreRules.checkOwner("alice", of: "workout X", is: alice)
        #expect {
            try StoreRules.checkOwner("bob", of: "workout X", is: alice)
        } throws: { error in
            (error as? RouteKitError)?.code == .notOwner && "\(error)".contains("'bob'") && "\(error)".contains("'alice'")
        }
    }

    @Test("the next anchor: the head when nothing more is owed, else the set's end, keeping a first read's horizon")
    func nextAnchor() {
        #expect(StoreRules.nextAnchor(hasMore: false, end: 5, horizon: 9) == .head)
        #expect(
            StoreRules.nextAnchor(hasMore: true, end: 5, horizon: 9) == .at(position: 5, horizon: 9, tokenPosition: 9))
        #expect(
            StoreRules.nextAnchor(hasMore: true, end: 12, horizon: 9) == .at(position: 12, horizon: 0, tokenPosition: 12))
    }

    @Test("a change set: deletions before additions, additions in log order, a missing route a storage error")
    func assembly() throws {
        let d = DeletedRoute(id: old, source: try Source(name: "a"), workoutID: UUID(), sync: SyncIdentity(identifier: "s", version: 1))
        let (deleted, added) = StoreRules.split([.added("x"), .deletion(d), .added("y")])
        #expect(deleted == [d])
        #expect(added == ["x", "y"])
        let route = RouteSample(
            workoutID: UUID(), source: try Source(name: "a"), sync: SyncIdentity(identifier: "s", version: 2), start: nil,
            end: nil, locationCount: 0)
        #expect(try StoreRules.addedRoutes(["x"], found: ["x": route]) == [route])
        #expect {
            try StoreRules.addedRoutes(["x", "y"], found: ["x": route])
        } throws: { error in (error as? RouteKitError)?.code == .storage }
    }
}
