import Foundation

/// Checks written GPX against GPX 1.1's schema (`../shared/schemas/gpx-1.1.xsd`) with `xmllint`, when both are
/// there: the one check every test of written GPX uses.
public enum GPXSchema {
    /// The schema beside the repository, `nil` when absent.
    public static let path: String? = {
        let path = SharedData.repository.deletingLastPathComponent().appendingPathComponent(
            "shared/schemas/gpx-1.1.xsd"
        )
        .path
        return FileManager.default.fileExists(atPath: path) ? path : nil
    }()

    /// `xmllint`, `nil` when not installed.
    public static let xmllint: String? = ["/usr/bin/xmllint", "/usr/local/bin/xmllint", "/opt/homebrew/bin/xmllint"]
        .first { FileManager.default.isExecutableFile(atPath: $0) }

    /// What a check found.
    public enum Outcome: Sendable, Equatable {
        /// The document validates.
        case valid
        /// It does not: what `xmllint` said (at most 2,000 characters).
        case invalid(String)
        /// `xmllint` or the schema is missing: nothing was checked.
        case unavailable
    }

    /// Checks the GPX file at `path`.
    public static func check(file path: String) throws -> Outcome {
        guard let schema = Self.path, let xmllint else { return .unavailable }
        let result = try runChildProcess(URL(fileURLWithPath: xmllint), ["--noout", "--schema", schema, path])
        return result.status == 0 ? .valid : .invalid(String((result.output + result.errorOutput).prefix(2_000)))
    }

    /// Checks `bytes` (written to a temporary file named after `name`).
    public static func check(_ bytes: [UInt8], name: String) throws -> Outcome {
        guard Self.path != nil, xmllint != nil else { return .unavailable }
        let file = FileManager.default.temporaryDirectory.appendingPathComponent(
            "routekit-\(UUID().uuidString)-\(name)")
        try Data(bytes).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        return try check(file: file.path)
    }

    /// Whether a missing `xmllint` or schema must fail the test: in CI (`$CI` set) the check must run.
    public static var required: Bool { ProcessInfo.processInfo.environment["CI"] != nil }

    /// What a test should record about the GPX file at `path`: `nil` when it validates (or cannot be checked outside
    /// CI), else the problem.
    public static func problem(file path: String) throws -> String? { describe(try check(file: path), path) }

    /// What a test should record about `bytes` (see ``problem(file:)``).
    public static func problem(_ bytes: [UInt8], name: String) throws -> String? {
        describe(try check(bytes, name: name), name)
    }

    static func describe(_ outcome: Outcome, _ name: String) -> String? {
        switch outcome {
        case .valid: nil
        case .invalid(let output): "\(name) does not validate against GPX 1.1: \(output)"
        case .unavailable:
            required ? "xmllint or ../shared/schemas/gpx-1.1.xsd missing in CI: \(name) was not validated" : nil
        }
    }
}

/// GPX fixtures several test targets share.
public enum GPXFixtures {
    /// A `<metadata>` element with every child GPX 1.1 gives it (name, desc, author with email and link, copyright,
    /// two links, a time with an offset and a fraction, keywords, bounds, an unknown extension), indented for a
    /// document's second level.
    public static let everyMetadataElement = """
          <metadata>
            <name>Lunch ride</name>
            <desc>Around the lake &amp; back</desc>
            <author>
              <name>Jo Rider</name>
              <email id="jo" domain="example.org"/>
              <link href="https://example.org/jo"><text>Jo's page</text><type>text/html</type></link>
            </author>
            <copyright author="Jo Rider"><year>2024</year><license>https://creativecommons.org/licenses/by/4.0/</license></copyright>
            <link href="https://example.org/rides/1"><text>The ride</text></link>
            <link href="https://example.org/rides/1.gpx"/>
            <time>2024-05-01T08:00:00.123+02:00</time>
            <keywords>lake, lunch</keywords>
            <bounds minlat="47.3" minlon="8.5" maxlat="47.31" maxlon="8.51"/>
            <extensions><x:note xmlns:x="urn:example:unknown" a="1">kept <x:b/> as is</x:note></extensions>
          </metadata>
        """
}
