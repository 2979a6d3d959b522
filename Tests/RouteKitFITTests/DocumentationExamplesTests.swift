import RouteKitFIT
import Testing

/// The example of RouteKitFIT's DocC catalog, run on a generated activity. The `// snippet.NAME` …
/// `// snippet.end` region is, once de-indented, a ```swift block of the catalog: scripts/docs.sh checks it.
@Suite("Documentation examples (RouteKitFIT)")
struct FITDocumentationExamplesTests {
    @Test("The landing page: counting records with the push decoder")
    func landingPage() throws {
        let bytes = activityFIT(records: 12).file()
        // snippet.fit-landing
        var decoder = FITDecoder()
        var records = 0
        try decoder.feed(bytes) { event in
            if case .message(let m) = event, m.globalNumber == 20, m.integer(field: 0) != nil { records += 1 }
        }
        try decoder.finish { _ in }
        print(records, decoder.warnings)
        // snippet.end
        #expect(records == 12)
    }
}
