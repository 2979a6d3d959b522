// swift-tools-version: 6.1
//
// RouteKit's package-benchmark suite (ordo-one/benchmark), kept as its own package so that the
// benchmark dependencies never enter RouteKit's own build or `swift test`.
//
//     cd Benchmarks && swift package --disable-sandbox benchmark
//
// See BENCHMARKS-HOWTO.md.
import PackageDescription

let package = Package(
    name: "RouteKitBenchmarks",
    platforms: [.macOS(.v14)],
    dependencies: [
        // With the PostgreSQL store (the `Postgres` trait): FeedLatency takes a postgres:// URL too.
        .package(name: "RouteKit", path: "..", traits: ["Postgres"]),
        // Only the MallocInterposer trait (malloc statistics; nothing to install on Swift 6.3+).
        .package(url: "https://github.com/ordo-one/benchmark", exact: "1.38.1", traits: ["MallocInterposer"]),
    ],
    targets: [
        .executableTarget(
            name: "GPXParse",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "RouteKit", package: "RouteKit"),
                .product(name: "RouteKitIngest", package: "RouteKit"),
                .product(name: "RouteKitGPX", package: "RouteKit"),
            ],
            path: "Benchmarks/GPXParse",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        .executableTarget(
            name: "Store",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "RouteKit", package: "RouteKit"),
                .product(name: "RouteKitSQLite", package: "RouteKit"),
            ],
            path: "Benchmarks/Store",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        // Not a package-benchmark target: whole-process change-feed numbers (swift run -c release FeedLatency).
        .executableTarget(
            name: "FeedLatency",
            dependencies: [
                .product(name: "RouteKit", package: "RouteKit"),
                .product(name: "RouteKitSQLite", package: "RouteKit"),
                .product(name: "RouteKitPostgres", package: "RouteKit"),
            ],
            path: "Benchmarks/FeedLatency"
        ),
        // Not a package-benchmark target: a change set of 10,000 mixed objects (swift run -c release FeedObjects).
        .executableTarget(
            name: "FeedObjects",
            dependencies: [
                .product(name: "RouteKit", package: "RouteKit"),
                .product(name: "RouteKitSQLite", package: "RouteKit"),
                .product(name: "RouteKitPostgres", package: "RouteKit"),
            ],
            path: "Benchmarks/FeedObjects"
        ),
        // Not a package-benchmark target: pipeline quality against make_gpx.py's ground truth.
        .executableTarget(
            name: "PipelineQuality",
            dependencies: [
                .product(name: "RouteKit", package: "RouteKit"),
                .product(name: "RouteKitGEOS", package: "RouteKit"),
                .product(name: "RouteKitIngest", package: "RouteKit"),
                .product(name: "RouteKitGPX", package: "RouteKit"),
                .product(name: "RouteKitProcessing", package: "RouteKit"),
            ],
            path: "Benchmarks/PipelineQuality"
        ),
        // Not a package-benchmark target: the smoothing batch job with 1 and 2 workers.
        .executableTarget(
            name: "BatchScaling",
            dependencies: [
                .product(name: "RouteKit", package: "RouteKit"),
                .product(name: "RouteKitGEOS", package: "RouteKit"),
                .product(name: "RouteKitProcessing", package: "RouteKit"),
                .product(name: "RouteKitSQLite", package: "RouteKit"),
            ],
            path: "Benchmarks/BatchScaling"
        ),
    ]
)
