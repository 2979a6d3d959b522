#if Postgres
    import Foundation
    import PostgresNIO
    import RouteKit

    extension PostgresStore: JobStore {
        package func saveJob(_ job: StoredJob) async throws(RouteKitError) -> Bool {
            try await write("saving job \(job.id)") { tx in
                let row = try await tx.first(
                    """
                    INSERT INTO job(id, person, state, document, created, updated, cancel_requested)
                    VALUES (\(Self.key(job.id)), \(tx.person), \(job.state.rawValue), \(job.document),
                        \(job.created.timeIntervalSince1970), \(job.updated.timeIntervalSince1970),
                        \(job.cancelRequested))
                    ON CONFLICT(id) DO UPDATE SET state = excluded.state, document = excluded.document,
                        updated = excluded.updated,
                        cancel_requested = job.cancel_requested OR excluded.cancel_requested
                    WHERE job.person = excluded.person
                    RETURNING cancel_requested
                    """)
                guard let row else { return false }
                let requested: Bool = try row.get("cancel_requested")
                return requested
            }
        }

        /// A job row's columns, read inside the transaction.
        struct JobFields: Sendable {
            var state, document: String
            var created, updated: Double
            var cancelRequested: Bool
        }

        package func job(id: UUID) async throws(RouteKitError) -> StoredJob? {
            let rows = try await read("reading job \(id)") { tx in
                try await tx.rows("SELECT * FROM job WHERE id = \(Self.key(id)) AND person = \(tx.person)").map { row in
                    JobFields(
                        state: try row.get("state"), document: try row.get("document"),
                        created: try row.get("created"), updated: try row.get("updated"),
                        cancelRequested: try row.get("cancel_requested"))
                }
            }
            guard let f = rows.first else { return nil }
            guard let state = StoredJob.State(rawValue: f.state) else {
                throw RouteKitError(.storage, "stored job \(id) has an unknown state")
            }
            return StoredJob(
                id: id, state: state, document: f.document, created: Date(timeIntervalSince1970: f.created),
                updated: Date(timeIntervalSince1970: f.updated), cancelRequested: f.cancelRequested)
        }

        package func requestJobCancellation(id: UUID) async throws(RouteKitError) -> Bool {
            try await write("asking job \(id) to stop") { tx in
                try await tx.first(
                    "UPDATE job SET cancel_requested = TRUE WHERE id = \(Self.key(id)) AND person = \(tx.person) RETURNING id"
                ) != nil
            }
        }

        package func deleteJobs(endedBefore date: Date) async throws(RouteKitError) -> Int {
            try await write("deleting old jobs") { tx in
                try await tx.rows(
                    """
                    DELETE FROM job WHERE state <> 'running' AND updated < \(date.timeIntervalSince1970)
                    RETURNING id
                    """
                ).count
            }
        }
    }
#endif
