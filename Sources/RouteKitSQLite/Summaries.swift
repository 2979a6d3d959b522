import Foundation
import GRDB
import RouteKit

/// A summary is its workout's person's: a view reads and saves only those of its person's workouts.
extension SQLiteStore: SummaryStore {
    package func summaries(ofWorkouts ids: [UUID]) async throws(RouteKitError) -> [UUID: StoredSummary] {
        guard !ids.isEmpty else { return [:] }
        let keys = ids.map { Self.key($0) }
        let person = personKey
        return try await read("reading workout summaries") { db in
            var out: [UUID: StoredSummary] = [:]
            var start = 0
            while start < keys.count {
                let part = keys[start..<min(keys.count, start + 500)]
                start += part.count
                let marks = Array(repeating: "?", count: part.count).joined(separator: ",")
                let rows = try Row.fetchAll(
                    db,
                    sql: """
                        SELECT s.* FROM workout_summary s JOIN workout w ON w.uuid = s.workout_uuid
                        WHERE w.person = ? AND s.workout_uuid IN (\(marks))
                        """,
                    arguments: StatementArguments([person] + Array(part)))
                for row in rows {
                    let text: String = row["workout_uuid"]
                    guard let id = UUID(uuidString: text) else { continue }
                    out[id] = StoredSummary(basis: row["basis"], document: row["document"])
                }
            }
            return out
        }
    }

    package func saveSummary(_ summary: StoredSummary, ofWorkout id: UUID) async throws(RouteKitError) {
        let person = personKey
        try await write("saving the summary of workout \(id)") { db in
            try db.execute(
                sql: """
                    INSERT INTO workout_summary(workout_uuid, basis, document)
                    SELECT uuid, ?, ? FROM workout WHERE uuid = ? AND person = ?
                    ON CONFLICT(workout_uuid) DO UPDATE SET basis = excluded.basis, document = excluded.document
                    """,
                arguments: [summary.basis, summary.document, Self.key(id), person])
        }
    }
}
