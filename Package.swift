// swift-tools-version: 6.1
import PackageDescription

let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

let package = Package(
    name: "RouteKit",
    platforms: [.macOS(.v14)],
    products: [
        .library(name: "RouteKit", targets: ["RouteKit"]),
        .library(name: "RouteKitIngest", targets: ["RouteKitIngest"]),
        .library(name: "RouteKitGPX", targets: ["RouteKitGPX"]),
        .library(name: "RouteKitGEOS", targets: ["RouteKitGEOS"]),
        .library(name: "RouteKitFIT", targets: ["RouteKitFIT"]),
        .library(name: "RouteKitImport", targets: ["RouteKitImport"]),
        .library(name: "RouteKitTCX", targets: ["RouteKitTCX"]),
        .library(name: "RouteKitHealth", targets: ["RouteKitHealth"]),
        .library(name: "RouteKitSQLite", targets: ["RouteKitSQLite"]),
        .library(name: "RouteKitProcessing", targets: ["RouteKitProcessing"]),
        .library(name: "RouteKitPostgres", targets: ["RouteKitPostgres"]),
        .library(name: "RouteKitServer", targets: ["RouteKitServer"]),
        .library(name: "RouteKitRender", targets: ["RouteKitRender"]),
        // The Swift client of the HTTP API, for apps: empty unless the `Client` trait is enabled.
        .library(name: "RouteKitClient", targets: ["RouteKitClient"]),
        .executable(name: "routekit", targets: ["routekit"]),
    ],
    traits: [
        // Off by default: postgres-nio (SwiftNIO, swift-crypto, NIOSSL) takes minutes to build, and people who use
        // only the embedded SQLite store should not pay for it. `swift build --traits Postgres` builds the
        // PostgreSQL store into RouteKitPostgres and `routekit`.
        .trait(name: "Postgres", description: "The PostgreSQL store (postgres-nio) in RouteKitPostgres and routekit."),
        // Off by default for the same reason (Hummingbird 2 and SwiftNIO take minutes): `swift build --traits Server`
        // builds the HTTP service into RouteKitServer and `routekit serve` / `routekit tokens`.
        .trait(name: "Server", description: "The HTTP service (Hummingbird 2) in RouteKitServer and routekit."),
        // Off by default too: the client is generated at build time by swift-openapi-generator, whose build
        // (OpenAPIKit, Yams, swift-algorithms, swift-collections) takes minutes, and nothing else needs it.
        // `swift build --traits Client` builds RouteKitClient (its tests also need `Server`, for the `routekit serve`
        // they run against).
        .trait(
            name: "Client",
            description: "The Swift client of the HTTP API (RouteKitClient), generated from the OpenAPI document."),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        .package(url: "https://github.com/weichsel/ZIPFoundation", from: "0.9.20"),
        .package(url: "https://github.com/yaslab/CSV.swift", from: "2.5.2"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/apple/swift-crypto", "3.12.3"..<"5.0.0"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.35.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        // Identity providers' tokens (`routekit serve --jwks`): JWS verification (RS256, ES256, EdDSA) and JSON Web Key
        // Sets, on swift-crypto. Built only with the `Server` trait.
        .package(url: "https://github.com/vapor/jwt-kit", from: "5.7.1"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        // `routekit serve`'s settings from ROUTEKIT_ environment variables and a JSON or YAML file (--config). Already
        // in the graph through Hummingbird; the YAML trait brings Yams, which the file's key check reads too. Both are
        // built only with the `Server` trait.
        .package(url: "https://github.com/apple/swift-configuration", from: "1.4.0", traits: [.defaults, "YAML"]),
        .package(url: "https://github.com/jpsim/Yams", from: "6.0.0"),
        // `swift package generate-documentation` (make docs): a command plugin, built only when it is invoked.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
        // The Swift client (the `Client` trait only): the generator, run at build time by RouteKitClientGenerator, the
        // runtime its code links, and the transports (AsyncHTTPClient's on Linux, URLSession's on Apple platforms).
        .package(url: "https://github.com/apple/swift-openapi-generator", from: "1.14.3"),
        .package(url: "https://github.com/apple/swift-openapi-runtime", from: "1.13.4"),
        .package(url: "https://github.com/swift-server/swift-openapi-async-http-client", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-openapi-urlsession", from: "1.4.0"),
    ],
    targets: [
        // The model: locations, workouts, routes, sources, sync identity, quantity series, errors.
        // No SQL and no GEOS in here.
        .target(name: "RouteKit", dependencies: ["CRouteKitSystem"], swiftSettings: swiftSettings),

        // GEOS's C API (libgeos_c), re-entrant functions only; see Sources/CGEOS/shim.h.
        .systemLibrary(
            name: "CGEOS",
            pkgConfig: "geos",
            providers: [.apt(["libgeos-dev"]), .brew(["geos"])]
        ),
        // A small safe Swift layer over CGEOS. No C type appears in its public API.
        .target(name: "RouteKitGEOS", dependencies: ["RouteKit", "CGEOS"], swiftSettings: swiftSettings),

        // The processing pipeline: outlier removal, Kalman/RTS smoothing, GEOS simplification, metrics.
        .target(
            name: "RouteKitProcessing", dependencies: ["RouteKit", "RouteKitGEOS", "CRouteKitSystem"],
            swiftSettings: swiftSettings),
        // The system calls beyond Foundation: glibc's allocator tuning (mallopt, malloc_trim), thread names and ids
        // (part of libc: no library to link).
        .systemLibrary(name: "CRouteKitSystem"),

        // zlib, for gzip-compressed input (any format) and zip archives.
        .systemLibrary(
            name: "CRouteKitZlib",
            pkgConfig: "zlib",
            providers: [.apt(["zlib1g-dev"]), .brew(["zlib"])]
        ),
        // libdeflate: whole gzip entries held in memory (an archive's `.gpx.gz`), several times faster than zlib.
        .systemLibrary(
            name: "CLibdeflate",
            pkgConfig: "libdeflate",
            providers: [.apt(["libdeflate-dev"]), .brew(["libdeflate"])]
        ),
        // What every format's importer shares, no format's parser: the point and event model they convert to (the
        // GPX 1.1 data model, names and all), the import engine (a track's identity, resume and storage, ImportResult),
        // input files told apart by content, gzip, byte sources, and the writer protocol.
        .target(
            name: "RouteKitIngest", dependencies: ["RouteKit", "CRouteKitZlib", "CLibdeflate"],
            swiftSettings: swiftSettings),

        // Streaming GPX reader, GPX 1.1 writer, the GPX importer.
        .target(
            name: "RouteKitGPX", dependencies: ["RouteKit", "RouteKitIngest", "CRouteKitSystem"],
            swiftSettings: swiftSettings),

        // Garmin FIT: a streaming decoder and the importer (sessions as workouts, records as routes and series).
        .target(name: "RouteKitFIT", dependencies: ["RouteKit", "RouteKitIngest"], swiftSettings: swiftSettings),

        // Every way in behind one call: formats told by content, zip archives in memory, Strava bulk exports.
        .target(
            name: "RouteKitImport",
            dependencies: [
                "RouteKit", "RouteKitIngest", "RouteKitGPX", "RouteKitFIT", "RouteKitTCX", "RouteKitHealth",
                "RouteKitGeoJSON", "CRouteKitZlib", .product(name: "CSV", package: "CSV.swift"),
            ],
            swiftSettings: swiftSettings),

        // GeoJSON (RFC 7946) read whole (up to a size limit) by a JSON reader of its own, a feature at a time: lines as
        // tracks or routes, points as waypoints, togeojson's coordTimes as times (package access, no product: reached
        // through RouteKitImport and the doors).
        .target(name: "RouteKitGeoJSON", dependencies: ["RouteKit", "RouteKitIngest"], swiftSettings: swiftSettings),

        // Garmin TCX (Training Center Database v2) through Foundation's XMLParser: activities as workouts with
        // routes and series, courses as planned routes.
        .target(name: "RouteKitTCX", dependencies: ["RouteKit", "RouteKitIngest"], swiftSettings: swiftSettings),

        // Apple Health exports (`export.xml` and `workout-routes/`) through a streaming scanner of our own:
        // workouts with their GPX routes, heart rate and power as series, effort scores.
        .target(name: "RouteKitHealth", dependencies: ["RouteKit", "RouteKitIngest"], swiftSettings: swiftSettings),

        // The embedded default store: one SQLite file (WAL) through GRDB.
        .target(
            name: "RouteKitSQLite",
            dependencies: ["RouteKit", "CRouteKitSystem", .product(name: "GRDB", package: "GRDB.swift")],
            swiftSettings: swiftSettings
        ),

        // The shared store on PostgreSQL (postgres-nio). Empty unless the `Postgres` trait is enabled.
        .target(
            name: "RouteKitPostgres",
            dependencies: [
                "RouteKit",
                .product(name: "PostgresNIO", package: "postgres-nio", condition: .when(traits: ["Postgres"])),
                .product(name: "Logging", package: "swift-log", condition: .when(traits: ["Postgres"])),
                .product(name: "NIOCore", package: "swift-nio", condition: .when(traits: ["Postgres"])),
                .product(name: "NIOSSL", package: "swift-nio-ssl", condition: .when(traits: ["Postgres"])),
                .product(
                    name: "ServiceLifecycle", package: "swift-service-lifecycle", condition: .when(traits: ["Postgres"])
                ),
            ],
            swiftSettings: swiftSettings
        ),

        // The HTTP service: upload, read, tail the change feed (JSON, long-poll, Server-Sent Events), API tokens.
        // Empty unless the `Server` trait is enabled.
        .target(
            name: "RouteKitServer",
            dependencies: [
                "RouteKit", "RouteKitIngest", "RouteKitGPX", "RouteKitImport", "RouteKitGEOS", "RouteKitProcessing",
                "RouteKitRender", "RouteKitApplication", "RouteKitSQLite",
                .product(name: "Hummingbird", package: "hummingbird", condition: .when(traits: ["Server"])),
                // The basemap's tile server, fetched by the server (`routekit serve --tiles`).
                .product(
                    name: "AsyncHTTPClient", package: "async-http-client", condition: .when(traits: ["Server"])),
                .product(name: "NIOHTTP1", package: "swift-nio", condition: .when(traits: ["Server"])),
                .product(name: "Crypto", package: "swift-crypto", condition: .when(traits: ["Server"])),
                .product(name: "Logging", package: "swift-log", condition: .when(traits: ["Server"])),
                .product(name: "HTTPTypes", package: "swift-http-types", condition: .when(traits: ["Server"])),
                .product(name: "NIOCore", package: "swift-nio", condition: .when(traits: ["Server"])),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras", condition: .when(traits: ["Server"])),
                .product(
                    name: "ServiceLifecycle", package: "swift-service-lifecycle", condition: .when(traits: ["Server"])),
                .product(name: "Prometheus", package: "swift-prometheus", condition: .when(traits: ["Server"])),
                // An identity provider's JWTs, checked against its key set (`routekit serve --jwks`).
                .product(name: "JWTKit", package: "jwt-kit", condition: .when(traits: ["Server"])),
            ],
            resources: [
                .embedInCode("openapi.yaml"), .embedInCode("Web/index.html"), .embedInCode("Web/app.js"),
                .embedInCode("Web/app.css"),
            ],
            swiftSettings: swiftSettings
        ),

        // cairo (libcairo2-dev: its headers here, the library opened with dlopen when a PNG is first drawn or read,
        // so that no other command loads it and the 16 libraries it needs), the rasteriser behind PNG output.
        .target(
            name: "CCairo",
            cSettings: [.unsafeFlags(["-I/opt/homebrew/include", "-I/usr/local/include"], .when(platforms: [.macOS]))],
            linkerSettings: [.linkedLibrary("dl", .when(platforms: [.linux]))]
        ),
        // Pictures: route maps and profiles as SVG (written directly) and PNG (cairo), heatmaps.
        .target(
            name: "RouteKitRender", dependencies: ["RouteKit", "RouteKitProcessing", "RouteKitGEOS", "CCairo"],
            swiftSettings: swiftSettings),

        // The application both doors (routekit and RouteKitServer) call, package access and no product: the wire
        // shapes (every JSON and CSV shape), defined once, the GeoJSON and CSV writers and the export of a store's
        // routes as events, a person's archive (a zip written with ZIPFoundation, which reads nothing untrusted
        // here: RouteKitImport reads uploaded zips with a reader of its own), the smoothing job (workers on GEOS
        // threads), a workout list's stored figures, and the writes both doors make: deleting a route or a workout,
        // relating and unrelating effort scores.
        .target(
            name: "RouteKitApplication",
            dependencies: [
                "RouteKit", "RouteKitIngest", "RouteKitGPX", "RouteKitProcessing", "RouteKitRender",
                .product(name: "ZIPFoundation", package: "ZIPFoundation"),
            ],
            swiftSettings: swiftSettings),

        // Support for tests: the store conformance suite every backend runs, the in-memory reference store,
        // deterministic randomness, child processes.
        .target(name: "RouteKitTesting", dependencies: ["RouteKit"], swiftSettings: swiftSettings),

        // The Swift client of the HTTP API, for apps (HealthKit's recording, upload, the change feed): types and a
        // client generated from Sources/RouteKitServer/openapi.yaml (Sources/RouteKitClient/openapi.yaml is a link to
        // it) by swift-openapi-generator through RouteKitClientGenerator, and a hand-written public layer over them. No
        // RouteKit target: an app links the OpenAPI runtime and a transport, nothing of the server. Empty unless the
        // `Client` trait is enabled.
        .target(
            name: "RouteKitClient",
            dependencies: [
                .product(
                    name: "OpenAPIRuntime", package: "swift-openapi-runtime", condition: .when(traits: ["Client"])),
                .product(name: "HTTPTypes", package: "swift-http-types", condition: .when(traits: ["Client"])),
                .product(
                    name: "OpenAPIAsyncHTTPClient", package: "swift-openapi-async-http-client",
                    condition: .when(platforms: [.linux], traits: ["Client"])),
                .product(
                    name: "OpenAPIURLSession", package: "swift-openapi-urlsession",
                    condition: .when(platforms: [.macOS, .iOS, .tvOS, .watchOS, .visionOS], traits: ["Client"])),
            ],
            // Read by the plugin, which names them (an excluded file is no unhandled resource, with or without the
            // trait).
            exclude: ["openapi.yaml", "openapi-generator-config.yaml"],
            swiftSettings: swiftSettings,
            plugins: [.plugin(name: "RouteKitClientGenerator")]
        ),
        // swift-openapi-generator's build step for RouteKitClient, as the generator's own `OpenAPIGenerator` plugin
        // runs it, but behind the `Client` trait: a plugin usage cannot be conditional (SwiftPM 6.3), a plugin's
        // dependency can. Without the trait this plugin has no generator (nothing is built for it) and adds no command.
        .plugin(
            name: "RouteKitClientGenerator", capability: .buildTool(),
            dependencies: [
                .product(
                    name: "swift-openapi-generator", package: "swift-openapi-generator",
                    condition: .when(traits: ["Client"]))
            ]
        ),
        // A recorder and a follower over RouteKitClient, run by RouteKitClientTests as child processes that the
        // tests kill (a client process killed mid-recording, a follower killed and restarted with its anchor).
        .executableTarget(
            name: "routekit-client-demo", dependencies: ["RouteKitClient"], swiftSettings: swiftSettings),

        .executableTarget(
            name: "routekit",
            dependencies: [
                "RouteKit", "RouteKitIngest", "RouteKitGPX", "RouteKitFIT", "RouteKitImport", "RouteKitTCX",
                "RouteKitHealth", "RouteKitGeoJSON", "RouteKitGEOS",
                "RouteKitSQLite",
                "RouteKitProcessing", "RouteKitRender", "RouteKitApplication",
                .target(name: "RouteKitPostgres", condition: .when(traits: ["Postgres"])),
                .target(name: "RouteKitServer", condition: .when(traits: ["Server"])),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log", condition: .when(traits: ["Server", "Postgres"])),
                .product(name: "Hummingbird", package: "hummingbird", condition: .when(traits: ["Server"])),
                .product(
                    name: "ServiceLifecycle", package: "swift-service-lifecycle", condition: .when(traits: ["Server"])),
                .product(name: "Configuration", package: "swift-configuration", condition: .when(traits: ["Server"])),
                .product(name: "Yams", package: "Yams", condition: .when(traits: ["Server"])),
            ],
            swiftSettings: swiftSettings
        ),

        .testTarget(
            name: "RouteKitTests", dependencies: ["RouteKit", "RouteKitTesting"], swiftSettings: swiftSettings),
        .testTarget(
            name: "RouteKitSQLiteTests",
            dependencies: [
                "RouteKitSQLite", "RouteKitIngest", "RouteKitGPX", "RouteKitApplication", "RouteKitTesting",
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            swiftSettings: swiftSettings),
        // The conformance suites and PostgreSQL's own tests; they need `--traits Postgres` and a server
        // ($ROUTEKIT_TEST_POSTGRES), and say so when either is missing.
        .testTarget(
            name: "RouteKitPostgresTests",
            dependencies: [
                "RouteKitPostgres", "RouteKitTesting", "RouteKitGPX", "RouteKitProcessing",
                .product(name: "Logging", package: "swift-log", condition: .when(traits: ["Postgres"])),
                .product(
                    name: "ServiceLifecycle", package: "swift-service-lifecycle", condition: .when(traits: ["Postgres"])
                ),
            ],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "RouteKitProcessingTests",
            dependencies: ["RouteKitProcessing", "RouteKitGPX", "RouteKitTesting", "RouteKitSQLite"],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "RouteKitFITTests",
            dependencies: [
                "RouteKitFIT", "RouteKitIngest", "RouteKitGPX", "RouteKitSQLite", "RouteKitApplication",
                "RouteKitProcessing", "RouteKitTesting",
            ],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "RouteKitImportTests",
            dependencies: [
                "RouteKitImport", "RouteKitFIT", "RouteKitIngest", "RouteKitGPX", "RouteKitSQLite", "RouteKitTesting",
                .product(name: "ZIPFoundation", package: "ZIPFoundation"),
            ],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "RouteKitTCXTests",
            dependencies: ["RouteKitTCX", "RouteKitIngest", "RouteKitGPX", "RouteKitSQLite", "RouteKitTesting"],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "RouteKitGeoJSONTests",
            dependencies: [
                "RouteKitGeoJSON", "RouteKitImport", "RouteKitIngest", "RouteKitGPX", "RouteKitSQLite",
                "RouteKitApplication", "RouteKitTesting",
            ],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "RouteKitHealthTests",
            dependencies: ["RouteKitHealth", "RouteKitIngest", "RouteKitGPX", "RouteKitSQLite", "RouteKitTesting"],
            swiftSettings: swiftSettings),
        // The HTTP service's suites (router and live server); they need `--traits Server` and say so without it.
        .testTarget(
            name: "RouteKitServerTests",
            dependencies: [
                "RouteKitSQLite", "RouteKitTesting", "RouteKitGPX", "RouteKitRender",
                .product(name: "ZIPFoundation", package: "ZIPFoundation"),
                .target(name: "RouteKitServer", condition: .when(traits: ["Server"])),
                .product(name: "HummingbirdTesting", package: "hummingbird", condition: .when(traits: ["Server"])),
                .product(name: "AsyncHTTPClient", package: "async-http-client", condition: .when(traits: ["Server"])),
                .product(name: "NIOHTTP1", package: "swift-nio", condition: .when(traits: ["Server"])),
                .product(
                    name: "ServiceLifecycleTestKit", package: "swift-service-lifecycle",
                    condition: .when(traits: ["Server"])),
                // Keys made by the identity-provider tests, and tokens signed with them.
                .product(name: "JWTKit", package: "jwt-kit", condition: .when(traits: ["Server"])),
                .product(name: "Crypto", package: "swift-crypto", condition: .when(traits: ["Server"])),
                .product(name: "CryptoExtras", package: "swift-crypto", condition: .when(traits: ["Server"])),
            ],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "RouteKitRenderTests", dependencies: ["RouteKitRender", "RouteKitGPX", "RouteKitTesting"],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "RouteKitApplicationTests",
            dependencies: [
                "RouteKitApplication", "RouteKit", "RouteKitIngest", "RouteKitGPX", "RouteKitProcessing",
                "RouteKitTesting", .product(name: "ZIPFoundation", package: "ZIPFoundation"),
            ],
            swiftSettings: swiftSettings),
        .testTarget(name: "RouteKitGEOSTests", dependencies: ["RouteKitGEOS"], swiftSettings: swiftSettings),
        .testTarget(
            name: "RouteKitGPXTests", dependencies: ["RouteKitGPX", "RouteKitIngest", "RouteKitTesting"],
            swiftSettings: swiftSettings),
        // The Swift client against a live `routekit serve` (and its demo as child processes); they need
        // `--traits Client,Server` and say so without `Server`.
        .testTarget(
            name: "RouteKitClientTests",
            dependencies: ["RouteKitClient", "routekit", "routekit-client-demo", "RouteKitTesting"],
            swiftSettings: swiftSettings),
        // End-to-end tests of the built `routekit` executable (it is a dependency so it gets built first).
        .testTarget(
            name: "RoutekitCLITests",
            dependencies: [
                "routekit", "RouteKitTesting", "RouteKitSQLite", "RouteKitIngest", "RouteKitRender",
                .target(name: "RouteKitPostgres", condition: .when(traits: ["Postgres"])),
                .product(name: "ZIPFoundation", package: "ZIPFoundation"),
            ],
            swiftSettings: swiftSettings),
    ]
)

// ROUTEKIT_TSAN_OWN=1: the thread sanitizer on RouteKit's own targets only (scripts/test-tsan.sh --own, what CI
// runs): built in the --traits Postgres,Server build, whose dependencies are reused as they are, instead of a cold
// build of every dependency with `--sanitize=thread` (6½ minutes of CI's 24). Races inside the dependencies are theirs
// to find; RouteKit's own code, and every access of its memory from any thread, is checked.
if Context.environment["ROUTEKIT_TSAN_OWN"] != nil {
    for target in package.targets where target.type != .system && target.type != .plugin {
        target.swiftSettings = (target.swiftSettings ?? []) + [.unsafeFlags(["-sanitize=thread"])]
        target.linkerSettings = (target.linkerSettings ?? []) + [.unsafeFlags(["-sanitize=thread"])]
    }
}
