#if Server
    @testable import RouteKitServer
    import Testing

    @Suite("routekit serve: when freed memory goes back to the system")
    struct TrimScheduleTests {
        /// The schedule's answers to open-stream counts, one a second from `start`.
        static func answers(_ counts: [Int], _ schedule: inout TrimSchedule) -> [Bool] {
            let t0 = ContinuousClock.now
            return counts.enumerated().map { second, open in schedule.tick(open: open, now: t0 + .seconds(second)) }
        }

        @Test("1,000 streams closing: trims 3 s after they went and after the heartbeat, not at once, not again")
        func burst() {
            var schedule = TrimSchedule(heartbeat: .seconds(5))
            let trims = Self.answers([1_000] + Array(repeating: 0, count: 19), &schedule)
            // Closed at second 1: due at seconds 4 and 8 (1 + 5 + 2).
            #expect(trims.indices.filter { trims[$0] } == [4, 8])
        }

        @Test("half the followers leaving triggers a trim; fewer leaving, or a few coming and going, never do")
        func partialAndSmall() {
            var partial = TrimSchedule()
            #expect(Self.answers([500, 300, 240, 240, 240, 240, 240], &partial) == [false, false, false, false, false, true, false])
            var small = TrimSchedule()
            #expect(!Self.answers((0..<100).map { $0 % 2 == 0 ? 10 : 0 }, &small).contains(true))
            var few = TrimSchedule()
            #expect(!Self.answers([1_000, 900, 800, 700, 600, 600, 600, 600], &few).contains(true))
        }
    }
#endif
