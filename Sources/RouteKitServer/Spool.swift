#if Server
    import Foundation
    import RouteKit

    /// The server's temporary files (upload spool folders, exports being written) are named after the host and the
    /// process that made them, so that a server started later removes what a killed one left behind (SIGKILL, an
    /// out-of-memory kill or a power cut skip every `defer`).
    enum Spool {
        /// Upload spool folders: `routekit-upload-HOST-PID-UUID`.
        static let uploadPrefix = "routekit-upload-"
        /// Exports being written: `routekit-export-HOST-PID-UUID.FORMAT`.
        static let exportPrefix = "routekit-export-"
        /// The formats an export file ends with: a route's, a person's archive (`zip`), and the archive's scratch file
        /// (`entry`, unlinked as soon as it is opened; a kill in between leaves it).
        static let exportFormats: Set<Substring> = ["gpx", "geojson", "csv", "zip", "entry"]

        /// This host's name, hashed to eight hex digits: processes of another host (a shared network folder) or of
        /// another container with its own host name have other process ids, never checked here.
        static let host: String = {
            var name = [CChar](repeating: 0, count: 256)
            guard gethostname(&name, name.count - 1) == 0 else { return "00000000" }
            var hasher = ContentHasher(domain: "routekit-spool-host")
            hasher.combine(
                String(decoding: name.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self))
            return String(hasher.hexDigest.prefix(8))
        }()

        /// A new name with `prefix`, this host and process, and a random UUID.
        static func name(_ prefix: String, suffix: String = "") -> String {
            prefix + "\(host)-\(getpid())-" + UUID().uuidString.lowercased() + suffix
        }

        /// The process id a spool name of this host carries; `nil` for a name that is not exactly one of ours.
        static func owner(of name: String) -> pid_t? {
            let parts: [Substring]
            if name.hasPrefix(uploadPrefix) {
                parts = name.dropFirst(uploadPrefix.count).split(separator: "-", maxSplits: 2)
                guard parts.count == 3, parts[2].count == 36 else { return nil }
            } else if name.hasPrefix(exportPrefix) {
                parts = name.dropFirst(exportPrefix.count).split(separator: "-", maxSplits: 2)
                guard parts.count == 3, parts[2].count > 37, parts[2].dropFirst(36).first == ".",
                    exportFormats.contains(parts[2].dropFirst(37))
                else { return nil }
            } else {
                return nil
            }
            guard parts[0] == host, let pid = pid_t(parts[1]), pid > 0,
                UUID(uuidString: String(parts[2].prefix(36))) != nil
            else { return nil }
            return pid
        }

        /// Whether process `pid` is running (signal 0: no signal sent, only the check).
        static func isRunning(_ pid: pid_t) -> Bool {
            kill(pid, 0) == 0 || errno == EPERM
        }

        /// Removes the spool folders and export files in `directory` that a process of this host left and that is no
        /// longer running; the names removed. Another running server's files (several servers may share a temporary
        /// folder) are left alone, and so is every name that is not exactly one of ours.
        @discardableResult
        static func sweep(_ directory: String) -> [String] {
            guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return [] }
            var removed: [String] = []
            for name in names {
                guard let pid = owner(of: name), pid != getpid(), !isRunning(pid) else { continue }
                if (try? FileManager.default.removeItem(atPath: (directory as NSString).appendingPathComponent(name)))
                    != nil
                {
                    removed.append(name)
                }
            }
            return removed
        }
    }
#endif
