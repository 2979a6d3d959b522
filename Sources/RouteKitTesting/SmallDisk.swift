import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A small tmpfs mounted for a test, to fill: what a full disk does to a store or an upload spool. Mounting needs
/// root (CI runs as root); elsewhere ``mount(megabytes:)`` says why it cannot, and the test skips saying so.
public final class SmallDisk: @unchecked Sendable {
    /// Where it is mounted.
    public let path: String
    private var filler: String { path + "/filler" }

    private init(path: String) { self.path = path }

    /// Why a small disk cannot be mounted here; `nil` when it can (tried once, with a 1 MiB tmpfs).
    public static let unavailableReason: String? = {
        guard getuid() == 0 else { return "not root: a tmpfs cannot be mounted to fill" }
        do {
            let disk = try SmallDisk.mount(megabytes: 1)
            disk.unmount()
            return nil
        } catch {
            return "a tmpfs cannot be mounted here (\(error))"
        }
    }()

    /// Mounts a tmpfs of `megabytes` on a new temporary folder.
    public static func mount(megabytes: Int) throws -> SmallDisk {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("routekit-disk-\(UUID().uuidString)")
            .path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/bin/mount")
        p.arguments = ["-t", "tmpfs", "-o", "size=\(megabytes)m,mode=0777", "tmpfs", dir]
        p.standardError = FileHandle.nullDevice
        try p.run()
        p.waitUntilExit()
        guard p.terminationStatus == 0 else {
            try? FileManager.default.removeItem(atPath: dir)
            throw CocoaError(.fileWriteNoPermission)
        }
        return SmallDisk(path: dir)
    }

    /// Writes a filler file until the disk is full.
    public func fill() {
        let fd = open(filler, O_WRONLY | O_CREAT | O_APPEND, 0o600)
        guard fd >= 0 else { return }
        defer { close(fd) }
        let block = [UInt8](repeating: 0x55, count: 64 << 10)
        var size = block.count
        while size > 0 {
            let n = block.withUnsafeBytes { write(fd, $0.baseAddress, size) }
            if n <= 0 {
                // Full at this size: try the last few bytes in smaller writes.
                if size == 1 { break }
                size /= 2
            }
        }
    }

    /// Removes the filler: the disk has room again.
    public func free() { unlink(filler) }

    /// Unmounts it and removes the folder.
    public func unmount() {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/bin/umount")
        p.arguments = ["-l", path]
        try? p.run()
        p.waitUntilExit()
        try? FileManager.default.removeItem(atPath: path)
    }
}
