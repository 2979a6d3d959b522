import Foundation
import RouteKit

/// What every format's importer writes through: the store, the source the workouts, routes and series belong to,
/// and the values an export's index sets on the workouts an import creates. ``TrackImport`` builds a track through
/// it, and it stores a file's waypoints and routes (``GPXAttachments``).
///
/// A class: an importer sets ``workoutOverrides`` before each file, and the tracks it has started read them when
/// they save their workout.
package final class ImportContext {
    /// The store written to.
    package let store: any RouteStore
    /// Who the workouts, routes and series belong to.
    package let source: Source
    /// Values that win over the file's own for the workouts this import creates (a bulk export's index, such as
    /// Strava's `activities.csv`, names and types its activities).
    package var workoutOverrides: WorkoutOverrides?

    /// A context writing to `store` as `source`.
    package init(store: any RouteStore, source: Source, workoutOverrides: WorkoutOverrides? = nil) {
        self.store = store
        self.source = source
        self.workoutOverrides = workoutOverrides
    }

    /// Whether the workout has attachments stored (waypoints and routes, ``GPXAttachments``).
    package func hasAttachments(_ workout: UUID) async throws(RouteKitError) -> Bool {
        let cursor = try await store.attachments(ofWorkout: workout)
        defer { cursor.close() }
        return try await cursor.next() != nil
    }

    /// Stores waypoints and routes (a course's course points) with `workout`, unless it has attachments already
    /// (stored by an earlier import of the same file).
    package func store(_ attachments: GPXAttachments, withWorkout workout: UUID) async throws {
        if attachments.isEmpty { return }
        if try await hasAttachments(workout) { return }
        try await store.appendAttachments(attachments.chunks(), toWorkout: workout, as: source)
    }

    /// Stores a file's waypoints and routes with the workout of its first track, when that workout is new;
    /// a file without tracks gets a workout of its own, identified by their content behind `syncPrefix` (`gpx-` for
    /// GPX, `geojson-` for GeoJSON…), with `metadata` and `activityType`.
    package func store(
        _ attachments: GPXAttachments, creator: String?, into result: inout ImportResult,
        syncPrefix: String, metadata extra: [String: MetadataValue] = [:], activityType: ActivityType = .other
    )
        async throws
    {
        let chunks = try attachments.chunks()
        if let first = result.tracks.first {
            // Stored with the workout by the import that created it, unless that import stopped before.
            if try await !hasAttachments(first.workout) {
                try await store.appendAttachments(chunks, toWorkout: first.workout, as: source)
            }
            return
        }
        let syncID = syncPrefix + attachments.contentHash
        if let existing = try await store.workouts(matching: WorkoutFilter(source: source, syncIdentifier: syncID))
            .first
        {
            let missing = try await !hasAttachments(existing.id)
            if missing { try await store.appendAttachments(chunks, toWorkout: existing.id, as: source) }
            result.tracks.append(
                .init(workout: existing.id, route: nil, locations: 0, unchanged: !missing, resumedFrom: nil))
            return
        }
        var metadata: [String: MetadataValue] = ["gpxContent": .string("waypoints and routes")]
        metadata.merge(extra) { $1 }
        if let name = attachments.routes.first?.info.name ?? attachments.waypoints.first?.extras?.name {
            metadata["name"] = .string(name)
        }
        if let creator { metadata["gpxCreator"] = .string(creator) }
        var workout = Workout(
            activityType: activityType, start: nil, end: nil, source: source,
            sync: SyncIdentity(identifier: syncID, version: 1), metadata: metadata)
        workoutOverrides?.apply(to: &workout)
        if case .stale(let current, _) = try await store.saveWorkout(workout) {
            // Another import of the same content won the race.
            result.tracks.append(.init(workout: current, route: nil, locations: 0, unchanged: true, resumedFrom: nil))
            return
        }
        try await store.appendAttachments(chunks, toWorkout: workout.id, as: source)
        result.tracks.append(.init(workout: workout.id, route: nil, locations: 0, unchanged: false, resumedFrom: nil))
    }
}

/// Values that win over a file's own for the workouts an import creates: a bulk export's index (Strava's
/// `activities.csv`) knows an activity's name and type better than its file does. A workout that was already
/// stored is left as it is.
package struct WorkoutOverrides: Sendable, Hashable {
    /// The activity type, instead of the one the file gives or suggests.
    package var activityType: ActivityType?
    /// Metadata merged over the file's (these values win).
    package var metadata: [String: MetadataValue]

    /// Creates overrides.
    package init(activityType: ActivityType? = nil, metadata: [String: MetadataValue] = [:]) {
        self.activityType = activityType
        self.metadata = metadata
    }

    /// Applies them to a workout about to be saved.
    package func apply(to workout: inout Workout) {
        if let activityType { workout.activityType = activityType }
        workout.metadata.merge(metadata) { $1 }
    }
}
