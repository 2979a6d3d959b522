// swift-tools-version: 6.1
// libFuzzer targets for RouteKit, kept out of the main package so its build never needs the fuzzer runtime.
// Build and run with ./run.sh (see README.md).

import PackageDescription

let package = Package(
    name: "FuzzTesting",
    platforms: [.macOS(.v14)],
    dependencies: [
        .package(name: "RouteKit", path: "..")
    ],
    targets: [
        // Declares libFuzzer's LLVMFuzzerRunDriver (the runtime comes with -sanitize=fuzzer).
        .systemLibrary(name: "CLibFuzzer"),
        .executableTarget(
            name: "FuzzGPXReader",
            dependencies: [
                "CLibFuzzer",
                .product(name: "RouteKit", package: "RouteKit"),
                .product(name: "RouteKitIngest", package: "RouteKit"),
                .product(name: "RouteKitGPX", package: "RouteKit"),
            ]
        ),
        .executableTarget(
            name: "FuzzFITDecoder",
            dependencies: [
                "CLibFuzzer",
                .product(name: "RouteKit", package: "RouteKit"),
                .product(name: "RouteKitFIT", package: "RouteKit"),
                .product(name: "RouteKitIngest", package: "RouteKit"),
            ]
        ),
        .executableTarget(
            name: "FuzzZipReader",
            dependencies: [
                "CLibFuzzer",
                .product(name: "RouteKit", package: "RouteKit"),
                .product(name: "RouteKitImport", package: "RouteKit"),
            ]
        ),
        .executableTarget(
            name: "FuzzHealthScanner",
            dependencies: [
                "CLibFuzzer",
                .product(name: "RouteKit", package: "RouteKit"),
                .product(name: "RouteKitHealth", package: "RouteKit"),
            ]
        ),
        .executableTarget(
            name: "FuzzTCXDocument",
            dependencies: [
                "CLibFuzzer",
                .product(name: "RouteKit", package: "RouteKit"),
                .product(name: "RouteKitTCX", package: "RouteKit"),
            ]
        ),
    ]
)
