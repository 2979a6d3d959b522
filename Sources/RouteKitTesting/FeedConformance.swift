import Foundation
import RouteKit

/// The change-feed part of the conformance suite: the rules of the article "The change feed and anchors"
/// (Sources/RouteKit/Documentation.docc/TailingChanges.md).
public enum FeedConformance {
    /// Every feed check.
    public static let checks: [ConformanceCheck] = [
        ConformanceCheck(name: "feed: no anchor lists every current route, no deletions", run: noAnchor),
        ConformanceCheck(name: "feed: a replacement is a deletion and an addition in one change set", run: replacement),
        ConformanceCheck(
            name: "feed: deleting a workout shows as its routes' deletions, never split", run: workoutDeletion),
        ConformanceCheck(name: "feed: predicates apply to deletions too", run: predicates),
        ConformanceCheck(name: "feed: each anchor error has its own code", run: anchorErrors),
        ConformanceCheck(
            name: "feed: workouts (with or without a route), effort scores and series, added and deleted",
            run: objects),
        ConformanceCheck(
            name: "feed: a consumer of every type holds exactly the current workouts, scores and series",
            run: objectModel),
        ConformanceCheck(
            name: "feed: a consumer applying random histories holds exactly the current routes", run: model),
        ConformanceCheck(name: "feed: live updates deliver the catch-up, then each commit", run: liveUpdates),
        ConformanceCheck(
            name: "feed: a follower reads only when asked, however many changes commit meanwhile",
            run: followerReadsOnlyWhenAsked),
        ConformanceCheck(
            name: "feed: cancelling a follower, or dropping it, ends it and closes its commit waiter",
            run: followerCancellation),
    ]

    static func expect(
        _ condition: Bool, _ message: @autoclosure () -> String, file: String = #fileID, line: Int = #line
    ) throws {
        try StoreConformance.expect(condition, message(), file: file, line: line)
    }
    static var alice: Source { StoreConformance.alice }
    static var bob: Source { StoreConformance.bob }

    static func route(
        _ store: any RouteStore, _ workout: Workout, _ id: String, _ version: Int64, count: Int = 5,
        start: Int64 = 1_700_000_000
    ) async throws -> RouteFinish {
        try await StoreConformance.build(
            store, workout, [StoreConformance.locations(count: count, start: start)],
            metadata: StoreConformance.sync(id, version))
    }

    /// Pages until `hasMore` is false.
    static func drain(
        _ store: any RouteStore, from anchor: ChangeAnchor?, _ predicate: ChangePredicate = .all, limit: Int = 1000
    ) async throws -> (sets: [ChangeSet], anchor: ChangeAnchor) {
        var sets: [ChangeSet] = []
        var a = anchor
        while true {
            let set = try await store.changes(since: a, matching: predicate, limit: limit)
            sets.append(set)
            a = set.anchor
            if !set.hasMore { return (sets, set.anchor) }
            try expect(sets.count < 100_000, "paging ends")
        }
    }

    static func noAnchor(_ store: any RouteStore) async throws {
        let empty = try await store.changes(since: nil, matching: .all, limit: 10)
        try expect(empty.added.isEmpty && empty.deleted.isEmpty && !empty.hasMore, "an empty store has no changes")
        let w = try await StoreConformance.saved(store, alice)
        let r1 = try await route(store, w, "a", 1)
        let r2 = try await route(store, w, "b", 1)
        try await store.deleteRoute(id: r1.route.id, as: alice)
        let r3 = try await route(store, w, "c", 1)
        let all = try await drain(store, from: nil, limit: 1)
        try expect(all.sets.allSatisfy { $0.deleted.isEmpty }, "no deletions without an anchor")
        let ids = all.sets.flatMap(\.added).map(\.id)
        try expect(ids == [r2.route.id, r3.route.id], "every current route once, in commit order: \(ids)")
        try expect(all.sets.flatMap(\.added).first == r2.route, "added routes are the stored samples")
        let after = try await store.changes(since: all.anchor, matching: .all, limit: 10)
        try expect(after.added.isEmpty && after.deleted.isEmpty && !after.hasMore, "nothing after the last anchor")
        try expect(after.anchor == all.anchor, "and the anchor stays")
        try expect(try await store.currentAnchor() == all.anchor, "the current anchor is the newest")
    }

