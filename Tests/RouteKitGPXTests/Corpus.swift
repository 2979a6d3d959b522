import Foundation
import RouteKit
import RouteKitGPX

/// The shared GPX corpus (`../shared/gpx-corpus` beside the repository, or `$ROUTEKIT_CORPUS`).
/// Tests that need it are skipped, with that reason, when it is absent.
enum Corpus {
    static let root: String? = {
        if let env = ProcessInfo.processInfo.environment["ROUTEKIT_CORPUS"], FileManager.default.fileExists(atPath: env) {
            return env
        }
        // Tests/RouteKitGPXTests/Corpus.swift → repository root → ../shared/gpx-corpus
        let repo = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let path = repo.deletingLastPathComponent().appendingPathComponent("shared/gpx-corpus").path
        return FileManager.default.fileExists(atPath: path) ? path : nil
    }()

    static var available: Bool { root != nil }

    static func files(_ folder: String) -> [String] {
        guard let root else { return [] }
        let dir = root + "/" + folder
        let names = (try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []
        return names.filter { $0.hasSuffix(".gpx") }.sorted().map { dir + "/" + $0 }
    }

    struct Expected: Sendable {
        var trkpt: Int
        var rtept: Int
        var wpt: Int
    }

    /// Point counts from MANIFEST.md, by file name.
    static let manifest: [String: Expected] = {
        guard let root, let text = try? String(contentsOfFile: root + "/MANIFEST.md", encoding: .utf8) else { return [:] }
        var out: [String: Expected] = [:]
        for line in text.split(separator: "\n") where line.hasPrefix("| `") {
            let cols = line.split(separator: "|", omittingEmptySubsequences: false).map {
                $0.trimmingCharacters(in: .whitespaces)
            }
            guard cols.count > 10, let t = Int(cols[7]), let r = Int(cols[8]), let w = Int(cols[9]) else { continue }
            out[cols[1].trimmingCharacters(in: CharacterSet(charactersIn: "`"))] = Expected(trkpt: t, rtept: r, wpt: w)
        }
        return out
    }()

    static func name(_ path: String) -> String { (path as NSString).lastPathComponent }
}
