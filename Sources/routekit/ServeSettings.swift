import ArgumentParser
import Foundation
import RouteKit
import RouteKitImport

#if Server
    import Configuration
    import Yams
#endif

/// A value of a `routekit serve` setting.
enum ServeValue: Sendable, Equatable, CustomStringConvertible {
    case text(String)
    case integer(Int)
    case decimal(Double)
    case flag(Bool)

    /// The value as `--print-config` and messages show it (a whole decimal without its `.0`).
    var description: String {
        switch self {
        case .text(let text): return text
        case .integer(let n): return String(n)
        case .decimal(let d): return d == d.rounded() && abs(d) < 1e15 ? String(Int(d)) : String(d)
        case .flag(let on): return on ? "true" : "false"
        }
    }
}

/// One setting of `routekit serve`, read from its option, else its environment variable, else the configuration file
/// (`--config`), else its default (``ServeSettings``). ``all`` is the one list of them: `--help`, `--print-config`, the
/// key check of configuration files and the README's table (`routekit serve --settings-table`, which a test holds
/// equal to the README's) come from it.
struct ServeSetting: Sendable {
    /// What a value is.
    enum Kind: Sendable {
        case text, integer, decimal
        /// On or off: `--name` and `--no-name`; `true` or `false` in a configuration file; `true`, `false`, `1`, `0`,
        /// `yes` or `no` in the environment.
        case flag
    }

    /// The option's name without its dashes (`max-upload-mb`): the option (`--max-upload-mb`), the configuration
    /// file's key, and after `ROUTEKIT_`, in capitals with underscores, the environment variable.
    let name: String
    let kind: Kind
    /// The default; `nil` when it is computed as the server starts (from the machine) or is no value at all.
    let defaultValue: ServeValue?
    /// The default as `--help` and the README say it.
    let defaultText: String
    /// What the setting sets, in a sentence or two (no `|`: it is a cell of a Markdown table).
    let meaning: String
    /// The option's value name in `--help` (`<N>`), when not the option's name.
    let valueName: String?
    /// Why `value` is refused (`must be at least 1`), `nil` when it is good.
    let problem: @Sendable (ServeValue) -> String?

    /// The command-line option.
    var option: String { "--" + name }

    /// The environment variable: `ROUTEKIT_` and the name in capitals, dashes as underscores.
    var environmentVariable: String { "ROUTEKIT_" + name.uppercased().replacingOccurrences(of: "-", with: "_") }

    /// The option's `--help`, with the default.
    var help: ArgumentHelp { ArgumentHelp("\(meaning) (default: \(defaultText))", valueName: valueName) }

    /// What a value must be, for messages.
    var kindText: String {
        switch kind {
        case .text: return "text"
        case .integer: return "an integer"
        case .decimal: return "a number"
        case .flag: return "true or false"
        }
    }

    /// A check that an integer is in `range`.
    static func integer(in range: ClosedRange<Int>, _ message: String) -> @Sendable (ServeValue) -> String? {
        { value in
            if case .integer(let n) = value, range.contains(n) { return nil }
            return message
        }
    }

    /// A check of a decimal.
    static func decimal(_ message: String, _ isGood: @escaping @Sendable (Double) -> Bool)
        -> @Sendable (ServeValue) -> String?
    {
        { value in
            if case .decimal(let d) = value, isGood(d) { return nil }
            return message
        }
    }

    /// A check of a text.
    static func text(_ message: String, _ isGood: @escaping @Sendable (String) -> Bool)
        -> @Sendable (ServeValue) -> String?
    {
        { value in
            if case .text(let text) = value, isGood(text) { return nil }
            return message
        }
    }

