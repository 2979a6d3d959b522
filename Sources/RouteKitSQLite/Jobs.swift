import Foundation
import GRDB
import RouteKit

extension SQLiteStore: JobStore {
    package func saveJob(_ job: StoredJob) async throws(RouteKitError) -> Bool {
        try await write("saving job \(job.id)") { db in
            try db.execute(
                sql: """
                    INSERT INTO job(id, state, document, created, updated, cancel_requested)
                    VALUES (?, ?, ?, ?, ?, ?)
                    ON CONFLICT(id) DO UPDATE SET state = excluded.state, document = excluded.document,
                        updated = excluded.updated, cancel_requested = cancel_requested OR excluded.cancel_requested
                    """,
                arguments: [
                    Self.key(job.id), job.state.rawValue, job.document, job.created.timeIntervalSince1970,
                    job.updated.timeIntervalSince1970, job.cancelRequested,
                ])
            return try Bool.fetchOne(
                db, sql: "SELECT cancel_requested FROM job WHERE id = ?", arguments: [Self.key(job.id)]) ?? false
        }
    }

    package func job(id: UUID) async throws(RouteKitError) -> StoredJob? {
        try await read("reading job \(id)") { db in
            try Row.fetchOne(db, sql: "SELECT * FROM job WHERE id = ?", arguments: [Self.key(id)]).map { row in
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
        try await write("asking job \(id) to stop") { db in
            try db.execute(sql: "UPDATE job SET cancel_requested = 1 WHERE id = ?", arguments: [Self.key(id)])
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
