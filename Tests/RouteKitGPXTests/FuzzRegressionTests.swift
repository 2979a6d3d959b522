import Foundation
import RouteKit
import Testing

@testable import RouteKitGPX

/// Replays the fuzzer's fail cases (FuzzTesting/FailCases) and a set of hand-written adversarial inputs through
/// the checks of the fuzz target (FuzzTesting/Sources/FuzzGPXReader), with issues instead of `fatalError`:
///
/// - the input parsed whole and in chunks gives the same document, or the same error code, line and column;
/// - a document that parses is written by `GPXWriter.data(for:)` and what it wrote reads back.
///
/// Every input must end in a `RouteKitError` or a document within ``FuzzChecks/deadline`` seconds: a parse that
/// takes longer is recorded as a hang (and left to finish on its own thread). Run under AddressSanitizer
/// (`swift test --sanitize=address --filter FuzzRegression`) to see memory errors the way the fuzzer does.
@Suite("Fuzz regressions")
struct FuzzRegressionTests {
    // MARK: Fail cases found by the fuzzer

    /// FuzzTesting/FailCases, from this file: Tests/RouteKitGPXTests → ../../FuzzTesting/FailCases.
    static let failCasesDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("FuzzTesting/FailCases")

    /// Every file in FailCases (whatever its name: libFuzzer's crash-/timeout-/oom- files too).
    static func failCases() -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: failCasesDirectory.path)) ?? []
        return names.filter { !$0.hasPrefix(".") && $0 != "README.md" }.sorted()
    }

    @Test("the fail cases directory is there and not empty")
    func failCasesPresent() {
        #expect(!Self.failCases().isEmpty, "no files in \(Self.failCasesDirectory.path)")
    }

    @Test("a fuzzer fail case passes the fuzz target's checks", arguments: failCases())
    func failCase(_ name: String) async throws {
        let bytes = try Array(Data(contentsOf: Self.failCasesDirectory.appendingPathComponent(name)))
        // The fuzz target's chunk size (from the first byte), plus 7-byte chunks.
        let sizes = Array(Set([FuzzChecks.fuzzChunkSize(bytes), 7])).sorted()
        await FuzzChecks.expectConsistent(bytes, chunkSizes: sizes, label: name)
    }

    // MARK: Hand-written adversarial inputs

    static let root =
        #"<gpx version="1.1" creator="fuzz" xmlns="http://www.topografix.com/GPX/1/1" xmlns:x="urn:x">"#

    static func gpx(_ body: String) -> [UInt8] { Array((root + body + "</gpx>").utf8) }

    /// 10,000 nested elements, under the root and inside `<extensions>` (where unknown elements are captured).
    @Test("deep nesting (10,000 levels)", arguments: ["", "<extensions>"])
    func deepNesting(_ container: String) async {
        let open = String(repeating: "<x:a>", count: 10_000)
        let close = String(repeating: "</x:a>", count: 10_000)
        let end = container.isEmpty ? "" : "</extensions>"
        await FuzzChecks.expectConsistent(
            Self.gpx(container + open + close + end), chunkSizes: [61, 4096], label: "nesting in \(container)")
    }

    @Test("100,000 attributes on one element")
    func manyAttributes() async {
        var tag = #"<wpt lat="1" lon="2""#
        tag.reserveCapacity(1_500_000)
        for i in 0..<100_000 { tag += " a\(i)=\"\(i % 10)\"" }
        tag += "/>"
        await FuzzChecks.expectConsistent(Self.gpx(tag), chunkSizes: [4096, 1 << 20], label: "100k attributes")
    }

    @Test("100,000 attributes with the same name")
    func manyDuplicateAttributes() async {
        let tag = "<x:e" + String(repeating: " x:k=\"v\"", count: 100_000) + "/>"
        await FuzzChecks.expectConsistent(
            Self.gpx("<extensions>" + tag + "</extensions>"), chunkSizes: [4096], label: "duplicate attributes",
            expect: .fails(.malformedXML))
    }

    @Test("a 5 MB text node")
    func hugeText() async {
        let text = String(repeating: "abcdefghij", count: 500_000)
        await FuzzChecks.expectConsistent(
            Self.gpx("<metadata><name>" + text + "</name></metadata>"), chunkSizes: [65536, 1 << 20],
            label: "5 MB text", expect: .succeeds)
    }

    @Test("a 5 MB text node where no text belongs")
    func hugeIgnoredText() async {
        let text = String(repeating: "abcdefghij", count: 500_000)
        await FuzzChecks.expectConsistent(
            Self.gpx("<trk>" + text + "</trk>"), chunkSizes: [4096, 1 << 20], label: "5 MB ignored text")
    }

    /// Small inputs: (label, bytes, what must happen).
    static let small: [(String, [UInt8], FuzzChecks.Expectation)] = [
        ("unterminated comment", Array((root + "<!-- never closed </gpx>").utf8), .fails(.malformedXML)),
        ("unterminated comment before the root", Array("<!-- <gpx/>".utf8), .fails(.malformedXML)),
        ("&#0;", gpx("<metadata><name>a&#0;b</name></metadata>"), .fails(.malformedXML)),
        ("&#0; in an ignored text", gpx("<trk>&#0;</trk>"), .fails(.malformedXML)),
        ("&#x110000;", gpx("<metadata><name>&#x110000;</name></metadata>"), .fails(.malformedXML)),
        ("&#1114112;", gpx("<metadata><name>&#1114112;</name></metadata>"), .fails(.malformedXML)),
        ("&#xFFFFFFFFF;", gpx("<metadata><name>&#xFFFFFFFFF;</name></metadata>"), .fails(.malformedXML)),
        ("&#xD800;", gpx("<metadata><name>&#xD800;</name></metadata>"), .fails(.malformedXML)),
        (
            "DOCTYPE with an internal subset",
            Array(#"<!DOCTYPE gpx [<!ENTITY e "x"><!ELEMENT gpx ANY>]>"#.utf8) + gpx(""), .anything
        ),
        (
            "DOCTYPE with an internal subset, entity used",
            Array(#"<!DOCTYPE gpx [<!ENTITY e "x">]>"#.utf8) + gpx("<metadata><name>&e;</name></metadata>"),
            .fails(nil)
        ),
        (
            "DOCTYPE with ']>' inside a quoted entity value",
            Array(#"<!DOCTYPE gpx [<!ENTITY e "]>">]>"#.utf8) + gpx(""), .anything
        ),
        ("unterminated DOCTYPE", Array(#"<!DOCTYPE gpx [<!ENTITY e "x">"#.utf8), .fails(nil)),
        (
            "BOM followed by UTF-16LE",
            [0xEF, 0xBB, 0xBF, 0xFF, 0xFE] + utf16LE(#"<?xml version="1.0" encoding="UTF-16"?>"#)
                + utf16LE(root + "</gpx>"),
            .fails(nil)
        ),
        ("BOM followed by UTF-16LE without its BOM", [0xEF, 0xBB, 0xBF] + utf16LE(root + "</gpx>"), .fails(nil)),
        (
            "BOM, then a UTF-16 encoding declaration",
            [0xEF, 0xBB, 0xBF] + Array(#"<?xml version="1.0" encoding="UTF-16"?>"#.utf8) + gpx(""), .fails(nil)
        ),
        ("a prefix bound to an empty URI", gpx(#"<extensions><p:e xmlns:p=""/></extensions>"#), .fails(.malformedXML)),
        (
            "a prefix bound to an empty URI on the root",
            Array(#"<gpx xmlns="http://www.topografix.com/GPX/1/1" xmlns:p=""></gpx>"#.utf8), .fails(.malformedXML)
        ),
        ("the default namespace undeclared", gpx(#"<extensions><e xmlns=""/></extensions>"#), .anything),
        ("<a:b:c>", gpx(#"<extensions><x:b:c/></extensions>"#), .fails(.malformedXML)),
        ("<a:b:c> as the root", Array(#"<a:b:c xmlns:a="urn:a"/>"#.utf8), .fails(.malformedXML)),
        ("an attribute a:b:c", gpx(#"<wpt lat="1" lon="2" x:b:c="1"/>"#), .fails(.malformedXML)),
        ("a trailing colon", gpx("<extensions><x:/></extensions>"), .fails(.malformedXML)),
        // References are checked in every attribute value, even those RouteKit does not read.
        ("&#0; in an attribute", gpx(#"<wpt lat="1" lon="2" x:a="&#0;"/>"#), .fails(.malformedXML)),
        ("a bare & in an attribute", gpx(#"<wpt lat="1" lon="2" x:a="a & b"/>"#), .fails(.malformedXML)),
        ("&bogus; in an attribute", gpx(#"<wpt lat="1" lon="2" x:a="&bogus;"/>"#), .fails(.malformedXML)),
        // Duplicates are found by namespace and local name, not by the written prefix.
        (
            "the same attribute under two prefixes of one namespace",
            gpx(#"<wpt lat="1" lon="2" xmlns:y="urn:x" x:a="1" y:a="2"/>"#), .fails(.malformedXML)
        ),
    ]

    static func utf16LE(_ s: String) -> [UInt8] { s.utf16.flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] } }

    @Test("small adversarial inputs", arguments: small.indices)
    func smallInput(_ i: Int) async {
        let (label, bytes, expectation) = Self.small[i]
        await FuzzChecks.expectConsistent(
            bytes, chunkSizes: [FuzzChecks.fuzzChunkSize(bytes), 1, 7], label: label, expect: expectation)
    }
}

/// The fuzz target's checks, reporting through Swift Testing.
enum FuzzChecks {
    /// Seconds one input may take (all its parses and the round trip) before it counts as a hang.
    static let deadline: Double = 60

    enum Expectation: Sendable {
        case anything
        case succeeds
        /// Fails; with this code when one is given.
        case fails(RouteKitError.Code?)
    }

    /// The fuzz target's chunk size: 1...64 from the first byte.
    static func fuzzChunkSize(_ bytes: [UInt8]) -> Int { Int((bytes.first ?? 0) % 64) + 1 }

    static func parse(_ bytes: [UInt8], chunkSize: Int) -> Result<GPXDocument, RouteKitError> {
        do throws(RouteKitError) {
            return .success(try GPXDocument(bytes: bytes, name: "fuzz.gpx", chunkSize: chunkSize))
        } catch {
            return .failure(error)
        }
    }

    struct Report: Sendable {
        var whole: Result<GPXDocument, RouteKitError>
        var problems: [String] = []
    }

    /// Parses whole and in each chunk size, compares, and round-trips a parsed document. Never prints
    /// coordinates: errors are shown by their description, documents only by where they differ.
    static func check(_ bytes: [UInt8], chunkSizes: [Int]) -> Report {
        let whole = parse(bytes, chunkSize: max(bytes.count, 1))
        var report = Report(whole: whole)
        for size in chunkSizes {
            switch (whole, parse(bytes, chunkSize: size)) {
            case (.success(let a), .success(let b)):
                if a != b { report.problems.append("whole and \(size)-byte chunks give different documents") }
            case (.failure(let a), .failure(let b)):
                if a.code != b.code || a.line != b.line || a.column != b.column {
                    report.problems.append("whole and \(size)-byte chunks fail differently: \(a) vs \(b)")
                }
            case (.success, .failure(let e)):
                report.problems.append("whole input parses but \(size)-byte chunks fail: \(e)")
            case (.failure(let e), .success):
                report.problems.append("\(size)-byte chunks parse but the whole input fails: \(e)")
            }
        }
        if case .success(let document) = whole {
            do throws(RouteKitError) {
                let written = try GPXWriter.data(for: document)
                if case .failure(let e) = parse(written, chunkSize: 1 << 20) {
                    report.problems.append("the reader rejects what GPXWriter wrote: \(e)")
                }
            } catch {
                report.problems.append("GPXWriter cannot write a document the reader accepted: \(error)")
            }
        }
        return report
    }

    /// Runs ``check(_:chunkSizes:)`` on its own thread (8 MiB stack) and records an issue for each problem,
    /// for an outcome other than `expect`, or for a run longer than ``deadline``.
    static func expectConsistent(
        _ bytes: [UInt8], chunkSizes: [Int], label: String, expect: Expectation = .anything,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async {
        let box = ResultBox()
        let thread = Thread {
            box.set(check(bytes, chunkSizes: chunkSizes))
        }
        thread.stackSize = 8 << 20
        let start = Date()
        thread.start()
        var report: Report?
        while true {
            report = box.get()
            if report != nil || Date().timeIntervalSince(start) > deadline { break }
            try? await Task.sleep(for: .milliseconds(5))
        }
        guard let report else {
            let what = "\(bytes.count) bytes, chunk sizes \(chunkSizes)"
            Issue.record(
                "\(label): no result after \(Int(deadline)) s (\(what)): a hang", sourceLocation: sourceLocation)
            return
        }
        for problem in report.problems {
            Issue.record("\(label): \(problem)", sourceLocation: sourceLocation)
        }
        switch (expect, report.whole) {
        case (.anything, _), (.succeeds, .success), (.fails(nil), .failure):
            break
        case (.fails(let code?), .failure(let error)):
            #expect(error.code == code, "\(label): \(error)", sourceLocation: sourceLocation)
            #expect(
                error.line != nil && error.column != nil, "\(label): no position in \(error)",
                sourceLocation: sourceLocation)
        case (.succeeds, .failure(let error)):
            Issue.record("\(label): expected a document, got \(error)", sourceLocation: sourceLocation)
        case (.fails, .success):
            Issue.record("\(label): expected an error, the input was accepted", sourceLocation: sourceLocation)
        }
    }
}

/// One result handed from the checking thread to the test.
private final class ResultBox: @unchecked Sendable {
    private let lock = NSLock()
    private var report: FuzzChecks.Report?
    func set(_ r: FuzzChecks.Report) { lock.withLock { report = r } }
    func get() -> FuzzChecks.Report? { lock.withLock { report } }
}