    static let store = ServeSetting(
        name: "store", kind: .text, defaultValue: nil,
        defaultText: "$XDG_DATA_HOME/routekit/store.sqlite (~/.local/share/routekit/store.sqlite)",
        meaning: "The store: a SQLite file path (made when missing) or a postgres:// URL (a routekit built with the "
            + "Postgres trait).",
        valueName: "PATH|URL", problem: text("must not be empty") { !$0.isEmpty })
    static let host = ServeSetting(
        name: "host", kind: .text, defaultValue: .text("127.0.0.1"), defaultText: "127.0.0.1",
        meaning: "The address to listen on (0.0.0.0: every interface).", valueName: nil,
        problem: text("must not be empty") { !$0.isEmpty })
    static let port = ServeSetting(
        name: "port", kind: .integer, defaultValue: .integer(8080), defaultText: "8080",
        meaning: "The port (0: any free port; the one chosen is printed).", valueName: nil,
        problem: integer(in: 0...65535, "must be from 0 to 65535"))
    static let maxUploadMb = ServeSetting(
        name: "max-upload-mb", kind: .integer, defaultValue: .integer(512), defaultText: "512",
        meaning: "The largest upload accepted, in MiB.", valueName: nil,
        problem: integer(in: 1...(1 << 30), "must be from 1 to 1073741824"))
    static let maxStreamsPerToken = ServeSetting(
        name: "max-streams-per-token", kind: .integer, defaultValue: .integer(4), defaultText: "4",
        meaning: "The most event streams one token may hold open.", valueName: nil,
        problem: integer(in: 1...Int.max, "must be at least 1"))
    static let maxStreamsPerPerson = ServeSetting(
        name: "max-streams-per-person", kind: .integer, defaultValue: .integer(64), defaultText: "64",
        meaning: "The most event streams one person may hold open over all their tokens.", valueName: nil,
        problem: integer(in: 1...Int.max, "must be at least 1"))
    static let maxUploadsPerMinute = ServeSetting(
        name: "max-uploads-per-minute", kind: .integer, defaultValue: .integer(120), defaultText: "120",
        meaning: "The most uploads one person may make in a minute; more get 429 with Retry-After.", valueName: nil,
        problem: integer(in: 1...Int.max, "must be at least 1"))
    static let maxStoragePerPersonMb = ServeSetting(
        name: "max-storage-per-person-mb", kind: .integer, defaultValue: .integer(0), defaultText: "0 (no limit)",
        meaning: "The most one person's data may take in the store, in MiB (their routes' locations, series, "
            + "attachments, workouts and pending builders; measured again when 10 s old or after their own upload or "
            + "deletion). A person at or over it gets 507 storage-quota for their next upload, new builder or builder "
            + "batch until they delete workouts; the upload that crosses it is stored whole. 0: no limit.",
        valueName: "MiB", problem: integer(in: 0...(1 << 40), "must be from 0 (no limit) to 1099511627776"))
    static let maxConcurrentImports = ServeSetting(
        name: "max-concurrent-imports", kind: .integer, defaultValue: nil,
        defaultText: "from the machine's memory, a quarter of it at 64 MiB each",
        meaning: "Uploads imported at once; more get 503 with Retry-After.", valueName: "N",
        problem: integer(in: 1...Int.max, "must be at least 1"))
    static let maxPictures = ServeSetting(
        name: "max-pictures", kind: .integer, defaultValue: nil, defaultText: "the number of cores",
        meaning: "The most route pictures drawn at once; more get 503 with Retry-After.", valueName: "N",
        problem: integer(in: 1...Int.max, "must be at least 1"))
    static let idleTimeout = ServeSetting(
        name: "idle-timeout", kind: .decimal, defaultValue: .decimal(75), defaultText: "75",
        meaning: "Seconds a connection may wait between requests before it is closed.", valueName: "seconds",
        problem: decimal("must be more than 0 and at most 86400 seconds") { $0 > 0 && $0 <= 86_400 })
    static let headerTimeout = ServeSetting(
        name: "header-timeout", kind: .decimal, defaultValue: .decimal(30), defaultText: "30",
        meaning: "Seconds a request's headers may take to arrive; a client still sending them is disconnected.",
        valueName: "seconds",
        problem: decimal("must be more than 0 and at most 3600 seconds") { $0 > 0 && $0 <= 3_600 })
    static let minBodyRate = ServeSetting(
        name: "min-body-rate", kind: .integer, defaultValue: .integer(512), defaultText: "512",
        meaning: "The slowest a request body may arrive, in bytes a second (measured over 30 s of waiting for it); a "
            + "slower one gets 408 and its connection is closed. 0: no minimum.",
        valueName: "bytes", problem: integer(in: 0...Int.max, "must be 0 or more"))
    static let maxConnectionsPerAddress = ServeSetting(
        name: "max-connections-per-address", kind: .integer, defaultValue: nil, defaultText: "no limit",
        meaning: "The most connections one client address may hold open; more are closed as they open (no limit "
            + "suits a server behind a reverse proxy, where every client has the proxy's address).",
        valueName: "N", problem: integer(in: 1...Int.max, "must be at least 1"))
    static let builderExpiryHours = ServeSetting(
        name: "builder-expiry-hours", kind: .decimal, defaultValue: .decimal(24), defaultText: "24",
        meaning: "Hours a pending route builder (an interrupted upload or recording) may go without a batch before "
            + "it is discarded; 0 keeps them.",
        valueName: "hours", problem: decimal("must be from 0 to 87600") { $0 >= 0 && $0 <= 87_600 })
    /// The levels `--log-level` takes (swift-log's).
    static let logLevels = ["trace", "debug", "info", "notice", "warning", "error", "critical"]
    static let logLevel = ServeSetting(
        name: "log-level", kind: .text, defaultValue: .text("info"), defaultText: "info",
        meaning: "Log level: trace, debug, info, notice, warning, error, critical.", valueName: nil,
        problem: text("must be one of trace, debug, info, notice, warning, error, critical") {
            ServeSetting.logLevels.contains($0)
        })
    static let maxArchiveEntries = ServeSetting(
        name: "max-archive-entries", kind: .integer, defaultValue: .integer(ArchiveLimits().maxEntries),
        defaultText: String(ArchiveLimits().maxEntries), meaning: ArchiveOptions.entriesMeaning, valueName: "N",
        problem: integer(in: 1...Int.max, "must be at least 1"))
    static let maxEntryMb = ServeSetting(
        name: "max-entry-mb", kind: .integer, defaultValue: .integer(ArchiveLimits().maxEntryBytes >> 20),
        defaultText: String(ArchiveLimits().maxEntryBytes >> 20), meaning: ArchiveOptions.entryMeaning,
        valueName: "MiB", problem: integer(in: 1...(1 << 20), "must be from 1 to 1048576"))

