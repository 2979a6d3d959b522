import Foundation
public import RouteKit
import RouteKitGPX
import ZIPFoundation

/// Limits that keep a hostile archive (a zip bomb) from filling memory: every entry is read into memory, never
/// written to the filesystem.
public struct ArchiveLimits: Sendable, Hashable {
    /// The largest entry, decompressed.
    public var maxEntryBytes = 1 << 30
    /// All entries read from one archive together, decompressed.
    public var maxTotalBytes = 32 << 30
    /// The largest decompressed/compressed ratio for an entry larger than 1 MiB (real GPX compresses about 10×,
    /// FIT 3×; a bomb 1000×).
    public var maxRatio = 200.0
    /// The most entries an archive may list.
    public var maxEntries = 1_000_000

    /// The defaults.
    public init() {}
}

/// A zip archive read entry by entry into memory (ZIPFoundation), within ``ArchiveLimits``.
///
/// Directories, symbolic links and the litter of archives re-made on a Mac (`__MACOSX/`, `.DS_Store`) are not
/// listed. Nothing from an archive is ever written to the filesystem.
public final class ZipArchive {
    /// The name used in results and errors (the archive's path, or `outer.zip!inner.zip`).
    public let name: String
    /// The limits in force.
    public let limits: ArchiveLimits
    private let archive: Archive
    private var entries: [String: Entry] = [:]
    /// File entries in archive order.
    public private(set) var paths: [String] = []
    private var totalRead = 0

    /// Whether `head` starts like a zip archive (a local file header, or the end record of an empty one).
    public static func isZip(_ head: some Collection<UInt8>) -> Bool {
        let h = Array(head.prefix(4))
        return h == [0x50, 0x4B, 0x03, 0x04] || h == [0x50, 0x4B, 0x05, 0x06]
    }

    /// Opens an archive file.
    /// - Throws: `RouteKitError.Code.compression` when it is not a readable zip archive.
    public convenience init(path: String, limits: ArchiveLimits = ArchiveLimits()) throws(RouteKitError) {
        let archive: Archive
        do {
            archive = try Archive(url: URL(fileURLWithPath: path), accessMode: .read)
        } catch {
            throw RouteKitError(.compression, "not a readable zip archive (\(error))", file: path)
        }
        try self.init(archive: archive, name: path, limits: limits)
    }

    /// Opens an archive held in memory (an archive inside an archive).
    public convenience init(bytes: [UInt8], name: String, limits: ArchiveLimits = ArchiveLimits()) throws(RouteKitError)
    {
        let archive: Archive
        do {
            archive = try Archive(data: Data(bytes), accessMode: .read)
        } catch {
            throw RouteKitError(.compression, "not a readable zip archive (\(error))", file: name)
        }
        try self.init(archive: archive, name: name, limits: limits)
    }

    private init(archive: Archive, name: String, limits: ArchiveLimits) throws(RouteKitError) {
        self.archive = archive
        self.name = name
        self.limits = limits
        var count = 0
        for entry in archive {
            count += 1
            if count > limits.maxEntries {
                throw RouteKitError(
                    .compression, "the archive lists more than \(limits.maxEntries) entries", file: name)
            }
            guard entry.type == .file else { continue }
            let path = entry.path
            let last = path.split(separator: "/").last.map(String.init) ?? path
            if path.hasPrefix("__MACOSX/") || last == ".DS_Store" || last.hasPrefix("._") { continue }
            if entries[path] == nil { paths.append(path) }
            entries[path] = entry
        }
    }

    /// An entry's size decompressed, as the archive states it; `nil` for a path it does not hold.
    func size(of path: String) -> Int? { entries[path].map { Int(clamping: $0.uncompressedSize) } }

    /// Whether the archive has a file entry at `path`.
    public func contains(_ path: String) -> Bool { entries[path] != nil }

    /// An entry's bytes, decompressed, its CRC checked.
    /// - Throws: `RouteKitError.Code.notFound` for a path the archive does not hold,
    ///   `RouteKitError.Code.compression` for a corrupt entry or one past the limits (named, with the limit).
    public func contents(of path: String) throws(RouteKitError) -> [UInt8] {
        let label = "\(name)!\(path)"
        guard let entry = entries[path] else {
            throw RouteKitError(.notFound, "the archive has no entry \(path)", file: name)
        }
        let compressed = max(1, Int(clamping: entry.compressedSize))
        var out: [UInt8] = []
        out.reserveCapacity(min(Int(clamping: entry.uncompressedSize), 64 << 20))
        let limits = self.limits
        let budget = limits.maxTotalBytes - totalRead
        var refusal: RouteKitError?
        do {
            // The CRC-32 is checked below with zlib's, several times faster than ZIPFoundation's own (which was 4 %
            // of a Strava export's import).
            _ = try archive.extract(entry, skipCRC32: true) { data in
                out.append(contentsOf: data)
                if out.count > limits.maxEntryBytes {
                    refusal = RouteKitError(
                        .compression,
                        "the entry is larger than \(InputFile.sizeText(limits.maxEntryBytes)) decompressed",
                        file: label)
                } else if out.count > budget {
                    refusal = RouteKitError(
                        .compression,
                        "the archive's entries together are larger than \(limits.maxTotalBytes >> 30) GiB decompressed",
                        file: label)
                } else if out.count > 1 << 20 && Double(out.count) / Double(compressed) > limits.maxRatio {
                    refusal = RouteKitError(
                        .compression,
                        "the entry decompresses more than \(Int(limits.maxRatio))× (a zip bomb?); refused", file: label)
                }
                if let refusal { throw refusal }
            }
        } catch {
            if let refusal { throw refusal }
            throw RouteKitError(.compression, "the entry cannot be read: \(error)", file: label)
        }
        guard InputFile.crc32(out) == entry.checksum else {
            throw RouteKitError(
                .compression, "the entry's data does not match its CRC-32 (a corrupt archive)", file: label)
        }
        totalRead += out.count
        return out
    }
}
