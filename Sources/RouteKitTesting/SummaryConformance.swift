import Foundation
import RouteKit

/// What every ``SummaryStore`` must do, run against each backend.
package enum SummaryStoreConformance {
    /// Saves, replaces and reads back workouts' summaries; a summary of a workout that is not stored is not kept;
    /// deleting a workout deletes its summary.
    /// - Throws: ``ConformanceFailure`` naming what differed.
    package static func run(_ store: any RouteStore & SummaryStore) async throws {
        func check(_ ok: Bool, _ what: String) throws {
            if !ok { throw ConformanceFailure(description: "summary store: \(what)") }
        }
        let source = try Source(name: "summary-conformance")
        let a = Workout(activityType: .running, start: nil, end: nil, source: source)
        let b = Workout(activityType: .cycling, start: nil, end: nil, source: source)
        _ = try await store.saveWorkout(a)
        _ = try await store.saveWorkout(b)
        let unknown = UUID()
        try check(try await store.summaries(ofWorkouts: [a.id, b.id]).isEmpty, "no summary before one is saved")
        try check(try await store.summaries(ofWorkouts: []).isEmpty, "no ids, no summaries")
        let first = StoredSummary(basis: "v1 r1 x", document: #"{"distanceMetres":1.5,"name":"é"}"#)
        try await store.saveSummary(first, ofWorkout: a.id)
        try await store.saveSummary(first, ofWorkout: unknown)
        var read = try await store.summaries(ofWorkouts: [a.id, b.id, unknown])
        try check(read == [a.id: first], "a saved summary reads back; none for a workout not stored: \(read)")
        let second = StoredSummary(basis: "v1 r2 y", document: #"{"distanceMetres":2}"#)
        try await store.saveSummary(second, ofWorkout: a.id)
        try await store.saveSummary(first, ofWorkout: b.id)
        read = try await store.summaries(ofWorkouts: [a.id, b.id])
        try check(read == [a.id: second, b.id: first], "a save replaces the workout's summary: \(read)")
        let many = (0..<1200).map { _ in UUID() } + [b.id]
        try check(
            try await store.summaries(ofWorkouts: many) == [b.id: first], "a long list of ids reads what is stored")
        try await store.deleteWorkout(id: a.id, as: source)
        read = try await store.summaries(ofWorkouts: [a.id, b.id])
        try check(read == [b.id: first], "deleting a workout deletes its summary: \(read)")
        try await store.deleteWorkout(id: b.id, as: source)
    }
}