    static let tiles = ServeSetting(
        name: "tiles", kind: .text, defaultValue: nil, defaultText: "none: the web view draws its own plain map",
        meaning: "The web view's basemap: a raster tile server's URL template (https://…/{z}/{x}/{y}.png; fetched by "
            + "this server, never by the browser, and cached) or an MBTiles file (offline). Served at "
            + "/tiles/{z}/{x}/{y}.",
        valueName: "URL-TEMPLATE or FILE.mbtiles", problem: text("must not be empty") { !$0.isEmpty })
    static let tilesAttribution = ServeSetting(
        name: "tiles-attribution", kind: .text, defaultValue: nil, defaultText: "an MBTiles file's own",
        meaning: "The attribution the tile server's terms ask for, shown on the map (with tiles).", valueName: "text",
        problem: text("must not be empty") { !$0.isEmpty })
    static let tilesCache = ServeSetting(
        name: "tiles-cache", kind: .text, defaultValue: nil,
        defaultText: "$XDG_CACHE_HOME/routekit/tiles (~/.cache/routekit/tiles)",
        meaning: "The folder of the tile cache (with tiles).", valueName: "folder",
        problem: text("must not be empty") { !$0.isEmpty })
    static let tilesCacheBytes = ServeSetting(
        name: "tiles-cache-bytes", kind: .text, defaultValue: .text("512M"), defaultText: "512M",
        meaning: "The most the tile cache holds (bytes, or with K, M or G); the least recently used tiles go first.",
        valueName: "size",
        problem: text("must be at least 1M (a number of bytes, or with K, M or G)") {
            (Serve.byteCount($0) ?? 0) >= 1 << 20
        })
    static let tilesMaxZoom = ServeSetting(
        name: "tiles-max-zoom", kind: .integer, defaultValue: .integer(19), defaultText: "19",
        meaning: "The highest zoom asked of the tile server.", valueName: "zoom",
        problem: integer(in: 0...22, "must be from 0 to 22"))
    static let leafletDir = ServeSetting(
        name: "leaflet-dir", kind: .text, defaultValue: .text("/usr/share/javascript/leaflet"),
        defaultText: "/usr/share/javascript/leaflet",
        meaning: "Where Leaflet is installed (Debian: libjs-leaflet); without it the web view draws its own plain map.",
        valueName: "folder", problem: text("must not be empty") { !$0.isEmpty })

