import Foundation
public import RouteKit
import RouteKitGPX

/// Limits that keep a hostile archive (a zip bomb, a directory of a million entries) from costing unbounded work or
/// memory. Entries are never written to the filesystem.
public struct ArchiveLimits: Sendable, Hashable {
    /// The largest entry, decompressed.
    public var maxEntryBytes = 1 << 30
    /// All entries read from one archive together, decompressed.
    public var maxTotalBytes = 32 << 30
    /// The largest decompressed/compressed ratio for an entry larger than 1 MiB (real GPX compresses about 10×,
    /// FIT 3×; a bomb 1000×).
    public var maxRatio = 200.0
    /// The most entries an archive may list (files, folders and links alike): an archive that lists more is refused
    /// when it is opened, before any entry is read. A Strava export lists about one entry per activity.
    public var maxEntries = 10_000

    /// The defaults.
    public init() {}
}

/// A zip archive read entry by entry, within ``ArchiveLimits``.
///
/// The central directory (zip64 included) is read by RouteKit's own reader with every number range-checked, and each
/// entry is inflated by zlib as it is read, so a hostile archive gets a `RouteKitError`, never a trap. Directories,
/// symbolic links and the litter of archives re-made on a Mac (`__MACOSX/`, `.DS_Store`) are not listed. Nothing from
/// an archive is ever written to the filesystem.
///
/// `@_spi(RouteKitInternals)`: RouteImporter's reader, public only to the zip fuzzer (FuzzTesting) and the tests.
@_spi(RouteKitInternals)
public final class ZipArchive {
    /// The name used in results and errors (the archive's path, or `outer.zip!inner.zip`).
    public let name: String
    /// The limits in force.
    public let limits: ArchiveLimits
    private let source: ZipSource
    private let budget: ZipBudget
    private var entries: [String: ZipEntry] = [:]
    /// File entries in archive order.
    public private(set) var paths: [String] = []

    /// Whether `head` starts like a zip archive (a local file header, or the end record of an empty one).
    public static func isZip(_ head: some Collection<UInt8>) -> Bool {
        let h = Array(head.prefix(4))
        return h == [0x50, 0x4B, 0x03, 0x04] || h == [0x50, 0x4B, 0x05, 0x06]
    }

    /// Opens an archive file.
    /// - Throws: `RouteKitError.Code.compression` when it is not a readable zip archive or lists more entries than
    ///   ``ArchiveLimits/maxEntries``; `.io` when it cannot be opened.
    public convenience init(path: String, limits: ArchiveLimits = ArchiveLimits()) throws(RouteKitError) {
        try self.init(source: try ZipSource(path: path), limits: limits)
    }

    /// Opens an archive held in memory (an archive inside an archive).
    public convenience init(bytes: [UInt8], name: String, limits: ArchiveLimits = ArchiveLimits()) throws(RouteKitError)
    {
        try self.init(source: ZipSource(bytes: bytes, name: name), limits: limits)
    }

    private init(source: ZipSource, limits: ArchiveLimits) throws(RouteKitError) {
        self.source = source
        self.name = source.name
        self.limits = limits
        self.budget = ZipBudget(limits: limits)
        for entry in try ZipDirectory.read(source, limits: limits) {
            guard entry.kind == .file else { continue }
            let path = entry.path
            let last = path.split(separator: "/").last.map(String.init) ?? path
            if path.hasPrefix("__MACOSX/") || last == ".DS_Store" || last.hasPrefix("._") { continue }
            if entries[path] == nil { paths.append(path) }
            entries[path] = entry
        }
    }

    /// An entry's size decompressed, as the archive states it; `nil` for a path it does not hold.
    func size(of path: String) -> Int? { entries[path]?.uncompressedSize }

    /// Whether the archive has a file entry at `path`.
    public func contains(_ path: String) -> Bool { entries[path] != nil }

    /// An entry's bytes, decompressed, its size and CRC checked.
    /// - Throws: `RouteKitError.Code.notFound` for a path the archive does not hold,
    ///   `RouteKitError.Code.compression` for a corrupt entry or one past the limits (named, with the limit).
    public func contents(of path: String) throws(RouteKitError) -> [UInt8] {
        try reader(of: path).readAll()
    }

    /// Makes readers of an entry on another thread (the GPX reader's): each inflates it afresh as it is read.
    /// - Throws: `RouteKitError.Code.notFound` for a path the archive does not hold.
    func opener(of path: String) throws(RouteKitError) -> @Sendable () throws(RouteKitError) -> ZipEntryReader {
        guard let entry = entries[path] else {
            throw RouteKitError(.notFound, "the archive has no entry \(path)", file: name)
        }
        let source = self.source
        let budget = self.budget
        return { () throws(RouteKitError) in try ZipEntryReader(source: source, entry: entry, budget: budget) }
    }

    /// An entry inflated as it is read, a buffer at a time (memory does not grow with the entry's size).
    /// - Parameter again: the entry is read once more (a second pass over an Apple Health `export.xml`): its bytes
    ///   count toward the archive's total only the first time.
    /// - Throws: as ``contents(of:)``, when the entry cannot be opened; reading throws for corrupt data.
    func reader(of path: String, again: Bool = false) throws(RouteKitError) -> ZipEntryReader {
        guard let entry = entries[path] else {
            throw RouteKitError(.notFound, "the archive has no entry \(path)", file: name)
        }
        return try ZipEntryReader(source: source, entry: entry, budget: again ? ZipBudget(limits: limits) : budget)
    }
}
