#if Server
    import Foundation
    import RouteKitServer
    import RouteKitTesting
    import Testing

    @Suite("Webhooks: the retry policy")
    struct WebhookRetryPolicyTests {
        /// The delay of a retry step, `nil` for any other step.
        static func delay(_ step: WebhookRetryPolicy.Step) -> Duration? {
            if case .retry(let after) = step { return after }
            return nil
        }

        @Test("full jitter: after attempt n a delay from 0 to min(1 h, 5 s × 2^(n−1)), spread over that range")
        func bounds() throws {
            let policy = WebhookRetryPolicy()
            var random = SplitMix64(seed: 28)
            for attempt in 1..<8 {
                let ceiling = min(3600, 5 * pow(2, Double(attempt - 1)))
                #expect(policy.ceiling(after: attempt) == ceiling)
                var shortest = Duration.seconds(ceiling)
                var longest = Duration.zero
                for _ in 0..<400 {
                    let step = policy.next(after: attempt, .failed(503), using: &random)
                    let delay = try #require(Self.delay(step))
                    #expect(delay >= .zero)
                    #expect(delay <= .seconds(ceiling))
                    shortest = min(shortest, delay)
                    longest = max(longest, delay)
                }
                // Full jitter, not a fixed delay: 400 draws reach both ends of the range.
                #expect(shortest < .seconds(ceiling * 0.1))
                #expect(longest > .seconds(ceiling * 0.9))
            }
        }

        @Test("the cap: a late attempt waits at most an hour")
        func cap() throws {
            var policy = WebhookRetryPolicy()
            policy.maxAttempts = 1000
            var random = SplitMix64(seed: 1)
            #expect(policy.ceiling(after: 11) == 3600)
            #expect(policy.ceiling(after: 999) == 3600)
            for attempt in [11, 12, 50, 999] {
                let step = policy.next(after: attempt, .timedOut, using: &random)
                let delay = try #require(Self.delay(step))
                #expect(delay <= .seconds(3600))
            }
        }

        @Test("the same seed gives the same schedule")
        func deterministic() {
            let policy = WebhookRetryPolicy()
            var first = SplitMix64(seed: 42)
            var second = SplitMix64(seed: 42)
            var third = SplitMix64(seed: 43)
            let outcome = WebhookDeliveryOutcome.unreachable("connection refused")
            let a = (1..<8).map { policy.next(after: $0, outcome, using: &first) }
            let b = (1..<8).map { policy.next(after: $0, outcome, using: &second) }
            let c = (1..<8).map { policy.next(after: $0, outcome, using: &third) }
            #expect(a == b)
            #expect(a != c)
        }

        @Test("after the last attempt the subscription pauses, saying how many attempts failed and how the last did")
        func pause() {
            let policy = WebhookRetryPolicy()
            var random = SplitMix64(seed: 3)
            let seventh = policy.next(after: 7, .failed(500), using: &random)
            #expect(Self.delay(seventh) != nil)
            let eighth = policy.next(after: 8, .failed(500), using: &random)
            #expect(eighth == .pause(reason: "8 attempts failed; the last: the receiver answered 500"))
            let late = policy.next(after: 9, .timedOut, using: &random)
            #expect(late == .pause(reason: "8 attempts failed; the last: the receiver did not answer in time"))
        }

        @Test("delivered advances, 410 removes, a refused target pauses at once")
        func otherOutcomes() {
            let policy = WebhookRetryPolicy()
            var random = SplitMix64(seed: 5)
            let delivered = policy.next(after: 1, .delivered(200), using: &random)
            let deliveredLate = policy.next(after: 5, .delivered(204), using: &random)
            let gone = policy.next(after: 1, .gone, using: &random)
            #expect(delivered == .advance)
            #expect(deliveredLate == .advance)
            #expect(gone == .remove)
            let refused = policy.next(after: 1, .refusedTarget("the host 'x' is a loopback address"), using: &random)
            #expect(refused == .pause(reason: "the receiver is not allowed: the host 'x' is a loopback address"))
        }

        @Test("settings that are not numbers or out of range fall back, and never trap")
        func badSettings() throws {
            var policy = WebhookRetryPolicy()
            policy.baseSeconds = .nan
            policy.factor = .infinity
            policy.capSeconds = -5
            policy.maxAttempts = 0
            var random = SplitMix64(seed: 9)
            #expect(policy.ceiling(after: 3) == 0)
            let step = policy.next(after: 1, .failed(500), using: &random)
            #expect(step == .pause(reason: "1 attempt failed; the last: the receiver answered 500"))
            var huge = WebhookRetryPolicy()
            huge.capSeconds = 1e300
            huge.maxAttempts = 100
            #expect(huge.ceiling(after: 90) == 30 * 86_400)
            let hugeStep = huge.next(after: 90, .failed(500), using: &random)
            let delay = try #require(Self.delay(hugeStep))
            #expect(delay <= .seconds(30 * 86_400))
        }
    }
#endif