    static let jwks = ServeSetting(
        name: "jwks", kind: .text, defaultValue: nil, defaultText: "none: RouteKit's tokens only",
        meaning: "An identity provider's JSON Web Key Set: a file, or an https URL (http only for localhost). With it, "
            + "bearer JWTs signed by its keys (RS256, ES256, EdDSA) are accepted beside RouteKit's tokens, as the "
            + "person of their subject; the set is read again on an unknown kid, at most once a minute. Needs issuer "
            + "and audience.",
        valueName: "FILE or URL", problem: text("must not be empty") { !$0.isEmpty })
    static let issuer = ServeSetting(
        name: "issuer", kind: .text, defaultValue: nil, defaultText: "none",
        meaning: "The iss that identity-provider tokens must carry, exactly (with jwks).", valueName: nil,
        problem: text("must not be empty") { !$0.isEmpty })
    static let audience = ServeSetting(
        name: "audience", kind: .text, defaultValue: nil, defaultText: "none",
        meaning: "The aud that identity-provider tokens must name, as a string or in an array (with jwks).",
        valueName: nil, problem: text("must not be empty") { !$0.isEmpty })
    static let jwtPeople = ServeSetting(
        name: "jwt-people", kind: .text, defaultValue: .text("refuse"), defaultText: "refuse",
        meaning: "An identity-provider token whose subject (iss and sub) has no person yet: create makes one (named by "
            + "its name or preferred_username claim), refuse answers 401 unknown-person.",
        valueName: "create|refuse", problem: text("must be create or refuse") { ["create", "refuse"].contains($0) })

    static let webhooksAllowPrivate = ServeSetting(
        name: "webhooks-allow-private", kind: .flag, defaultValue: .flag(false), defaultText: "false",
        meaning: "Allow webhook receivers on loopback, private, link-local, carrier-grade NAT and unique local "
            + "addresses (tests, a local network); --no-webhooks-allow-private refuses them, as the default does.",
        valueName: nil,
        problem: { value in
            if case .flag = value { return nil }
            return "must be true or false"
        })

    /// Every setting, in the order `--help`, `--print-config` and the README list them.
    static let all: [ServeSetting] = [
        store, host, port, maxUploadMb, maxStreamsPerToken, maxStreamsPerPerson, maxUploadsPerMinute,
        maxStoragePerPersonMb, maxConcurrentImports, maxPictures, idleTimeout,
        headerTimeout, minBodyRate, maxConnectionsPerAddress, builderExpiryHours, logLevel, maxArchiveEntries,
        maxEntryMb, tiles, tilesAttribution, tilesCache, tilesCacheBytes, tilesMaxZoom, leafletDir, jwks, issuer,
        audience, jwtPeople, webhooksAllowPrivate,
    ]

    /// The setting whose name `key` is closest to (two edits at most, or one that begins with it), for a message.
    static func nearest(to key: String) -> String? {
        var best: (name: String, distance: Int)?
        for setting in all {
            let distance = RouteKitCommand.editDistance(key.lowercased(), setting.name)
            if distance <= 2 && distance < (best?.distance ?? .max) { best = (setting.name, distance) }
        }
        if let best { return best.name }
        return all.first { key.count >= 3 && $0.name.hasPrefix(key.lowercased()) }?.name
    }

    /// The settings as the README's Markdown table (`routekit serve --settings-table`).
    static var markdownTable: String {
        var lines = [
            "| setting (`--config` key) | option | environment variable | default | meaning |",
            "|---|---|---|---|---|",
        ]
        for s in all {
            lines.append(
                "| `\(s.name)` | `\(s.option)` | `\(s.environmentVariable)` | \(s.defaultText) | \(s.meaning) |")
        }
        return lines.joined(separator: "\n")
    }
}

/// The settings `routekit serve` runs with, each with where its value came from.
struct ServeSettings: Sendable {
    /// A setting's value and where it came from.
    struct Entry: Sendable {
        /// The value; `nil` when the default is computed as the server starts.
        var value: ServeValue?
        /// Where it came from: the option (`--port`), the environment variable (`ROUTEKIT_PORT`), the configuration
        /// file's path, or `default`.
        var source: String
    }

    /// Every setting's entry, by name.
    var entries: [String: Entry] = [:]

    /// `setting`'s value, `nil` when its default is computed as the server starts.
    func value(_ setting: ServeSetting) -> ServeValue? { entries[setting.name]?.value }

    /// `setting`'s value as text.
    func text(_ setting: ServeSetting) -> String? {
        if case .text(let text)? = value(setting) { return text }
        return nil
    }

    /// `setting`'s value as an integer.
    func integer(_ setting: ServeSetting) -> Int? {
        if case .integer(let n)? = value(setting) { return n }
        return nil
    }

    /// `setting`'s value as a decimal.
    func decimal(_ setting: ServeSetting) -> Double? {
        if case .decimal(let d)? = value(setting) { return d }
        return nil
    }

    /// `setting`'s value as a flag.
    func flag(_ setting: ServeSetting) -> Bool? {
        if case .flag(let on)? = value(setting) { return on }
        return nil
    }
}

