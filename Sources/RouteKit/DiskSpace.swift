import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#elseif canImport(Musl)
    import Musl
#endif

/// Free space on a disk, for the checks that tell a full disk from bad input (a store's readiness, an upload's
/// spool).
package enum DiskSpace {
    /// The bytes free to unprivileged writers on the disk that holds `folder`; `nil` when it cannot be told.
    package static func available(in folder: String) -> UInt64? {
        var vfs = statvfs()
        guard statvfs(folder.isEmpty ? "." : folder, &vfs) == 0 else { return nil }
        return UInt64(vfs.f_bavail) &* UInt64(vfs.f_frsize)
    }
}
