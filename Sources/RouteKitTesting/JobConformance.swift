import Foundation
import RouteKit

/// What every ``JobStore`` must do, run against each backend.
package enum JobStoreConformance {
    /// Saves, updates and reads back jobs; a request to cancel survives later saves; old ended jobs are deleted,
    /// running ones never.
    /// - Throws: ``ConformanceFailure`` naming what differed.
    package static func run(_ store: any JobStore) async throws {
        func check(_ ok: Bool, _ what: String) throws {
            if !ok { throw ConformanceFailure(description: "job store: \(what)") }
        }
        let t0 = Date(timeIntervalSince1970: 1_700_000_000)
        var a = StoredJob(id: UUID(), state: .running, document: #"{"done":0}"#, created: t0, updated: t0)
        let b = StoredJob(id: UUID(), state: .running, document: #"{"done":0}"#, created: t0, updated: t0)
        try check(try await store.job(id: a.id) == nil, "an unknown job is nil")
        try check(try await store.saveJob(a) == false, "a new job has no cancellation request")
        try check(try await store.saveJob(b) == false, "a second job saves")
        try check(try await store.job(id: a.id) == a, "a job reads back as saved")
        a.document = #"{"done":5,"outcomes":["é"]}"#
        a.updated = t0.addingTimeInterval(1)
        try check(try await store.saveJob(a) == false, "progress saves")
        try check(try await store.job(id: a.id) == a, "progress replaces the document and update time")
        try check(try await store.requestJobCancellation(id: a.id), "asking a known job to stop says it exists")
        try check(try await store.requestJobCancellation(id: UUID()) == false, "asking an unknown job is false")
        try check(try await store.job(id: a.id)?.cancelRequested == true, "the request is stored")
        a.updated = t0.addingTimeInterval(2)
        try check(try await store.saveJob(a), "the next save of the running job learns of the request")
        a.state = .cancelled
        a.updated = t0.addingTimeInterval(3)
        _ = try await store.saveJob(a)
        let stopped = try await store.job(id: a.id)
        try check(stopped?.state == .cancelled && stopped?.cancelRequested == true, "the request outlives saves")
        try check(stopped?.created == t0, "a save keeps the creation time")
        try check(
            try await store.deleteJobs(endedBefore: t0.addingTimeInterval(3)) == 0, "a job saved at the date stays")
        try check(
            try await store.deleteJobs(endedBefore: t0.addingTimeInterval(100)) == 1,
            "an ended job saved before the date is deleted, a running one is not")
        try check(try await store.job(id: a.id) == nil, "the deleted job is gone")
        try check(try await store.job(id: b.id) != nil, "the running job stays")
    }
}
