#if Server
    import Foundation
    import RouteKit

    /// How many uploads each person may make: a bucket of `perMinute` per person, refilled evenly over a minute, so a
    /// burst of `perMinute` passes and then one every `60 / perMinute` seconds. Buckets that are full again are
    /// dropped, so memory holds only the people who uploaded within the last minute.
    final class PersonRate: Sendable {
        let perMinute: Int
        private let buckets = Locked<[PersonID: (tokens: Double, at: ContinuousClock.Instant)]>([:])

        init(perMinute: Int) { self.perMinute = max(1, perMinute) }

        /// Takes one upload of `person`'s; `nil` when admitted, else the seconds until one is.
        func take(_ person: PersonID, now: ContinuousClock.Instant = .now) -> Int? {
            let capacity = Double(perMinute)
            let perSecond = capacity / 60
            return buckets.withLock { buckets -> Int? in
                var bucket = buckets[person] ?? (capacity, now)
                let elapsed = now - bucket.at
                let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
                bucket.tokens = min(capacity, bucket.tokens + seconds * perSecond)
                bucket.at = now
                guard bucket.tokens >= 1 else {
                    buckets[person] = bucket
                    return max(1, Int(((1 - bucket.tokens) / perSecond).rounded(.up)))
                }
                bucket.tokens -= 1
                buckets[person] = bucket
                // Now and then, forget the people whose buckets have filled up again.
                if buckets.count > 1024 {
                    buckets = buckets.filter { entry in
                        let idle = now - entry.value.at
                        return Double(idle.components.seconds) * perSecond + entry.value.tokens < capacity
                    }
                }
                return nil
            }
        }
    }
#endif
