import Foundation
import RouteKit
import RouteKitGEOS
import RouteKitProcessing
import RouteKitSQLite
import RouteKitTesting
import Testing

/// The examples of RouteKitProcessing's DocC catalog, run. Each `// snippet.NAME` … `// snippet.end` region is,
/// once de-indented, a ```swift block of the catalog, character for character: scripts/docs.sh checks it.
@Suite("Documentation examples (RouteKitProcessing)")
struct ProcessingDocumentationExamplesTests {
    @Test("The landing page: one pipeline run")
    func landingPage() throws {
        let (_, locations) = noisyTrack(count: 500, seed: 3)
        // snippet.processing-landing
        let context = try GEOSContext()  // one per worker
        let result = try RoutePipeline().run(locations, activity: .running, context: context)
        print(result.locations.count)  // a subsequence, coordinates smoothed
        print(result.metrics.maxDeviationMetres)  // ≤ the tolerance, in the stage's projection
        // snippet.end
        #expect(result.locations.count < locations.count)
        #expect(result.metrics.maxDeviationMetres <= 5.001)
    }

    @Test("The processing pipeline: stages and a tolerance")
    func configuredPipeline() throws {
        let (_, locations) = noisyTrack(count: 500, seed: 4)
        // snippet.pipeline-run
        var configuration = PipelineConfiguration(stages: [.outliers, .smoothing, .simplification])
        configuration.simplification.toleranceMetres = 10
        let pipeline = RoutePipeline(configuration: configuration)
        let result = try withGEOSContext { context in
            try pipeline.run(locations, activity: .running, context: context)
        }
        print(result.metrics.pointsIn, result.metrics.pointsOut, result.metrics.maxDeviationMetres)
        // snippet.end
        #expect(result.metrics.pointsIn == 500)
        #expect(result.metrics.maxDeviationMetres <= 10.001)
        #expect(result.keptIndices.count == result.locations.count)
    }

    @Test("The processing pipeline: a stored route gets version 2, and a second run saves nothing")
    func processor() async throws {
        let store = try temporaryStore()
        let route = try await storedRoute(store, count: 500, seed: 5)
        // snippet.pipeline-processor
        let processor = RouteProcessor(store: store, pipeline: RoutePipeline())
        let context = try GEOSContext()  // one per worker task
        let outcome = try await processor.process(route.id, context: context)
        print(outcome.syncVersion ?? 0, outcome.metrics?.pointsOut ?? 0)  // version 2 of the same sync identifier
        if let newRoute = outcome.newRoute {
            let again = try await processor.process(newRoute, context: context)
            print(again.skipped ?? "")  // already processed with these parameters
        }
        // snippet.end
        #expect(outcome.syncVersion == 2)
        let newRoute = try #require(outcome.newRoute)
        #expect(try await processor.process(newRoute, context: context).skipped == "already processed with these parameters")
        #expect(try await store.rawRoute(source: route.source, syncIdentifier: route.sync.identifier)?.id == route.id)
    }
}
