#if Server
    import Foundation
    import Logging
    import RouteKit
    import ServiceLifecycle

    /// Discards pending route builders left untouched for ``ServerConfiguration/pendingBuilderExpirySeconds``: an
    /// upload interrupted halfway, a phone that never came back. Without it they stay until the same file is uploaded
    /// again. Checks every quarter of that time (at most hourly); every discard is logged with the builder's id.
    struct BuilderExpiry: Service {
        let store: any RouteStore & PeopleStore
        let expirySeconds: Double
        let logger: Logger

        /// How often the check runs.
        var interval: Duration { .seconds(min(3600, max(0.05, expirySeconds / 4))) }

        /// Sweeps until the server shuts down; then returns without an error (a service that throws at shutdown
        /// would make the server exit with a failure).
        func run() async throws {
            await cancelWhenGracefulShutdown {
                while !Task.isCancelled && !Task.isShuttingDownGracefully {
                    do {
                        try await Task.sleep(for: interval)
                    } catch {
                        return
                    }
                    await sweep()
                }
            }
        }

        /// One check: the builders past their time discarded.
        func sweep() async {
            let cutoff = Date(timeIntervalSinceNow: -expirySeconds)
            do throws(RouteKitError) {
                // Only the people who have one past its time: one query, then one sweep each.
                for person in try await store.peopleWithPendingBuilders(updatedBefore: cutoff) {
                    try await sweep(store.forPerson(person), before: cutoff)
                }
            } catch {
                logger.warning("could not expire pending route builders", metadata: ["code": "\(error.code)"])
            }
        }

        func sweep(_ store: any RouteStore, before cutoff: Date) async throws(RouteKitError) {
            for builder in try await store.discardPendingBuilders(updatedBefore: cutoff) {
                logger.notice(
                    "discarded a pending route builder untouched past its expiry",
                    metadata: [
                        "builder": "\(builder.id.uuidString.lowercased())", "source": "\(builder.source)",
                        "locations": "\(builder.progress.locationCount)",
                    ])
            }
        }
    }
#endif
