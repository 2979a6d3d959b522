#if Postgres
    import RouteKit
    import RouteKitPostgres

    /// The examples of RouteKit's "Storage backends" article and RouteKitPostgres's landing page, compiled in the
    /// `--traits Postgres` build (they need that server, so they are not run). Each `// snippet.NAME` …
    /// `// snippet.end` region is, once de-indented, a ```swift block of the catalogs: scripts/docs.sh checks them.
    enum PostgresDocumentationExamples {
        static func open() async throws {
            // snippet.postgres-open
            let store = try await PostgresStore(url: "postgres://routekit@db.example.org:5432/routes?sslmode=verify-full")
            defer { store.close() }
            // snippet.end
            print(store.label)
        }

        static func people(_ store: PostgresStore) async throws {
            // snippet.postgres-people
            let ana = Person(name: "Ana")
            try await store.addPerson(ana)
            let anas = store.forPerson(ana.id)  // sees and writes only Ana's objects and feed
            // snippet.end
            print(anas.person)
        }
    }
#endif
