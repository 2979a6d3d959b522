import Foundation

extension RouteStore {
    /// The recording of `route` as imported: the raw version of its sync identifier when `route` is a processed one
    /// (smoothed, simplified, privacy-trimmed), else `route`. A workout's numbers, profiles and pictures measure it,
    /// since processed versions are for display.
    package func recording(of route: RouteSample) async throws(RouteKitError) -> RouteSample {
        try await rawRoute(source: route.source, syncIdentifier: route.sync.identifier) ?? route
    }

    /// A workout's whole series of `type`, in time order (held in memory: a series is small beside its route).
    package func allSamples(of type: QuantityType, workout: UUID) async throws(RouteKitError) -> [QuantitySample] {
        var out: [QuantitySample] = []
        for try await batch in samples(of: type, workout: workout, batchSize: 65_536) { out += batch.samples }
        return out
    }
}
