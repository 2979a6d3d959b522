#if Postgres
    import RouteKitPostgres

    /// The example of RouteKit's "Storage backends" article and RouteKitPostgres's landing page, compiled in the
    /// `--traits Postgres` build (it needs that server, so it is not run). The `// snippet.NAME` … `// snippet.end`
    /// region is, once de-indented, a ```swift block of the catalogs: scripts/docs.sh checks it.
    enum PostgresDocumentationExamples {
        static func open() async throws {
            // snippet.postgres-open
            let store = try await PostgresStore(url: "postgres://routekit@db.example.org:5432/routes?sslmode=verify-full")
            defer { store.close() }
            // snippet.end
            print(store.label)
        }
    }
#endif