    static func replacement(_ store: any RouteStore) async throws {
        let w = try await StoreConformance.saved(store, alice)
        let v1 = try await route(store, w, "r", 1)
        let anchor = try await store.currentAnchor()
        let v2 = try await route(store, w, "r", 2)
        let set = try await store.changes(since: anchor, matching: .all, limit: 1)
        try expect(set.deleted.map(\.id) == [v1.route.id], "the old version is deleted: \(set.deleted)")
        try expect(set.added.map(\.id) == [v2.route.id], "and the new one added, in the same set despite limit 1")
        try expect(
            set.deleted.first
                == DeletedRoute(
                    id: v1.route.id, source: alice, workoutID: w.id, sync: SyncIdentity(identifier: "r", version: 1)),
            "a deletion carries uuid, source, workout and sync identity")
        try expect(!set.hasMore, "nothing more")
        // A stale save changes nothing.
        _ = try await route(store, w, "r", 2)
        let none = try await store.changes(since: set.anchor, matching: .all, limit: 10)
        try expect(none.added.isEmpty && none.deleted.isEmpty, "a stale save is not a change")
    }

    static func workoutDeletion(_ store: any RouteStore) async throws {
        let w = try await StoreConformance.saved(store, alice)
        var routes: [UUID] = []
        for i in 0..<3 { routes.append(try await route(store, w, "w\(i)", 1).route.id) }
        let other = try await StoreConformance.saved(store, alice)
        let kept = try await route(store, other, "k", 1)
        let anchor = try await store.currentAnchor()
        try await store.deleteWorkout(id: w.id, as: alice)
        let set = try await store.changes(since: anchor, matching: .all, limit: 1)
        try expect(Set(set.deleted.map(\.id)) == Set(routes), "the workout's three routes, in one set despite limit 1")
        try expect(set.added.isEmpty && !set.hasMore, "and nothing else")
        let current = try await drain(store, from: nil)
        try expect(current.sets.flatMap(\.added).map(\.id) == [kept.route.id], "the other workout's route remains")
        // With a later commit owed too: the whole transaction, then more.
        let later = try await route(store, other, "l", 1)
        let first = try await store.changes(since: anchor, matching: .all, limit: 1)
        try expect(Set(first.deleted.map(\.id)) == Set(routes), "the deletion whole again: \(first.deleted)")
        try expect(first.added.isEmpty && first.hasMore, "and more owed after it")
        let next = try await store.changes(since: first.anchor, matching: .all, limit: 1)
        try expect(next.added.map(\.id) == [later.route.id] && next.deleted.isEmpty, "then the later route")
        let head = try await store.currentAnchor()
        try expect(!next.hasMore && next.anchor == head, "and the head")
    }

    static func predicates(_ store: any RouteStore) async throws {
        let wa = try await StoreConformance.saved(store, alice)
        let wb = try await StoreConformance.saved(store, bob)
        let anchor = try await store.currentAnchor()
        let a1 = try await route(store, wa, "x", 1, start: 1_000)
        let b1 = try await route(store, wb, "x", 1, start: 5_000)
        try await store.deleteRoute(id: a1.route.id, as: alice)
        try await store.deleteRoute(id: b1.route.id, as: bob)
        let byWorkout = try await drain(store, from: anchor, ChangePredicate(workout: wa.id))
        try expect(byWorkout.sets.flatMap(\.deleted).map(\.id) == [a1.route.id], "by workout, deletions too")
        let bySource = try await drain(store, from: anchor, ChangePredicate(source: bob))
        try expect(bySource.sets.flatMap(\.deleted).map(\.id) == [b1.route.id], "by source")
        try expect(bySource.sets.flatMap(\.added).isEmpty, "a route added then deleted is not re-added")
        let byID = try await drain(store, from: anchor, ChangePredicate(syncIdentifier: "x"))
        try expect(byID.sets.flatMap(\.deleted).count == 2, "by sync identifier")
        let byTime = try await drain(
            store, from: anchor, ChangePredicate(interval: Instant(seconds: 4_000)...Instant(seconds: 6_000)))
        try expect(byTime.sets.flatMap(\.deleted).map(\.id) == [b1.route.id], "by date range")
        let none = try await drain(store, from: nil, ChangePredicate(source: alice))
        try expect(none.sets.flatMap(\.added).isEmpty, "nothing current for alice")
    }

