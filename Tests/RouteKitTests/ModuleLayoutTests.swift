import Foundation
import Testing

/// How the modules depend on each other, read from the sources and Package.swift (nothing is built or imported).
@Suite("Module layout")
struct ModuleLayoutTests {
    /// The repository's root: Tests/RouteKitTests/ModuleLayoutTests.swift → ../../..
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// The format-neutral ingest core and the formats that import through it, without the GPX module.
    static let withoutGPX = ["RouteKitIngest", "RouteKitFIT", "RouteKitTCX", "RouteKitHealth", "RouteKitGeoJSON"]

    /// The module a line imports (`import X`, `public import X`, `@_spi(S) import X`, `import struct X.Y`…), if it
    /// is an import.
    static func importedModule(_ line: String) -> String? {
        var words = line.split(whereSeparator: \.isWhitespace).map(String.init)
        while let first = words.first, first.hasPrefix("@") { words.removeFirst() }
        if let first = words.first, ["public", "package", "internal", "fileprivate", "private"].contains(first) {
            words.removeFirst()
        }
        guard words.first == "import", words.count >= 2 else { return nil }
        words.removeFirst()
        if ["typealias", "struct", "class", "enum", "protocol", "let", "var", "func"].contains(words[0]) {
            words.removeFirst()
        }
        return words.first?.split(separator: ".").first.map(String.init)
    }

    /// The dependency list of `target` in Package.swift's text (`.target(name: "X", dependencies: [ … ]`), `nil`
    /// when the target or its list is not found. Products and `.target(name:condition:)` dependencies, which name
    /// targets too, are not targets' declarations: a declaration starts with the name and has a dependency list.
    static func dependencies(of target: String, in manifest: String) -> String? {
        let text = manifest[...]
        var from = text.startIndex
        while let open = text.range(of: ".target(", range: from..<text.endIndex) {
            from = open.upperBound
            guard let call = balanced(text, from: open.upperBound, open: "(", close: ")") else { return nil }
            guard call.drop(while: \.isWhitespace).hasPrefix("name: \"\(target)\""),
                let list = call.range(of: "dependencies: [")
            else { continue }
            return balanced(call, from: list.upperBound, open: "[", close: "]").map(String.init)
        }
        return nil
    }

    /// The text from `start` to the `close` that balances an `open` just before `start`.
    static func balanced(_ text: Substring, from start: String.Index, open: Character, close: Character) -> Substring? {
        var depth = 1
        var i = start
        while i < text.endIndex {
            if text[i] == open {
                depth += 1
            } else if text[i] == close {
                depth -= 1
                if depth == 0 { return text[start..<i] }
            }
            i = text.index(after: i)
        }
        return nil
    }

    @Test(
        "RouteKitIngest, RouteKitFIT, RouteKitTCX, RouteKitHealth and RouteKitGeoJSON neither import RouteKitGPX nor depend on it"
    )
    func ingestCoreHasNoGPX() throws {
        let fm = FileManager.default
        for module in Self.withoutGPX {
            let folder = Self.root.appendingPathComponent("Sources/\(module)").path
            let files = try fm.subpathsOfDirectory(atPath: folder).filter { $0.hasSuffix(".swift") }
            #expect(!files.isEmpty, "no Swift file in Sources/\(module)")
            for file in files {
                let text = try String(contentsOfFile: folder + "/" + file, encoding: .utf8)
                for (n, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated()
                where Self.importedModule(String(line)) == "RouteKitGPX" {
                    Issue.record("Sources/\(module)/\(file):\(n + 1) imports RouteKitGPX: \(line)")
                }
            }
        }
        let manifest = try String(
            contentsOfFile: Self.root.appendingPathComponent("Package.swift").path, encoding: .utf8)
        for module in Self.withoutGPX {
            let dependencies = try #require(
                Self.dependencies(of: module, in: manifest), "no dependency list of \(module) in Package.swift")
            #expect(!dependencies.contains("\"RouteKitGPX\""), "\(module) depends on RouteKitGPX: [\(dependencies)]")
            if module != "RouteKitIngest" {
                #expect(dependencies.contains("\"RouteKitIngest\""), "\(module) does not depend on RouteKitIngest")
            }
        }
    }

    /// The modules that may import RouteKit's backend interface: the backends and the test kit.
    static let backendSPIImporters: Set<String> = ["RouteKitSQLite", "RouteKitPostgres", "RouteKitTesting"]

