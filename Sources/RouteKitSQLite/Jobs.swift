import Foundation
import GRDB
import RouteKit

/// Jobs are their person's: a view saves, reads and stops only its person's jobs (another person's job id is as
/// unknown as a missing one); deleting old jobs is housekeeping over everyone's.
extension SQLiteStore: JobStore {
    package func saveJob(_ job: StoredJob) async throws(RouteKitError) -> Bool {
        let person = personKey
        return try await write("saving job \(job.id)") { db in
            // Another person's job with this id is left alone (ids are the store's: the insert cannot take it).
            try db.execute(
                sql: """
                    INSERT INTO job(id, person, state, document, created, updated, cancel_requested)
                    VALUES (?, ?, ?, ?, ?, ?, ?)
                    ON CONFLICT(id) DO UPDATE SET state = excluded.state, document = excluded.document,
                        updated = excluded.updated, cancel_requested = cancel_requested OR excluded.cancel_requested
                    WHERE job.person = excluded.person
                    """,
                arguments: [
                    Self.key(job.id), person, job.state.rawValue, job.document, job.created.timeIntervalSince1970,
                    job.updated.timeIntervalSince1970, job.cancelRequested,
                ])
            return try Bool.fetchOne(
                db, sql: "SELECT cancel_requested FROM job WHERE id = ? AND person = ?",
                arguments: [Self.key(job.id), person]) ?? false
        }
    }

    package func job(id: UUID) async throws(RouteKitError) -> StoredJob? {
        let person = personKey
        return try await read("reading job \(id)") { db in
            try Row.fetchOne(
                db, sql: "SELECT * FROM job WHERE id = ? AND person = ?", arguments: [Self.key(id), person]
            ).map { row in
                guard let state = StoredJob.State(rawValue: row["state"]) else {
                    throw RouteKitError(.storage, "stored job \(id) has an unknown state")
                }
                return StoredJob(
                    id: id, state: state, document: row["document"],
                    created: Date(timeIntervalSince1970: row["created"]),
                    updated: Date(timeIntervalSince1970: row["updated"]), cancelRequested: row["cancel_requested"])
            }
        }
    }

    package func requestJobCancellation(id: UUID) async throws(RouteKitError) -> Bool {
        let person = personKey
        return try await write("asking job \(id) to stop") { db in
            try db.execute(
                sql: "UPDATE job SET cancel_requested = 1 WHERE id = ? AND person = ?",
                arguments: [Self.key(id), person])
            return db.changesCount > 0
        }
    }

    package func deleteJobs(endedBefore date: Date) async throws(RouteKitError) -> Int {
        try await write("deleting old jobs") { db in
            try db.execute(
                sql: "DELETE FROM job WHERE state <> 'running' AND updated < ?",
                arguments: [date.timeIntervalSince1970])
            return db.changesCount
        }
    }
}
