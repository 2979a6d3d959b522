#if Server
    import Foundation

    /// What a subscription does after a delivery attempt: exponential backoff with full jitter (attempt `n` that
    /// failed is retried after a random delay from 0 to `min(cap, base × factor^(n−1))`: 5 s, 10 s, 20 s… up to an
    /// hour by default), at most ``maxAttempts`` attempts of one change set, then a pause that says why. A receiver
    /// that answers `410 Gone` is removed; a target the policy refuses (``WebhookTargetPolicy``) pauses at once
    /// (retrying would only ask again where it must not).
    ///
    /// The policy is a pure function of the attempt's number, its outcome and a random source, so a dispatcher's
    /// schedule is reproducible with a seeded generator.
    package struct WebhookRetryPolicy: Sendable, Hashable {
        /// The first retry's largest delay, in seconds.
        package var baseSeconds = 5.0
        /// How much the largest delay grows with each attempt.
        package var factor = 2.0
        /// The largest delay of any retry, in seconds.
        package var capSeconds = 3600.0
        /// Attempts of one change set before the subscription is paused.
        package var maxAttempts = 8

        /// What comes after an attempt.
        package enum Step: Sendable, Hashable {
            /// Delivered: the subscription's cursor moves past the change set.
            case advance
            /// Failed: try the same change set again after this delay.
            case retry(after: Duration)
            /// Failed too often, or refused: stop delivering until the subscription is resumed, and say why.
            case pause(reason: String)
            /// The receiver answered `410 Gone`: the subscription is removed.
            case remove
        }

        /// The defaults: base 5 s, factor 2, cap 1 h, 8 attempts.
        package init() {}

        /// The largest delay after failed attempt `attempt` (1 for the first): `min(cap, base × factor^(attempt−1))`,
        /// from 0 to at most 30 days whatever the settings.
        package func ceiling(after attempt: Int) -> Double {
            let cap = Self.clean(capSeconds, fallback: 3600, limit: 30 * 86_400)
            let base = Self.clean(baseSeconds, fallback: 5, limit: cap)
            let growth = Self.clean(factor, fallback: 2, limit: 1e6)
            guard base > 0 else { return 0 }
            let value = base * pow(growth, Double(max(1, attempt) - 1))
            return value.isFinite ? min(value, cap) : cap
        }

        /// The step after attempt number `attempt` (1 for the first of a change set) ended with `outcome`, its
        /// delay drawn from `random`.
        package func next(
            after attempt: Int, _ outcome: WebhookDeliveryOutcome, using random: inout some RandomNumberGenerator
        ) -> Step {
            switch outcome {
            case .delivered: return .advance
            case .gone: return .remove
            case .refusedTarget(let why): return .pause(reason: "the receiver is not allowed: " + why)
            case .failed, .timedOut, .unreachable:
                let attempts = max(1, maxAttempts)
                if attempt >= attempts {
                    let count = attempts == 1 ? "1 attempt" : "\(attempts) attempts"
                    return .pause(reason: "\(count) failed; the last: \(outcome.summary)")
                }
                let seconds = Double.random(in: 0...ceiling(after: attempt), using: &random)
                return .retry(after: .milliseconds(Int64((seconds * 1000).rounded(.down))))
            }
        }

        /// ``next(after:_:using:)`` with the system's random source.
        package func next(after attempt: Int, _ outcome: WebhookDeliveryOutcome) -> Step {
            var random = SystemRandomNumberGenerator()
            return next(after: attempt, outcome, using: &random)
        }

        /// `value` when it is finite and from 0 to `limit`; `fallback` (at most `limit`) when it is not a number,
        /// `limit` when above, 0 when below.
        static func clean(_ value: Double, fallback: Double, limit: Double) -> Double {
            guard value.isFinite else { return min(fallback, limit) }
            return min(max(value, 0), limit)
        }
    }
#endif
