import Foundation

/// The shared test data beside the repository (`../shared`): corpora that tests read and skip without,
/// never copied into the repository.
public enum SharedData {
    /// The repository's root (this file is `Sources/RouteKitTesting/SharedData.swift`).
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// `../shared/format-corpus` (FIT, TCX, Apple Health files with `index.json`), `nil` when absent.
    public static let formatCorpus: String? = {
        let path = repository.deletingLastPathComponent().appendingPathComponent("shared/format-corpus").path
        return FileManager.default.fileExists(atPath: path + "/index.json") ? path : nil
    }()

    /// The entries of `format-corpus/index.json` of one format (`"fit"`, `"tcx"`): each file's JSON object, with
    /// `file` made a full path. Empty when the corpus is absent.
    public static func formatCorpusEntries(format: String) -> [[String: Any]] {
        guard let root = formatCorpus, let data = FileManager.default.contents(atPath: root + "/index.json"),
            let json = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
            let files = json["files"] as? [[String: Any]]
        else { return [] }
        return files.compactMap { f in
            guard let name = f["file"] as? String, f["format"] as? String == format else { return nil }
            var entry = f
            entry["file"] = root + "/" + name
            return entry
        }
    }
}