    static let everything = ChangePredicate(types: Set(ChangeObjectType.allCases))

    static func samples(_ count: Int, from start: Int64 = 1_700_000_000) -> [QuantitySample] {
        (0..<count).map { QuantitySample(timestamp: Timestamp(Instant(seconds: start + Int64($0))), value: 120.5) }
    }

    static func objects(_ store: any RouteStore) async throws {
        let before = try await store.currentAnchor()
        // A workout without a route (a treadmill run) with an effort score; one with a route and a series.
        let indoor = try await StoreConformance.saved(store, alice)
        let score = try EffortScore(
            workoutID: indoor.id, source: alice, score: 6.5, isManual: true,
            created: Date(timeIntervalSince1970: 1_700_000_000))
        try await store.relateEffort(score)
        let outdoor = try await StoreConformance.saved(store, alice)
        let r = try await route(store, outdoor, "o", 1)
        try await store.saveSeries(
            QuantitySeries(type: .heartRate, samples: samples(30)), workout: outdoor.id, as: alice)

        let routesOnly = try await drain(store, from: nil)
        try expect(
            routesOnly.sets.allSatisfy { $0.addedObjects.isEmpty && $0.deletedObjects.isEmpty },
            "a route consumer (the default predicate) gets routes only")
        let all = try await drain(store, from: nil, everything, limit: 1)
        let added = all.sets.flatMap(\.addedObjects)
        try expect(all.sets.allSatisfy { $0.deletedObjects.isEmpty }, "no deletions without an anchor")
        try expect(all.sets.flatMap(\.added).map(\.id) == [r.route.id], "the route is in added")
        let keys = added.map(\.key)
        let expected = [
            ChangeObjectKey(type: .workout, id: indoor.id, quantityType: nil),
            ChangeObjectKey(type: .effort, id: score.id, quantityType: nil),
            ChangeObjectKey(type: .workout, id: outdoor.id, quantityType: nil),
            ChangeObjectKey(type: .series, id: outdoor.id, quantityType: .heartRate),
        ]
        try expect(keys == expected, "every current object once, in commit order: \(keys)")
        try expect(added.first == .workout(indoor), "a workout without a route is carried whole")
        try expect(added.contains(.effort(score)), "the effort score is carried whole")
        guard case .series(let hr)? = added.last else { throw ConformanceFailure(description: "the series is last") }
        try expect(
            hr.count == 30 && hr.source == alice && hr.start == Instant(seconds: 1_700_000_000)
                && hr.end == Instant(seconds: 1_700_000_029),
            "a series carries its count and time range: \(hr)")

        // From an anchor: the series grows (added again, no deletion), the score goes, the workout goes.
        let anchor = all.anchor
        try await store.saveSeries(
            QuantitySeries(type: .heartRate, samples: samples(10, from: 1_700_000_100)), workout: outdoor.id, as: alice)
        let grown = try await store.changes(since: anchor, matching: everything, limit: 10)
        guard case .series(let more)? = grown.addedObjects.first, grown.addedObjects.count == 1 else {
            throw ConformanceFailure(description: "a series that grows is added again: \(grown.addedObjects)")
        }
        try expect(more.count == 40 && grown.deletedObjects.isEmpty, "with its new count, not deleted: \(more)")
        try await store.unrelateEffort(id: score.id, as: alice)
        let unrelated = try await store.changes(since: grown.anchor, matching: everything, limit: 10)
        try expect(
            unrelated.deletedObjects
                == [
                    DeletedObject(
                        key: ChangeObjectKey(type: .effort, id: score.id, quantityType: nil), workoutID: indoor.id,
                        source: alice, sync: nil)
                ] && unrelated.addedObjects.isEmpty,
            "an unrelated score is deleted: \(unrelated.deletedObjects)")
        try await store.deleteWorkout(id: outdoor.id, as: alice)
        let gone = try await store.changes(since: unrelated.anchor, matching: everything, limit: 1)
        try expect(gone.deleted.map(\.id) == [r.route.id], "the workout's route is deleted")
        try expect(
            gone.deletedObjects.map(\.key)
                == [
                    ChangeObjectKey(type: .series, id: outdoor.id, quantityType: .heartRate),
                    ChangeObjectKey(type: .workout, id: outdoor.id, quantityType: nil),
                ],
            "then its series and the workout, in one set despite limit 1: \(gone.deletedObjects.map(\.key))")

        // Predicates: types, workout, source, sync identifier.
        let efforts = try await drain(store, from: before, ChangePredicate(types: [.effort]))
        try expect(
            efforts.sets.allSatisfy { $0.added.isEmpty && $0.deleted.isEmpty }
                && efforts.sets.flatMap(\.deletedObjects).map(\.key.type) == [.effort]
                && efforts.sets.flatMap(\.addedObjects).isEmpty,
            "types: effort scores only (added then deleted: only the deletion is owed)")
        let byWorkout = try await drain(store, from: before, ChangePredicate(types: [.workout], workout: indoor.id))
        try expect(
            byWorkout.sets.flatMap(\.addedObjects).map(\.key.id) == [indoor.id],
            "workout: only that workout")
        let bob = try await drain(store, from: before, ChangePredicate(types: [.workout, .series], source: bob))
        try expect(bob.sets.allSatisfy { $0.count == 0 }, "source: nothing of alice's for bob")

        // A workout replaced by a newer version: the old one deleted, the new one added, in one set.
        let v1 = try await StoreConformance.saved(store, alice, sync: SyncIdentity(identifier: "w", version: 1))
        let mark = try await store.currentAnchor()
        let v2 = StoreConformance.workout(alice, sync: SyncIdentity(identifier: "w", version: 2))
        _ = try await store.saveWorkout(v2)
        let replaced = try await store.changes(since: mark, matching: everything, limit: 1)
        try expect(
            replaced.deletedObjects.map(\.key.id) == [v1.id] && replaced.addedObjects == [.workout(v2)],
            "a replaced workout: the old deleted, the new added")
        try expect(
            replaced.deletedObjects.first?.sync == SyncIdentity(identifier: "w", version: 1),
            "the deletion carries the old sync identity")
        let bySync = try await drain(store, from: before, ChangePredicate(types: [.workout], syncIdentifier: "w"))
        try expect(
            bySync.sets.flatMap(\.addedObjects).map(\.key.id) == [v2.id],
            "sync identifier: the current version only")
    }

