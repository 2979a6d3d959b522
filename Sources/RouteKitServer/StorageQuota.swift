#if Server
    import Foundation
    import RouteKit

    /// Each person's storage quota (``ServerConfiguration/maxStoredBytesPerPerson``): a person whose data takes
    /// `limit` bytes or more (`PeopleStore.storageUsed(by:)`) gets `507 storage-quota` before they write more.
    ///
    /// Measuring is one aggregate query over a person's chunks; to keep it off the path of every batch, each person's
    /// measure is kept for `freshFor` and measured again after it, or at once after their own upload or deletion
    /// (``forget(_:)``). At most ``maxPeople`` measures are kept: past that, the stale ones go, then the oldest half.
    final class StorageQuota: Sendable {
        /// The most bytes a person may keep before their writes are refused.
        let limit: Int64
        /// The store whose people are measured.
        let people: any PeopleStore
        /// How long a measure is trusted.
        let freshFor: Duration
        private let measured = Locked<[PersonID: (bytes: Int64, at: ContinuousClock.Instant)]>([:])

        /// The most measures kept at once.
        static let maxPeople = 4096

        init(limit: Int64, people: any PeopleStore, freshFor: Duration) {
            self.limit = limit
            self.people = people
            self.freshFor = freshFor
        }

        /// Refuses a write of `person`'s when their data takes the limit or more: `507 storage-quota`.
        func check(_ person: PersonID, now: ContinuousClock.Instant = .now) async throws {
            let used = try await usage(of: person, now: now)
            if used >= limit { throw Problem.storageQuota(used: used, limit: limit) }
        }

        /// The bytes `person`'s data takes: the kept measure while it is fresh, else measured again.
        func usage(of person: PersonID, now: ContinuousClock.Instant = .now) async throws(RouteKitError) -> Int64 {
            let freshFor = self.freshFor
            if let kept = measured.withLock({ $0[person] }), now - kept.at < freshFor { return kept.bytes }
            let bytes = try await people.storageUsed(by: person)
            measured.withLock { measures in
                measures[person] = (bytes: bytes, at: now)
                guard measures.count > Self.maxPeople else { return }
                measures = measures.filter { now - $0.value.at < freshFor }
                guard measures.count > Self.maxPeople else { return }
                let newest = measures.sorted { $0.value.at > $1.value.at }.prefix(Self.maxPeople / 2)
                measures = Dictionary(uniqueKeysWithValues: newest.map { ($0.key, $0.value) })
            }
            return bytes
        }

        /// Drops `person`'s measure: their next check measures again (after they stored or deleted something).
        func forget(_ person: PersonID) {
            _ = measured.withLock { $0.removeValue(forKey: person) }
        }

        /// `bytes` in MiB for people: whole when it is whole, else with two decimals.
        static func mebibytes(_ bytes: Int64) -> String {
            if bytes % (1 << 20) == 0 { return "\(bytes >> 20) MiB" }
            return String(format: "%.2f MiB", Double(bytes) / 1_048_576)
        }
    }

    extension Problem {
        /// The `507` for a person whose data takes `used` bytes, at or over their quota of `limit`.
        static func storageQuota(used: Int64, limit: Int64) -> Problem {
            Problem(
                status: .insufficientStorage, type: "storage-quota", title: "Storage quota reached",
                detail: "this person's data takes \(StorageQuota.mebibytes(used)), which reaches their quota of "
                    + "\(StorageQuota.mebibytes(limit)); delete workouts to store more (what is stored stays "
                    + "readable)",
                extra: ["usedBytes": .number(Double(used)), "limitBytes": .number(Double(limit))])
        }
    }
#endif