#if Server
    @available(macOS 15, *)
    extension ServeSettings {
        /// Every setting from, in this order, `options` (those given on the command line, by name), the environment
        /// (`ROUTEKIT_PORT`; an empty variable counts as unset), the configuration file at `configFile` (JSON or YAML),
        /// and the defaults. The environment and the file are read through swift-configuration's providers, each asked
        /// directly: a `ConfigReader` getter would fall back to the default on a value that does not convert, and
        /// would not say which provider gave a value; here both are said.
        ///
        /// - Throws: `RouteKitError.Code.invalidArgument` naming the file and the key, or the environment variable,
        ///   for a file that cannot be read or is not JSON or YAML, a key that is no setting, a value that is not
        ///   of the setting's kind or out of its range. Options are checked by `serve`'s `validate()` (a usage error).
        static func resolve(
            options: [String: ServeValue], configFile: String?, environment: [String: String]
        ) async throws(RouteKitError) -> ServeSettings {
            let variables = environment.filter { $0.key.hasPrefix("ROUTEKIT_") && !$0.value.isEmpty }
            let environmentProvider = EnvironmentVariablesProvider(environmentVariables: variables)
            var file: ServeConfigFile?
            if let configFile { file = try await ServeConfigFile.load(configFile) }
            var settings = ServeSettings()
            for setting in ServeSetting.all {
                if let value = options[setting.name] {
                    settings.entries[setting.name] = Entry(value: value, source: setting.option)
                    continue
                }
                let variable = setting.environmentVariable
                if let value = try lookUp(
                    setting, in: environmentProvider, key: AbsoluteConfigKey(["routekit", setting.name]),
                    place: variable, raw: variables[variable])
                {
                    settings.entries[setting.name] = Entry(value: value, source: variable)
                    continue
                }
                if let file, let provider = file.provider,
                    let value = try lookUp(
                        setting, in: provider, key: AbsoluteConfigKey([setting.name]),
                        place: "\(file.path): \(setting.name)", raw: nil)
                {
                    settings.entries[setting.name] = Entry(value: value, source: file.path)
                    continue
                }
                settings.entries[setting.name] = Entry(value: setting.defaultValue, source: "default")
            }
            return settings
        }

        /// `setting`'s value in `provider` under `key`, checked; `nil` when the provider has none. `place` names where
        /// it is in messages, and `raw` is the text it was read from, shown when it is not of the setting's kind (an
        /// environment variable's; never a text setting's, which may hold a password).
        private static func lookUp(
            _ setting: ServeSetting, in provider: any ConfigProvider, key: AbsoluteConfigKey, place: String,
            raw: String?
        ) throws(RouteKitError) -> ServeValue? {
            let type: ConfigType
            switch setting.kind {
            case .text: type = .string
            case .integer: type = .int
            case .decimal: type = .double
            case .flag: type = .bool
            }
            let shown = setting.kind == .text ? "" : raw.map { ", not '\($0)'" } ?? ""
            let content: ConfigContent?
            do {
                content = try provider.value(forKey: key, type: type).value?.content
            } catch {
                throw RouteKitError(.invalidArgument, "\(place) must be \(setting.kindText)\(shown)")
            }
            let value: ServeValue
            switch content {
            case nil: return nil
            case .string(let text)?: value = .text(text)
            case .int(let n)?: value = .integer(n)
            case .double(let d)?: value = .decimal(d)
            case .bool(let on)?: value = .flag(on)
            default: throw RouteKitError(.invalidArgument, "\(place) must be \(setting.kindText)\(shown)")
            }
            if let problem = setting.problem(value) {
                let it = setting.kind == .text ? "" : " (it is \(value))"
                throw RouteKitError(.invalidArgument, "\(place) \(problem)\(it)")
            }
            return value
        }
    }

    /// A configuration file of `routekit serve` (`--config`): JSON (`.json`) or YAML (`.yaml`, `.yml`), one object
    /// (mapping) whose keys are the settings' names and whose values are single values.
    @available(macOS 15, *)
    struct ServeConfigFile {
        /// The path given.
        let path: String
        /// Its values, through swift-configuration's file provider; `nil` for a YAML file with no document.
        let provider: (any ConfigProvider)?

        /// A key of the file, and whether its value is a single value (text or a number).
        typealias Member = (name: String, single: Bool)

        /// Reads and checks the file at `path`: every key must be a setting's name (one that is not is named, with the
        /// setting it is closest to), every value a single value.
        ///
        /// - Throws: `RouteKitError.Code.invalidArgument` naming the file (and the key at fault).
        static func load(_ path: String) async throws(RouteKitError) -> ServeConfigFile {
            guard let data = FileManager.default.contents(atPath: path) else {
                let exists = FileManager.default.fileExists(atPath: path)
                throw RouteKitError(
                    .invalidArgument,
                    exists ? "cannot read the configuration file \(path)" : "no configuration file at \(path)")
            }
            let isJSON: Bool
            let members: [Member]?
            switch URL(fileURLWithPath: path).pathExtension.lowercased() {
            case "json":
                isJSON = true
                members = try jsonMembers(data, path)
            case "yaml", "yml":
                isJSON = false
                members = try yamlMembers(data, path)
            default:
                throw RouteKitError(
                    .invalidArgument,
                    "\(path): a configuration file is JSON (.json) or YAML (.yaml, .yml), and this one's name says "
                        + "neither")
            }
            guard let members else { return ServeConfigFile(path: path, provider: nil) }
            try check(members, path)
            let reader = ConfigReader(
                provider: InMemoryProvider(
                    name: "routekit serve --config",
                    values: [AbsoluteConfigKey(["filePath"]): ConfigValue(.string(path), isSecret: false)]))
            let provider: any ConfigProvider
            do {
                if isJSON {
                    provider = try await FileProvider<JSONSnapshot>(config: reader)
                } else {
                    provider = try await FileProvider<YAMLSnapshot>(config: reader)
                }
            } catch {
                throw RouteKitError(.invalidArgument, "\(path) cannot be read as settings: \(error)")
            }
            return ServeConfigFile(path: path, provider: provider)
        }

        /// The members of a JSON file's object: each key, and whether its value is a single value.
        static func jsonMembers(_ data: Data, _ path: String) throws(RouteKitError) -> [Member] {
            let object: Any
            do {
                object = try JSONSerialization.jsonObject(with: data)
            } catch {
                let why = (error as? CocoaError)?.userInfo[NSDebugDescriptionErrorKey] as? String
                throw RouteKitError(.invalidArgument, "\(path) is not valid JSON" + (why.map { ": \($0)" } ?? ""))
            }
            guard let members = object as? [String: Any] else {
                throw RouteKitError(
                    .invalidArgument, "\(path): the file must be one object of settings ({\"port\": 8080})")
            }
            return members.map { key, value in
                (name: key, single: !(value is [String: Any] || value is [Any] || value is NSNull))
            }
        }

        /// The members of a YAML file's mapping: each key, and whether its value is a single value (a scalar); `nil`
        /// when the file holds no document.
        static func yamlMembers(_ data: Data, _ path: String) throws(RouteKitError) -> [Member]? {
            let root: Yams.Node?
            do {
                root = try Yams.compose(yaml: String(decoding: data, as: UTF8.self))
            } catch {
                throw RouteKitError(.invalidArgument, "\(path) is not valid YAML: \(error)")
            }
            guard let root else { return nil }
            guard let mapping = root.mapping else {
                throw RouteKitError(.invalidArgument, "\(path): the file must be one mapping of settings (port: 8080)")
            }
            var members: [Member] = []
            for (key, value) in mapping {
                guard let name = key.string else {
                    throw RouteKitError(
                        .invalidArgument, "\(path): a key that is not text (line \(key.mark?.line ?? 0))")
                }
                members.append((name: name, single: value.scalar != nil))
            }
            return members
        }

        /// Refuses a key that is no setting's name (naming it, and the setting it is closest to) and a value that is
        /// not a single value.
        static func check(_ members: [Member], _ path: String) throws(RouteKitError) {
            let known = Set(ServeSetting.all.map(\.name))
            let unknown = members.map { $0.name }.filter { !known.contains($0) }.sorted()
            if let first = unknown.first {
                var message = "\(path): unknown setting '\(first)'"
                if let near = ServeSetting.nearest(to: first) { message += " (did you mean '\(near)'?)" }
                if unknown.count > 1 {
                    message += ", and " + unknown.dropFirst().map { "'\($0)'" }.joined(separator: ", ")
                }
                message += "; `routekit serve --help` and the README's \"Settings of routekit serve\" list them"
                throw RouteKitError(.invalidArgument, message)
            }
            if let nested = members.sorted(by: { $0.name < $1.name }).first(where: { !$0.single }) {
                throw RouteKitError(
                    .invalidArgument,
                    "\(path): \(nested.name) must be a single value (text or a number), not a list, a mapping or null")
            }
        }
    }
#endif