    /// A consumer of every type applying change sets: deletions first, then additions (an object added again
    /// replaces the held copy).
    struct ObjectConsumer {
        var held: [ChangeObjectKey: ChangedObject] = [:]
        var anchor: ChangeAnchor?

        mutating func catchUp(_ store: any RouteStore, limit: Int) async throws {
            for set in try await FeedConformance.drain(store, from: anchor, everything, limit: limit).sets {
                for d in set.deletedObjects { held[d.key] = nil }
                for o in set.addedObjects { held[o.key] = o }
                anchor = set.anchor
            }
        }
    }

    /// Random histories of workouts, scores and series: a consumer that follows along, one that joins halfway and
    /// one that starts at the end each hold exactly what the store holds.
    static func objectModel(_ store: any RouteStore) async throws {
        var rng = SplitMix64(seed: 27)
        var workouts: [Workout] = []
        var scores: [EffortScore] = []
        var follower = ObjectConsumer()
        var late = ObjectConsumer()
        for step in 0..<60 {
            switch rng.next() % 6 {
            case 0, 1:
                workouts.append(try await StoreConformance.saved(store, alice))
            case 2 where !workouts.isEmpty:
                let w = workouts[Int(rng.next() % UInt64(workouts.count))]
                let type: QuantityType = rng.next() % 2 == 0 ? .heartRate : .power
                try await store.saveSeries(
                    QuantitySeries(type: type, samples: samples(3, from: Int64(step) * 10)), workout: w.id, as: alice)
            case 3 where !workouts.isEmpty:
                let w = workouts[Int(rng.next() % UInt64(workouts.count))]
                let s = try EffortScore(
                    workoutID: w.id, source: alice, score: 5, isManual: false,
                    created: Date(timeIntervalSince1970: 1_700_000_000 + Double(step)))
                try await store.relateEffort(s)
                scores.append(s)
            case 4 where !scores.isEmpty:
                let s = scores.remove(at: Int(rng.next() % UInt64(scores.count)))
                try await store.unrelateEffort(id: s.id, as: alice)
            case 5 where !workouts.isEmpty:
                let w = workouts.remove(at: Int(rng.next() % UInt64(workouts.count)))
                try await store.deleteWorkout(id: w.id, as: alice)
                scores.removeAll { $0.workoutID == w.id }
            default:
                break
            }
            if step % 5 == 0 { try await follower.catchUp(store, limit: 2) }
            if step == 30 { try await late.catchUp(store, limit: 4) }
        }
        var truth: [ChangeObjectKey: ChangedObject] = [:]
        for w in workouts {
            truth[ChangeObjectKey(type: .workout, id: w.id, quantityType: nil)] = .workout(w)
            for t in try await store.seriesTypes(ofWorkout: w.id) {
                var count = 0
                for try await batch in store.samples(of: t, workout: w.id) { count += batch.samples.count }
                try expect(count > 0, "a listed series has samples")
                truth[ChangeObjectKey(type: .series, id: w.id, quantityType: t)] = .series(
                    SeriesSummary(workoutID: w.id, source: alice, type: t, count: count, start: nil, end: nil))
            }
        }
        for s in scores { truth[ChangeObjectKey(type: .effort, id: s.id, quantityType: nil)] = .effort(s) }
        var fresh = ObjectConsumer()
        try await fresh.catchUp(store, limit: 3)
        try await follower.catchUp(store, limit: 2)
        try await late.catchUp(store, limit: 4)
        for (name, consumer) in [("from no anchor", fresh), ("following", follower), ("joining halfway", late)] {
            try expect(Set(consumer.held.keys) == Set(truth.keys), "\(name): exactly the current objects")
            for (key, object) in consumer.held {
                switch (object, truth[key]) {
                case (.series(let got), .series(let want)?):
                    try expect(got.count == want.count, "\(name): series \(key) has its current count")
                default:
                    try expect(object == truth[key], "\(name): \(key) is the stored object")
                }
            }
        }
    }

