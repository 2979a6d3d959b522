import Foundation

/// The PostgreSQL server the test suites run against, when one is given: `$ROUTEKIT_TEST_POSTGRES` (a URL
/// such as `scripts/pg-test-cluster.sh start DIR` prints), and `$ROUTEKIT_TEST_POSTGRES_DIR` (that cluster's
/// folder, for the tests that restart the server). Databases are made and dropped with `psql`.
public enum PostgresTestServer {
    /// The server's URL, `nil` when none is given.
    public static let url: String? = {
        let value = ProcessInfo.processInfo.environment["ROUTEKIT_TEST_POSTGRES"] ?? ""
        return value.isEmpty ? nil : value
    }()

    /// The throwaway cluster's folder (`scripts/pg-test-cluster.sh restart` takes it), `nil` when not given.
    public static let clusterDirectory: String? = {
        let value = ProcessInfo.processInfo.environment["ROUTEKIT_TEST_POSTGRES_DIR"] ?? ""
        return value.isEmpty ? nil : value
    }()

    /// Why PostgreSQL tests skip.
    public static let skipMessage =
        "no PostgreSQL server given: set ROUTEKIT_TEST_POSTGRES=postgres://user@host:port/db (`make test-postgres` "
        + "starts a throwaway one)"

    /// `psql`, from `PATH` or Debian's `/usr/lib/postgresql/*/bin`.
    public static let psql: URL? = {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        var folders = path.split(separator: ":").map(String.init)
        let debian = "/usr/lib/postgresql"
        let versions = ((try? FileManager.default.contentsOfDirectory(atPath: debian)) ?? []).sorted {
            (Int($0) ?? 0) > (Int($1) ?? 0)
        }
        folders += versions.map { "\(debian)/\($0)/bin" }
        return folders.map { URL(fileURLWithPath: $0).appendingPathComponent("psql") }.first {
            FileManager.default.isExecutableFile(atPath: $0.path)
        }
    }()

    /// Whether the test server speaks TLS (`SHOW ssl`; `scripts/pg-test-cluster.sh` turns it on with a self-signed
    /// certificate when openssl is there).
    public static let speaksTLS: Bool = {
        guard let url else { return false }
        return (try? sql(url, "SHOW ssl")) == "on"
    }()

    /// `url` with the query parameter `name` set to `value`.
    public static func url(_ url: String, parameter name: String, _ value: String) -> String {
        guard var c = URLComponents(string: url) else { return url }
        c.queryItems = (c.queryItems ?? []).filter { $0.name != name } + [URLQueryItem(name: name, value: value)]
        return c.string ?? url
    }

    /// The repository's `scripts/pg-test-cluster.sh`.
    static let clusterScript = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("scripts/pg-test-cluster.sh")

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// Runs one SQL statement with `psql` against `url`; what it printed (unaligned, tuples only).
    @discardableResult
    public static func sql(_ url: String, _ statement: String) throws -> String {
        guard let psql else { throw Failure(description: "psql was not found") }
        let r = try runChildProcess(psql, ["-X", "-q", "-At", "-v", "ON_ERROR_STOP=1", "-d", url, "-c", statement])
        guard r.status == 0 else { throw Failure(description: "psql failed: \(r.errorOutput)") }
        return r.output.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// `url` with its database replaced by `database`.
    public static func url(_ url: String, database: String) -> String {
        guard var c = URLComponents(string: url) else { return url }
        c.path = "/" + database
        return c.string ?? url
    }

    /// Creates an empty database on the server and returns its URL.
    public static func freshDatabase() throws -> String {
        guard let url else { throw Failure(description: skipMessage) }
        let name = "rk_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased().prefix(16)
        try sql(url, "CREATE DATABASE \(name)")
        return Self.url(url, database: String(name))
    }

    /// Drops a database `freshDatabase()` made, closing whatever connections are still open to it.
    public static func drop(_ database: String) {
        guard let url, let name = URLComponents(string: database)?.path.dropFirst(), name.hasPrefix("rk_") else {
            return
        }
        _ = try? sql(url, "DROP DATABASE IF EXISTS \(name) WITH (FORCE)")
    }

    /// Restarts the throwaway cluster (fast shutdown: every open connection is dropped).
    ///
    /// Spawned and reaped directly (`posix_spawn`, `waitpid`): Foundation's `Process` sometimes never noticed this
    /// script's exit while another child process was running (it stayed a zombie, and `waitUntilExit` spun).
    public static func restart() throws {
        guard let clusterDirectory else {
            throw Failure(description: "ROUTEKIT_TEST_POSTGRES_DIR is not set: cannot restart the server")
        }
        let arguments = ["/bin/bash", clusterScript.path, "restart", clusterDirectory]
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { for p in argv { free(p) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, "/bin/bash", nil, nil, &argv, environ)
        guard spawned == 0 else { throw Failure(description: "cannot run \(clusterScript.path): error \(spawned)") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        guard status == 0 else { throw Failure(description: "restarting PostgreSQL failed (wait status \(status))") }
    }
}
