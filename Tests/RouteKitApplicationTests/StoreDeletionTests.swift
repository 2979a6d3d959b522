import Foundation
@_spi(RouteKitBackend) import RouteKit
import RouteKitApplication
import RouteKitTesting
import Testing

@Suite("Deleting and effort scores, as every door does it")
struct StoreDeletionTests {
    /// A workout of `source` (or `workout`, saved when it is not) with one route of five fixes (sync identifier
    /// `name`, version `version`).
    static func saved(
        _ name: String, source: Source, in store: InMemoryStore, version: Int64 = 1, workout: Workout? = nil,
        metadata: [String: MetadataValue] = [:]
    ) async throws -> (workout: Workout, route: RouteSample) {
        let workout = workout ?? Workout(activityType: .running, start: nil, end: nil, source: source)
        if try await store.workout(id: workout.id) == nil { _ = try await store.saveWorkout(workout) }
        let locations = (0..<5).map { i in
            Location(
                latitude: 47 + Double(i) * 0.0001, longitude: 8,
                timestamp: Timestamp(Instant(seconds: 1_714_550_400 + Int64(i))))
        }
        let route = RouteSample(
            workoutID: workout.id, source: source, sync: SyncIdentity(identifier: name, version: version),
            start: locations.first?.timestamp, end: locations.last?.timestamp, locationCount: locations.count,
            metadata: metadata)
        _ = try await store.saveRoute(route, chunks: [.locations(locations, sequence: 0)], releasing: nil)
        return (workout, route)
    }

    /// The code of the error `body` throws, `nil` when it throws none.
    static func code(_ body: () async throws -> Void) async -> RouteKitError.Code? {
        do {
            try await body()
            return nil
        } catch let error as RouteKitError {
            return error.code
        } catch {
            Issue.record("not a RouteKitError: \(error)")
            return nil
        }
    }

    @Test("a uuid is a current route's or a workout's: the result says which; another source's is notOwner, nothing deleted")
    func routeOrWorkout() async throws {
        let store = InMemoryStore()
        let phone = try Source(name: "phone")
        let watch = try Source(name: "watch")
        let (workout, route) = try await Self.saved("a", source: phone, in: store)

        let foreignRoute = await Self.code { _ = try await StoreDeletion.delete(route.id, as: watch, in: store) }
        #expect(foreignRoute == .notOwner)
        let foreignWorkout = await Self.code { _ = try await StoreDeletion.delete(workout.id, as: watch, in: store) }
        #expect(foreignWorkout == .notOwner)
        #expect(try await store.isCurrent(route: route.id))
        #expect(try await store.workout(id: workout.id) != nil)

        // Asked for the other kind: not found.
        let routeAsWorkout = await Self.code {
            _ = try await StoreDeletion.delete(route.id, kind: .workout, as: phone, in: store)
        }
        #expect(routeAsWorkout == .notFound)
        let workoutAsRoute = await Self.code {
            _ = try await StoreDeletion.delete(workout.id, kind: .route, as: phone, in: store)
        }
        #expect(workoutAsRoute == .notFound)

        let deletedRoute = try await StoreDeletion.delete(route.id, as: phone, in: store)
        #expect(deletedRoute.id == route.id)
        if case .route = deletedRoute {} else { Issue.record("a route's uuid deletes the route") }
        #expect(try await store.isCurrent(route: route.id) == false)
        #expect(try await store.workout(id: workout.id) != nil, "the workout stays")
        let again = await Self.code { _ = try await StoreDeletion.delete(route.id, as: phone, in: store) }
        #expect(again == .notFound)

        let (other, otherRoute) = try await Self.saved("b", source: phone, in: store)
        let deletedWorkout = try await StoreDeletion.delete(other.id, kind: .workout, as: phone, in: store)
        #expect(deletedWorkout.id == other.id)
        if case .workout = deletedWorkout {} else { Issue.record("a workout's uuid deletes the workout") }
        #expect(try await store.workout(id: other.id) == nil)
        #expect(try await store.isCurrent(route: otherRoute.id) == false)
    }