    @Test("only the backends and the test kit import @_spi(RouteKitBackend); the other modules use package doors")
    func backendSPIStaysWithTheBackends() throws {
        let fm = FileManager.default
        let sources = Self.root.appendingPathComponent("Sources").path
        for module in try fm.contentsOfDirectory(atPath: sources) where !Self.backendSPIImporters.contains(module) {
            let folder = sources + "/" + module
            for file in try fm.subpathsOfDirectory(atPath: folder) where file.hasSuffix(".swift") {
                let text = try String(contentsOfFile: folder + "/" + file, encoding: .utf8)
                for (n, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated()
                where line.contains("@_spi(RouteKitBackend)") && Self.importedModule(String(line)) == "RouteKit" {
                    Issue.record("Sources/\(module)/\(file):\(n + 1) imports the backend SPI: \(line)")
                }
            }
        }
    }

    @Test("RouteKitClient and its demo import no RouteKit module and depend on no RouteKit target: no server dependencies")
    func clientStandsAlone() throws {
        let fm = FileManager.default
        for module in ["RouteKitClient", "routekit-client-demo"] {
            let folder = Self.root.appendingPathComponent("Sources/\(module)").path
            let files = try fm.subpathsOfDirectory(atPath: folder).filter { $0.hasSuffix(".swift") }
            #expect(!files.isEmpty, "no Swift file in Sources/\(module)")
            for file in files {
                let text = try String(contentsOfFile: folder + "/" + file, encoding: .utf8)
                for (n, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                    guard let imported = Self.importedModule(String(line)), imported.hasPrefix("RouteKit"),
                        imported != "RouteKitClient"
                    else { continue }
                    Issue.record("Sources/\(module)/\(file):\(n + 1) imports \(imported): \(line)")
                }
            }
        }
        let manifest = try String(
            contentsOfFile: Self.root.appendingPathComponent("Package.swift").path, encoding: .utf8)
        let dependencies = try #require(
            Self.dependencies(of: "RouteKitClient", in: manifest), "no dependency list of RouteKitClient in Package.swift")
        #expect(!dependencies.contains("\"RouteKit"), "RouteKitClient depends on a RouteKit target: [\(dependencies)]")
        #expect(dependencies.contains("\"OpenAPIRuntime\""))
    }

    @Test("RouteKitClient's OpenAPI document is a link to the server's: one document, never a copy")
    func clientDocumentIsTheServers() throws {
        let link = Self.root.appendingPathComponent("Sources/RouteKitClient/openapi.yaml").path
        let destination = try FileManager.default.destinationOfSymbolicLink(atPath: link)
        #expect(destination == "../RouteKitServer/openapi.yaml")
        let through = try String(contentsOfFile: link, encoding: .utf8)
        #expect(through.hasPrefix("openapi: 3.1"))
    }

    @Test("the checks see what they look for: imports of every form, a target's dependency list")
    func checksWork() {
        #expect(Self.importedModule("import RouteKitGPX") == "RouteKitGPX")
        #expect(Self.importedModule("public import RouteKitGPX") == "RouteKitGPX")
        #expect(Self.importedModule("    @_spi(RouteKitBackend) package import RouteKitGPX") == "RouteKitGPX")
        #expect(Self.importedModule("@testable import RouteKitGPX") == "RouteKitGPX")
        #expect(Self.importedModule("import struct RouteKitGPX.GPXReader") == "RouteKitGPX")
        #expect(Self.importedModule("import RouteKitIngest") == "RouteKitIngest")
        #expect(Self.importedModule("// import RouteKitGPX") == nil)
        #expect(Self.importedModule("let x = 1") == nil)
        let manifest = """
            .library(name: "A", targets: ["A"]),
            .target(name: "A", dependencies: ["RouteKit", "RouteKitGPX"], swiftSettings: s),
            .target(name: "D", condition: .when(traits: ["T"])),
            .target(
                name: "B",
                dependencies: ["RouteKit", .product(name: "C", package: "c")],
                swiftSettings: s),
            """
        #expect(Self.dependencies(of: "A", in: manifest) == #""RouteKit", "RouteKitGPX""#)
        #expect(Self.dependencies(of: "B", in: manifest) == #""RouteKit", .product(name: "C", package: "c")"#)
        #expect(Self.dependencies(of: "D", in: manifest) == nil)
    }
}
