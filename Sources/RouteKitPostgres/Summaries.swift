#if Postgres
    import Foundation
    import PostgresNIO
    import RouteKit

    extension PostgresStore: SummaryStore {
        package func summaries(ofWorkouts ids: [UUID]) async throws(RouteKitError) -> [UUID: StoredSummary] {
            guard !ids.isEmpty else { return [:] }
            let keys = ids.map { Self.key($0) }
            let rows = try await read("reading workout summaries") { tx in
                try await tx.rows(
                    "SELECT * FROM workout_summary WHERE workout_uuid = ANY(\(keys)) AND person = \(tx.person)"
                ).map { row in
                    (
                        try row.get("workout_uuid") as String,
                        StoredSummary(basis: try row.get("basis"), document: try row.get("document"))
                    )
                }
            }
            var out: [UUID: StoredSummary] = [:]
            for (key, summary) in rows { if let id = UUID(uuidString: key) { out[id] = summary } }
            return out
        }

        package func saveSummary(_ summary: StoredSummary, ofWorkout id: UUID) async throws(RouteKitError) {
            try await write("saving the summary of workout \(id)") { tx in
                try await tx.run(
                    """
                    INSERT INTO workout_summary(workout_uuid, person, basis, document)
                    SELECT uuid, person, \(summary.basis), \(summary.document) FROM workout
                    WHERE uuid = \(Self.key(id)) AND person = \(tx.person)
                    ON CONFLICT(workout_uuid) DO UPDATE SET basis = excluded.basis, document = excluded.document
                    """)
            }
        }
    }
#endif