    static func anchorErrors(_ store: any RouteStore) async throws {
        let w = try await StoreConformance.saved(store, alice)
        let r = try await route(store, w, "e", 1)
        let good = try await store.currentAnchor()
        _ = try await StoreConformance.expectError(.anchorMalformed) { try ChangeAnchor(text: "not-an-anchor") }
        _ = try await StoreConformance.expectError(.anchorMalformed) { try ChangeAnchor(text: "1.AAAA") }
        let roundTrip = try ChangeAnchor(text: good.text)
        try expect(roundTrip == good, "an anchor's text reads back")
        try expect(good.text.allSatisfy { $0.isLetter || $0.isNumber || "-_.".contains($0) }, "URL-safe text")
        var foreign = good
        foreign.storeID = UUID()
        _ = try await StoreConformance.expectError(.anchorForeign) {
            try await store.changes(since: foreign, matching: .all, limit: 10)
        }
        var epoch = good
        epoch.epoch &+= 1
        _ = try await StoreConformance.expectError(.anchorForeign) {
            try await store.changes(since: epoch, matching: .all, limit: 10)
        }
        var ahead = good
        ahead.position += 1000
        _ = try await StoreConformance.expectError(.anchorAhead) {
            try await store.changes(since: ahead, matching: .all, limit: 10)
        }
        var otherHistory = good
        otherHistory.token &+= 1
        _ = try await StoreConformance.expectError(.anchorAhead) {
            try await store.changes(since: otherHistory, matching: .all, limit: 10)
        }
        // Compaction: an anchor from before a dropped deletion expires; one from after it still works.
        let before = try await store.currentAnchor()
        try await store.deleteRoute(id: r.route.id, as: alice)
        let after = try await store.currentAnchor()
        let dropped = try await store.compactChanges(before: Date().addingTimeInterval(60))
        try expect(dropped >= 1, "the deletion was dropped")
        let e = try await StoreConformance.expectError(.anchorExpired) {
            try await store.changes(since: before, matching: .all, limit: 10)
        }
        try expect(e.message.contains("without an anchor"), "the message tells the consumer what to do")
        let fine = try await store.changes(since: after, matching: .all, limit: 10)
        try expect(fine.deleted.isEmpty && fine.added.isEmpty, "an anchor after the compacted deletion still works")
    }

