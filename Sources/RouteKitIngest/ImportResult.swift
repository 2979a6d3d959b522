public import Foundation
public import RouteKit

/// What importing one file did (the shape of `routekit import --json`).
public struct ImportResult: Sendable, Hashable {
    /// How the file went.
    public enum Status: String, Sendable, Hashable {
        /// At least one track was stored as new.
        case imported
        /// Every track was already in the store (same source, same content).
        case unchanged
        /// The file failed part-way, after some of its tracks were stored.
        case partial
        /// Nothing was stored: the file could not be read, or failed in its first track.
        case failed
    }

    /// One `<trk>`: the workout it became, and its route (none for an empty track).
    public struct Track: Sendable, Hashable {
        /// The workout.
        public var workout: UUID
        /// The route, `nil` for a track without points.
        public var route: UUID?
        /// The route's location count.
        public var locations: Int
        /// `true` when the track was already stored (nothing was written).
        public var unchanged: Bool
        /// When a pending builder of an interrupted import of the same track was picked up: how many
        /// locations it already held.
        public var resumedFrom: Int?
        /// How many activities the workout records (a multisport file's sessions, a TCX `MultiSportSession`'s
        /// activities); 0 when it records none (the workout is its own one activity). What `routekit import` says of
        /// a multisport workout.
        package var activities = 0

        /// Creates a track outcome.
        package init(workout: UUID, route: UUID?, locations: Int, unchanged: Bool, resumedFrom: Int? = nil) {
            self.workout = workout
            self.route = route
            self.locations = locations
            self.unchanged = unchanged
            self.resumedFrom = resumedFrom
        }
    }

    /// The file, as given.
    public var file: String
    /// How it went.
    public var status: Status
    /// Its tracks, in file order.
    public var tracks: [Track]
    /// How many `<wpt>` it has.
    public var waypoints: Int
    /// Quirks and things not stored, for a person.
    public var warnings: [String]
    /// Why it failed, if it did.
    public var error: RouteKitError?

    /// Creates a result.
    package init(
        file: String, status: Status, tracks: [Track] = [], waypoints: Int = 0, warnings: [String] = [],
        error: RouteKitError? = nil
    ) {
        self.file = file
        self.status = status
        self.tracks = tracks
        self.waypoints = waypoints
        self.warnings = warnings
        self.error = error
    }
}

extension ImportResult {
    /// Runs an import that fills a result: what it throws becomes the result's error (`failed`, or `partial` when
    /// tracks were stored before it), and a result whose tracks were all stored already is `unchanged`. A
    /// ``TrackImport/ResumeMismatch`` runs `body` once more, with resuming turned off. The
    /// importers of other formats share it.
    package static func collect(
        file: String, warnings: [String] = [], _ body: (inout ImportResult) async throws -> Void
    ) async -> ImportResult {
        var result = ImportResult(file: file, status: .imported, warnings: warnings)
        do {
            do {
                try await body(&result)
            } catch is TrackImport.ResumeMismatch {
                // A pending builder with a track's head but not its content, or one another import of the same
                // file is filling now: imported again from the start, building anew and leaving that one alone.
                result = ImportResult(file: file, status: .imported, warnings: warnings)
                try await TrackImport.$resumeAllowed.withValue(false) { try await body(&result) }
            }
        } catch {
            let e = error as? RouteKitError ?? RouteKitError(.storage, "\(error)")
            result.error = e.file == nil ? e.inFile(file) : e
            result.status = result.tracks.isEmpty ? .failed : .partial
            return result
        }
        if result.tracks.allSatisfy(\.unchanged) { result.status = .unchanged }
        return result
    }
}
