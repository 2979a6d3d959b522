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
        .library(name: "RouteKitGPX", targets: ["RouteKitGPX"]),
        .library(name: "RouteKitGEOS", targets: ["RouteKitGEOS"]),
        .library(name: "RouteKitSQLite", targets: ["RouteKitSQLite"]),
        .library(name: "RouteKitProcessing", targets: ["RouteKitProcessing"]),
        .executable(name: "routekit", targets: ["routekit"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
    ],
    targets: [
        // The model: locations, workouts, routes, sources, sync identity, quantity series, errors.
        // No SQL and no GEOS in here.
        .target(name: "RouteKit", swiftSettings: swiftSettings),

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
            name: "RouteKitProcessing", dependencies: ["RouteKit", "RouteKitGEOS", "CMalloc"],
            swiftSettings: swiftSettings),
        // glibc's mallopt, for the batch job's allocator settings (part of libc: no library to link).
        .systemLibrary(name: "CMalloc"),

        // zlib, for gzip-compressed GPX.
        .systemLibrary(
            name: "CZlib",
            pkgConfig: "zlib",
            providers: [.apt(["zlib1g-dev"]), .brew(["zlib"])]
        ),
        // Streaming GPX reader, GPX 1.1 writer, GeoJSON and CSV export.
        .target(name: "RouteKitGPX", dependencies: ["RouteKit", "CZlib"], swiftSettings: swiftSettings),

        // The embedded default store: one SQLite file (WAL) through GRDB.
        .target(
            name: "RouteKitSQLite",
            dependencies: ["RouteKit", .product(name: "GRDB", package: "GRDB.swift")],
            swiftSettings: swiftSettings
        ),

        // Support for tests: the store conformance suite every backend runs, deterministic randomness,
        // child processes.
        .target(name: "RouteKitTesting", dependencies: ["RouteKit"], swiftSettings: swiftSettings),

        .executableTarget(
            name: "routekit",
            dependencies: [
                "RouteKit", "RouteKitGPX", "RouteKitGEOS", "RouteKitSQLite", "RouteKitProcessing",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: swiftSettings
        ),

        .testTarget(
            name: "RouteKitTests", dependencies: ["RouteKit", "RouteKitTesting"], swiftSettings: swiftSettings),
        .testTarget(
            name: "RouteKitSQLiteTests",
            dependencies: [
                "RouteKitSQLite", "RouteKitGPX", "RouteKitTesting", .product(name: "GRDB", package: "GRDB.swift"),
            ],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "RouteKitProcessingTests",
            dependencies: ["RouteKitProcessing", "RouteKitGPX", "RouteKitTesting", "RouteKitSQLite"],
            swiftSettings: swiftSettings),
        .testTarget(name: "RouteKitGEOSTests", dependencies: ["RouteKitGEOS"], swiftSettings: swiftSettings),
        .testTarget(
            name: "RouteKitGPXTests", dependencies: ["RouteKitGPX", "RouteKitTesting"], swiftSettings: swiftSettings),
        // End-to-end tests of the built `routekit` executable (it is a dependency so it gets built first).
        .testTarget(
            name: "RoutekitCLITests", dependencies: ["routekit", "RouteKitTesting", "RouteKitSQLite"],
            swiftSettings: swiftSettings),
    ]
)