    /// The model-based property test: random interleavings of saves, replacements, stale saves, deletions,
    /// compactions and paged reads; a consumer applying each change set always ends holding exactly the
    /// store's current routes, and never two versions of one sync identity.
    static func model(_ store: any RouteStore) async throws {
        var rng = SplitMix64(seed: 20_261_121)
        let sources = [alice, bob]
        var workouts: [Source: [Workout]] = [:]
        for s in sources {
            for _ in 0..<3 { workouts[s, default: []].append(try await StoreConformance.saved(store, s)) }
        }
        var versions: [String: Int64] = [:]
        var consumer: [UUID: RouteSample] = [:]
        var anchor: ChangeAnchor?
        var resyncs = 0
        var log: [String] = []
        func consume(limit: Int) async throws {
            while true {
                let result: Result<ChangeSet, RouteKitError>
                do {
                    result = .success(try await store.changes(since: anchor, matching: .all, limit: limit))
                } catch {
                    result = .failure(error)
                }
                let set: ChangeSet
                switch result {
                case .success(let s): set = s
                case .failure(let e) where e.code == .anchorExpired:
                    // The documented recovery: start again from no anchor.
                    consumer = [:]
                    anchor = nil
                    resyncs += 1
                    continue
                case .failure(let e): throw e
                }
                for d in set.deleted { consumer[d.id] = nil }
                for a in set.added { consumer[a.id] = a }
                // Never two current versions of one identity, after any change set.
                let identities = consumer.values.map { "\($0.source.name)/\($0.sync.identifier)" }
                try expect(Set(identities).count == identities.count, "two versions of one sync identity")
                anchor = set.anchor
                if !set.hasMore {
                    // Caught up: exactly the current routes.
                    let truth = try await store.routes(matching: RouteFilter())
                    try expect(
                        Set(consumer.keys) == Set(truth.map(\.id)),
                        "after catching up, the consumer holds \(consumer.count) routes, the store \(truth.count) "
                            + "(last set: \(set.deleted.count) deleted, \(set.added.count) added, limit \(limit), "
                            + "resyncs \(resyncs), log \(log))")
                    return
                }
            }
        }
        for step in 0..<160 {
            let source = sources[Int.random(in: 0..<2, using: &rng)]
            let op = Int.random(in: 0..<100, using: &rng)
            let current = try await store.routes(matching: RouteFilter(source: source))
            log.append("\(op)")
            if log.count > 12 { log.removeFirst() }
            switch op {
            case 0..<40:  // save a new route or a newer version of an existing identity
                let id = "id\(Int.random(in: 0..<8, using: &rng))"
                let key = "\(source.name)/\(id)"
                let v = (versions[key] ?? 0) + 1
                versions[key] = v
                let ws = workouts[source] ?? []
                let w = ws[Int.random(in: 0..<ws.count, using: &rng)]
                _ = try await route(store, w, id, v, count: 3, start: Int64(step) * 100)
            case 40..<50:  // a stale save
                if let r = current.randomElement(using: &rng) {
                    let w = try await store.workout(id: r.workoutID)
                    if let w { _ = try await route(store, w, r.sync.identifier, r.sync.version, count: 2) }
                }
            case 50..<65:
                if let r = current.randomElement(using: &rng) { try await store.deleteRoute(id: r.id, as: source) }
            case 65..<70:  // delete a workout (its routes go), then give the source a fresh one
                var ws = workouts[source] ?? []
                if ws.count > 1 {
                    let w = ws.remove(at: Int.random(in: 0..<ws.count, using: &rng))
                    try await store.deleteWorkout(id: w.id, as: source)
                    ws.append(try await StoreConformance.saved(store, source))
                    workouts[source] = ws
                }
            case 70..<74:
                _ = try await store.compactChanges(before: Date().addingTimeInterval(60))
            default:
                try await consume(limit: Int.random(in: 1...4, using: &rng))
            }
        }
        try await consume(limit: 3)
        let truth = try await store.routes(matching: RouteFilter())
        let missing = Set(truth.map(\.id)).subtracting(consumer.keys)
        let extra = Set(consumer.keys).subtracting(truth.map(\.id))
        try expect(
            missing.isEmpty && extra.isEmpty,
            "the consumer holds exactly the current routes (\(consumer.count) vs \(truth.count)); missing "
                + "\(truth.filter { missing.contains($0.id) }.map { "\($0.source)/\($0.sync.identifier)v\($0.sync.version)" }), "
                + "extra \(extra.count), resyncs \(resyncs)")
        for r in truth { try expect(consumer[r.id] == r, "and the same samples") }
        try expect(resyncs >= 1, "the run exercised an expired anchor")
    }

