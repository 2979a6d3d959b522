import Foundation
import Testing
import ZIPFoundation

@Suite(
    "routekit import and serve: archive limits from the command line",
    .enabled(if: CLI.executable != nil, "the routekit executable was not found next to the tests"))
struct ArchiveLimitsCLITests {
    /// A zip of `count` small GPX entries.
    static func zip(entries count: Int) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("routekit-cli-\(UUID().uuidString).zip")
        let archive = try Archive(url: path, accessMode: .create)
        for n in 0..<count {
            let data = Data(CLITests.good.replacingOccurrences(of: "<name>T</name>", with: "<name>T\(n)</name>").utf8)
            try archive.addEntry(with: "run\(n).gpx", type: .file, uncompressedSize: Int64(data.count)) { position, size in
                data.subdata(in: Int(position)..<Int(position) + size)
            }
        }
        return path.path
    }

    @Test("--max-archive-entries refuses an archive that lists more, naming the limit; the default reads it")
    func maxEntries() throws {
        let zip = try Self.zip(entries: 3)
        let store = FileManager.default.temporaryDirectory.appendingPathComponent("routekit-cli-\(UUID().uuidString).sqlite")
            .path
        let refused = try CLI.run(["import", "--store", store, "--max-archive-entries", "2", zip])
        #expect(refused.status == 1)
        #expect((refused.stdout + refused.stderr).contains("the archive lists 3 entries, more than the limit of 2"))
        let read = try CLI.run(["import", "--store", store, zip])
        #expect(read.status == 0, "\(read.stderr)")
        #expect(read.stdout.contains("3 imported"))
        let bad = try CLI.run(["import", "--store", store, "--max-entry-mb", "0", zip])
        #expect(bad.status != 0)
        #expect(bad.stderr.contains("--max-entry-mb must be from 1"))
    }

    @Test("serve --help lists the archive limits with their defaults")
    func serveHelp() throws {
        let help = try CLI.run(["serve", "--help"])
        #expect(help.stdout.contains("--max-archive-entries <N>"))
        #expect(help.stdout.contains("(default: 10000)"))
        #expect(help.stdout.contains("--max-entry-mb <MiB>"))
    }
}
