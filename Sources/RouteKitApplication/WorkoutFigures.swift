package import Foundation
package import RouteKit
internal import RouteKitProcessing

/// A workout's figures in a list of workouts (`routekit workouts`, `GET /v1/workouts`, the web page's list): the
/// distance and durations the statistics give for it (`routekit stats`, `GET /v1/workouts/ID/stats`), so that every
/// door shows one figure.
///
/// They are measured once per route version and kept in the store (``SummaryStore``): a list reads them instead of
/// measuring every route. What they were measured from (the route version, the activity, the pauses, this
/// definition's version) is kept with them; when that changed (a smoothed version saved, the workout replaced), they
/// are measured again and saved.
package struct WorkoutFigures: Codable, Hashable, Sendable {
    /// The distance along the recording (metres), as the statistics count it (GPS spikes left out).
    package var distanceMetres: Double
    /// From the first fix to the last with a time (seconds), if any.
    package var elapsedSeconds: Double?
    /// The time spent moving (seconds), if known.
    package var movingSeconds: Double?

    /// The version of the definition: raise it when the statistics' distance or durations change, so that stored
    /// figures are measured again.
    static let definition = 1

    /// The recording a route's figures are measured from (``RouteStore/recording(of:)``), told without reading the
    /// store: a processed version names it in `derivedFrom` (`uuid@version`), a raw one is its own.
    static func recordingID(of route: RouteSample) -> UUID {
        if case .string(let text)? = route.metadata[MetadataKey.derivedFrom],
            let id = UUID(uuidString: String(text.prefix { $0 != "@" }))
        {
            return id
        }
        return route.id
    }

    /// What `workout`'s figures are measured from when `current` is its first current route: its recording, so that
    /// a smoothed version (which the statistics do not measure) keeps the figures of the recording it came from.
    static func basis(of workout: Workout, current: RouteSample) -> String {
        var hasher = ContentHasher(domain: "workout-figures")
        hasher.combine(workout.activityType.rawValue)
        for pause in workout.pauseIntervals {
            hasher.combine(pause.lowerBound.seconds)
            hasher.combine(Int64(pause.lowerBound.nanoseconds))
            hasher.combine(pause.upperBound.seconds)
            hasher.combine(Int64(pause.upperBound.nanoseconds))
        }
        return "v\(definition) \(recordingID(of: current).lowercaseText) \(hasher.hexDigest)"
    }

    /// The figures of each workout that has a route, by workout: read from the store when they were measured from
    /// what the workout has now, else measured (and saved, when the store keeps summaries; a store that cannot save
    /// them now still gets the figures).
    /// - Parameter workouts: workouts with their current routes, as a list has them.
    package static func of(_ workouts: [(workout: Workout, routes: [RouteSample])], in store: any RouteStore)
        async throws -> [UUID: WorkoutFigures]
    {
        let measured = workouts.compactMap { item in
            item.routes.first.map { (workout: item.workout, route: $0, basis: basis(of: item.workout, current: $0)) }
        }
        guard !measured.isEmpty else { return [:] }
        let summaries = store as? any SummaryStore
        let stored = try await summaries?.summaries(ofWorkouts: measured.map(\.workout.id)) ?? [:]
        var out: [UUID: WorkoutFigures] = [:]
        for item in measured {
            if let summary = stored[item.workout.id], summary.basis == item.basis,
                let figures = try? JSONDecoder().decode(WorkoutFigures.self, from: Data(summary.document.utf8))
            {
                out[item.workout.id] = figures
                continue
            }
            let statistics = try await WorkoutStatistics.routeStatistics(
                of: item.workout, current: item.route, in: store)
            let figures = WorkoutFigures(
                distanceMetres: statistics.distanceMetres, elapsedSeconds: statistics.elapsedSeconds,
                movingSeconds: statistics.movingSeconds)
            out[item.workout.id] = figures
            if let summaries, let data = try? JSONEncoder().encode(figures) {
                // A cache: a store that cannot save now (full, read-only) measures again next time.
                try? await summaries.saveSummary(
                    StoredSummary(basis: item.basis, document: String(decoding: data, as: UTF8.self)),
                    ofWorkout: item.workout.id)
            }
        }
        return out
    }

    /// Measures and saves the figures of `workouts`, when they are not stored yet: what a door calls after saving a
    /// route version (an upload, a finished builder), so that a list reads them instead of measuring.
    package static func refresh(workouts: [UUID], in store: any RouteStore) async throws {
        var items: [(workout: Workout, routes: [RouteSample])] = []
        for id in Set(workouts).sorted(by: { $0.uuidString < $1.uuidString }) {
            guard let workout = try await store.workout(id: id) else { continue }
            items.append((workout, try await store.routes(matching: RouteFilter(workout: id))))
        }
        _ = try await of(items, in: store)
    }
}