    static func liveUpdates(_ store: any RouteStore) async throws {
        let w = try await StoreConformance.saved(store, alice)
        let first = try await route(store, w, "live", 1)
        var iterator = store.changeUpdates(since: nil).makeAsyncIterator()
        let catchUp = try await iterator.next()
        try expect(catchUp?.added.map(\.id) == [first.route.id], "the catch-up comes first")
        let second = try await route(store, w, "live", 2)
        let update = try await iterator.next()
        try expect(update?.deleted.map(\.id) == [first.route.id], "then the replacement: deletion")
        try expect(update?.added.map(\.id) == [second.route.id], "and addition")
    }

    /// A slow consumer holds at most one change set: while it does not ask, nothing is read or buffered, however
    /// many changes commit; when it asks again, it gets them all, in sets of at most `limit`, none missing or
    /// repeated.
    static func followerReadsOnlyWhenAsked(_ store: any RouteStore) async throws {
        let counted = FaultInjectingStore(store)
        let w = try await StoreConformance.saved(store, alice)
        _ = try await route(store, w, "slow-0", 1)
        var iterator = counted.changeUpdates(since: nil, limit: 50).makeAsyncIterator()
        let catchUp = try await iterator.next()
        try expect(catchUp?.added.count == 1, "the catch-up holds the one route")
        let readsBefore = counted.changeReadCount
        let commits = 300
        var expected: Set<UUID> = []
        for i in 1...commits { expected.insert(try await route(store, w, "slow-\(i)", 1).route.id) }
        try await Task.sleep(for: .milliseconds(200))
        try expect(
            counted.changeReadCount == readsBefore,
            "no read while the consumer does not ask (\(counted.changeReadCount - readsBefore) reads)")
        var seen: Set<UUID> = []
        while seen.count < commits {
            guard let set = try await iterator.next() else { break }
            try expect(set.added.count <= 50, "a set holds at most the limit (\(set.added.count))")
            for r in set.added { try expect(seen.insert(r.id).inserted, "no route twice") }
        }
        try expect(seen == expected, "every committed route arrives once")
        try expect(counted.openCommitWaiters == 1, "one waiter while the follower lives")
    }

    /// Cancelling the consuming task ends the sequence (`nil`, not an error) and closes its waiter; so does dropping
    /// an iterator that is never finished.
    static func followerCancellation(_ store: any RouteStore) async throws {
        let counted = FaultInjectingStore(store)
        let w = try await StoreConformance.saved(store, alice)
        _ = try await route(store, w, "cancel", 1)
        // The follower reports each set it sees, so that it is cancelled only after the catch-up arrived: under the
        // thread sanitizer, with every suite at once on 2 cores, the catch-up read can take longer than any fixed pause
        // (CI, 2026-11-24: a 100 ms pause saw 0 sets).
        let (seenSets, seenSet) = AsyncStream.makeStream(of: Int.self)
        let follower = Task { () throws(RouteKitError) -> Int in
            var sets = 0
            for try await _ in counted.changeUpdates(since: nil) {
                sets += 1
                seenSet.yield(sets)
            }
            seenSet.finish()
            return sets
        }
        var reported = seenSets.makeAsyncIterator()
        let firstSet = await reported.next()
        try expect(firstSet == 1, "the follower sees the catch-up")
        let deadline = ContinuousClock.now + .seconds(120)  // a hang guard (see below), not a speed check
        while counted.openCommitWaiters == 0 && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
        try expect(counted.openCommitWaiters == 1, "the follower holds a waiter while it waits")
        try await Task.sleep(for: .milliseconds(100))
        follower.cancel()
        let sets = try await follower.value
        try expect(sets == 1, "the follower saw the catch-up, then ended without an error (\(sets) sets)")
        // No timing is asserted: under the thread sanitizer, with every suite at once on 2 cores, a follower whose read
        // was queued behind others' took 13 s to see its cancellation (CI, 2026-11-24). A follower that never ended
        // would hang this check until the suite's time limit.
        try expect(counted.openCommitWaiters == 0, "and closed its waiter")
        do {
            var iterator = counted.changeUpdates(since: nil).makeAsyncIterator()
            _ = try await iterator.next()
            try expect(counted.openCommitWaiters == 1, "a new follower holds a waiter")
        }
        try expect(counted.openCommitWaiters == 0, "dropping its iterator closes it")
    }
}
