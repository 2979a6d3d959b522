#if Postgres
    import Foundation
    import Logging
    import NIOSSL
    import PostgresNIO
    import RouteKit

    /// Where the database is, from a `postgres://` URL.
    struct Endpoint: Sendable {
        enum TLSMode: String, Sendable {
            case disable, prefer, require
            case verifyFull = "verify-full"
        }

        var host: String
        var port: Int
        var user: String
        var password: String?
        var database: String?
        var tls: TLSMode
        /// Where the driver logs (``PostgresStore/Options/logger``).
        var logger: Logger = PostgresStore.quietLogger

        /// The URL without its password.
        var label: String {
            "postgres://\(user)@\(host.contains(":") ? "[\(host)]" : host):\(port)/\(database ?? user)"
        }

        /// Parses `postgres://user:password@host:port/database?sslmode=…` (or `postgresql://`), as libpq does for
        /// those parts; the user defaults to `$PGUSER`, then `postgres`, and the password to `$PGPASSWORD`.
        init(url: String) throws(RouteKitError) {
            let bad = { (why: String) in
                RouteKitError(.invalidArgument, "'\(Self.redacted(url))' is not a usable PostgreSQL URL: \(why)")
            }
            guard url.hasPrefix("postgres://") || url.hasPrefix("postgresql://"), let c = URLComponents(string: url)
            else {
                throw bad("expected postgres://user:password@host:port/database")
            }
            let env = ProcessInfo.processInfo.environment
            host = c.host.flatMap { $0.isEmpty ? nil : $0 } ?? "127.0.0.1"
            port = c.port ?? 5432
            user = c.user.flatMap { $0.removingPercentEncoding } ?? env["PGUSER"] ?? "postgres"
            password = c.password.flatMap { $0.removingPercentEncoding } ?? env["PGPASSWORD"]
            let path = c.path.hasPrefix("/") ? String(c.path.dropFirst()) : c.path
            database = path.isEmpty ? nil : path.removingPercentEncoding
            tls = .prefer
            for item in c.queryItems ?? [] {
                switch item.name {
                case "sslmode":
                    let value = item.value ?? ""
                    if value == "allow" {
                        tls = .prefer
                    } else if value == "verify-ca" {
                        tls = .verifyFull
                    } else if let mode = TLSMode(rawValue: value) {
                        tls = mode
                    } else {
                        throw bad("sslmode is disable, prefer, require or verify-full, not '\(value)'")
                    }
                case "application_name", "connect_timeout": continue
                default: throw bad("unknown parameter '\(item.name)'")
                }
            }
        }

        /// The URL with its password replaced by `***`.
        static func redacted(_ url: String) -> String {
            if var c = URLComponents(string: url) {
                guard c.password != nil else { return url }
                c.password = "***"
                return c.string ?? "postgres://…"
            }
            // Not parseable (a password with '#', '/' or a space): drop everything that could be credentials.
            guard let scheme = url.range(of: "://"), let at = url.range(of: "@", options: .backwards),
                scheme.upperBound <= at.lowerBound
            else { return url }
            return String(url[..<scheme.upperBound]) + "***" + String(url[at.lowerBound...])
        }

        private var tlsConfiguration: TLSConfiguration {
            var configuration = TLSConfiguration.makeClientConfiguration()
            if tls != .verifyFull { configuration.certificateVerification = .none }
            return configuration
        }

        var clientTLS: PostgresClient.Configuration.TLS {
            switch tls {
            case .disable: .disable
            case .prefer: .prefer(tlsConfiguration)
            case .require, .verifyFull: .require(tlsConfiguration)
            }
        }

        /// A connection of its own (outside the pool): for a long read's snapshot, `LISTEN`, and migrations.
        func connect() async throws -> PostgresConnection {
            let tls: PostgresConnection.Configuration.TLS
            switch self.tls {
            case .disable: tls = .disable
            case .prefer: tls = .prefer(try NIOSSLContext(configuration: tlsConfiguration))
            case .require, .verifyFull: tls = .require(try NIOSSLContext(configuration: tlsConfiguration))
            }
            var configuration = PostgresConnection.Configuration(
                host: host, port: port, username: user, password: password, database: database, tls: tls)
            configuration.options.connectTimeout = .seconds(10)
            return try await PostgresConnection.connect(
                configuration: configuration, id: 0, logger: logger)
        }
    }
#endif