    @Test("an object of a source the caller may not read is not found, worded as a uuid that names nothing")
    func hiddenSources() async throws {
        let store = InMemoryStore()
        let phone = try Source(name: "phone")
        let viewer = try Source(name: "viewer")
        let (workout, route) = try await Self.saved("a", source: phone, in: store)
        func message(_ id: UUID, _ kind: StoreDeletion.Kind?) async -> String? {
            do throws(RouteKitError) {
                _ = try await StoreDeletion.delete(id, kind: kind, as: viewer, readableSources: [viewer], in: store)
                return nil
            } catch {
                #expect(error.code == .notFound)
                return error.message.replacingOccurrences(of: id.lowercaseText, with: "ID")
            }
        }
        for kind in [StoreDeletion.Kind.route, .workout, nil] {
            let nothing = await message(UUID(), kind)
            #expect(nothing != nil)
            let hidden = await message(kind == .workout ? workout.id : route.id, kind)
            #expect(hidden == nothing, "\(String(describing: kind))")
        }
        #expect(try await store.isCurrent(route: route.id))
        #expect(try await store.workout(id: workout.id) != nil)
        // Readable, then: another source's object is refused as such.
        let readable = await Self.code {
            _ = try await StoreDeletion.delete(route.id, as: viewer, readableSources: [viewer, phone], in: store)
        }
        #expect(readable == .notOwner)
    }

    @Test("a replaced version kept as provenance is not deleted by its uuid: the current one is")
    func replacedVersion() async throws {
        let store = InMemoryStore()
        let phone = try Source(name: "phone")
        let (workout, raw) = try await Self.saved("a", source: phone, in: store)
        let (_, smoothed) = try await Self.saved(
            "a", source: phone, in: store, version: 2, workout: workout,
            metadata: [MetadataKey.derivedFrom: .string("\(raw.id.lowercaseText)@1")])
        #expect(try await store.route(id: raw.id) != nil)
        #expect(try await store.isCurrent(route: raw.id) == false)
        let byKeptVersion = await Self.code { _ = try await StoreDeletion.delete(raw.id, as: phone, in: store) }
        #expect(byKeptVersion == .notFound)
        #expect(try await store.isCurrent(route: smoothed.id))
        let deleted = try await StoreDeletion.delete(smoothed.id, as: phone, in: store)
        #expect(deleted.id == smoothed.id)
        #expect(try await store.isCurrent(route: smoothed.id) == false)
    }

    @Test("effort: a score out of range stores nothing; only its source unrelates it, from its own workout")
    func effort() async throws {
        let store = InMemoryStore()
        let phone = try Source(name: "phone")
        let watch = try Source(name: "watch")
        let (workout, _) = try await Self.saved("a", source: phone, in: store)
        let (other, _) = try await Self.saved("b", source: phone, in: store)

        for bad in [0.0, 10.5, -3.0, Double.nan] {
            let refused = await Self.code {
                _ = try await WorkoutEffort.relate(score: bad, manual: true, toWorkout: workout.id, as: phone, in: store)
            }
            #expect(refused == .invalidArgument, "\(bad)")
        }
        let hidden = await Self.code {
            _ = try await WorkoutEffort.relate(
                score: 5, manual: true, toWorkout: workout.id, as: watch, readableSources: [watch], in: store)
        }
        #expect(hidden == .notFound)
        #expect(try await store.efforts(ofWorkout: workout.id).isEmpty)

        let (manual, afterManual) = try await WorkoutEffort.relate(
            score: 7, manual: true, toWorkout: workout.id, as: phone, in: store)
        #expect(manual.score == 7 && manual.isManual && manual.source == phone)
        #expect(afterManual.isEffective(manual))
        let (estimate, afterEstimate) = try await WorkoutEffort.relate(
            score: 4, manual: false, toWorkout: workout.id, as: watch, in: store)
        #expect(!afterEstimate.isEffective(estimate), "a manual score wins over an estimate")
        #expect(afterEstimate.scores.count == 2)

        let foreign = await Self.code {
            _ = try await WorkoutEffort.unrelate(manual.id, fromWorkout: workout.id, as: watch, in: store)
        }
        #expect(foreign == .notOwner)
        let elsewhere = await Self.code {
            _ = try await WorkoutEffort.unrelate(manual.id, fromWorkout: other.id, as: phone, in: store)
        }
        #expect(elsewhere == .notFound)
        #expect(try await store.efforts(ofWorkout: workout.id).count == 2)
        let gone = try await WorkoutEffort.unrelate(manual.id, fromWorkout: workout.id, as: phone, in: store)
        #expect(gone.id == manual.id)
        #expect(try await store.efforts(ofWorkout: workout.id).map(\.id) == [estimate.id])
    }
}
