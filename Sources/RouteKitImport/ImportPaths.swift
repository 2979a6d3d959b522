import Foundation
import RouteKit
import RouteKitIngest

extension RouteImporter {
    /// Where an import of several inputs is (``importPaths(_:sizes:workers:progress:each:)``).
    package struct PathsProgress: Sendable, Hashable {
        /// Inputs whose results were handed over.
        package var inputsDone: Int
        /// Bytes of the inputs done, plus what was read of the current one (one worker only).
        package var bytesDone: Int
        /// The input being read (one worker only).
        package var current: String?
    }

    /// Imports several inputs (files, archives, export folders), handing their results over in input order,
    /// whatever order they finish in: `routekit import`'s job.
    ///
    /// With one worker, this importer takes them one after the other (an archive's or export's entries then run
    /// ``jobs`` at a time) and reads the next GPX file ahead while it stores the current one. With more, each
    /// worker (an importer of its own, with this one's settings) takes inputs in order, two at a time: the one it
    /// imports and the one it reads ahead meanwhile.
    /// - Parameters:
    ///   - paths: the inputs, in order.
    ///   - sizes: each input's size in bytes (for progress), by index.
    ///   - workers: inputs imported at once.
    ///   - progress: called now and then.
    ///   - each: called with every result (one per file, per archive entry or per workout of an export), in input
    ///     order.
    package func importPaths(
        _ paths: [String], sizes: [Int], workers: Int, progress: @escaping (PathsProgress) -> Void,
        each: (ImportResult) -> Void
    ) async {
        var doneBytes = 0
        if workers <= 1 || paths.count < 2 {
            for (n, path) in paths.enumerated() {
                let base = doneBytes
                let name = (path as NSString).lastPathComponent
                await importPath(
                    path, readingAhead: n + 1 < paths.count ? paths[n + 1] : nil,
                    progress: { read in progress(PathsProgress(inputsDone: n, bytesDone: base + read, current: name)) }
                ) { result in
                    each(result)
                    progress(PathsProgress(inputsDone: n, bytesDone: base, current: name))
                }
                doneBytes += n < sizes.count ? sizes[n] : 0
                progress(PathsProgress(inputsDone: n + 1, bytesDone: doneBytes, current: nil))
            }
            return
        }
        let (store, source, options, limits, streamed) = (
            store, source, readOptions, archiveLimits, streamedEntryBytes
        )
        let taken = Locked(0)
        let take: @Sendable () -> Int? = {
            taken.withLock { next in
                guard next < paths.count else { return nil }
                next += 1
                return next - 1
            }
        }
        let (finished, sink) = AsyncStream.makeStream(of: (Int, [ImportResult]).self)
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<min(workers, paths.count) {
                group.addTask {
                    let importer = RouteImporter(store: store, source: source, readOptions: options)
                    importer.archiveLimits = limits
                    importer.streamedEntryBytes = streamed
                    var current = take()
                    while let n = current {
                        let next = take()
                        var results: [ImportResult] = []
                        await importer.importPath(paths[n], readingAhead: next.map { paths[$0] }) {
                            results.append($0)
                        }
                        sink.yield((n, results))
                        current = next
                    }
                }
            }
            var waiting: [Int: [ImportResult]] = [:]
            var handed = 0
            for await (n, results) in finished {
                waiting[n] = results
                while let ready = waiting.removeValue(forKey: handed) {
                    ready.forEach(each)
                    doneBytes += handed < sizes.count ? sizes[handed] : 0
                    handed += 1
                    progress(PathsProgress(inputsDone: handed, bytesDone: doneBytes, current: nil))
                }
                if handed == paths.count { break }
            }
        }
        sink.finish()
    }
}
