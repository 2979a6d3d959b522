#if Server
    import Foundation
    import RouteKitTesting
    import Testing

    /// `routekit serve`'s settings as a person meets them: options, then `ROUTEKIT_` environment variables, then a
    /// configuration file (`--config`, JSON or YAML), then the defaults; `--print-config` shows each with where it
    /// comes from. Every test runs the built `routekit` as a child process.
    @Suite("routekit serve's settings: options, ROUTEKIT_ variables, --config files, defaults", .serialized)
    struct ServeSettingsTests {
        /// The variables of the settings these tests look at, unset: the environment the tests run in does not change
        /// what they see (`runChildProcess` leaves out a variable given as an empty string).
        static let unset: [String: String] = [
            "ROUTEKIT_STORE": "", "ROUTEKIT_HOST": "", "ROUTEKIT_PORT": "", "ROUTEKIT_MAX_UPLOAD_MB": "",
            "ROUTEKIT_IDLE_TIMEOUT": "", "ROUTEKIT_HEADER_TIMEOUT": "", "ROUTEKIT_LOG_LEVEL": "",
            "ROUTEKIT_MAX_STORAGE_PER_PERSON_MB": "",
        ]

        /// The repository's root: Tests/RouteKitServerTests/ServeSettingsTests.swift → ../../..
        static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()

        /// A new folder for one test's files.
        static func folder() throws -> URL {
            let folder = FileManager.default.temporaryDirectory
                .appendingPathComponent("routekit-settings-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            return folder
        }

        /// Writes `text` to `name` in `folder` and returns its path.
        static func write(_ text: String, _ name: String, in folder: URL) throws -> String {
            let url = folder.appendingPathComponent(name)
            try text.write(to: url, atomically: true, encoding: .utf8)
            return url.path
        }

        /// What `routekit serve --print-config` printed: its status, each setting's line after `name = ` by name
        /// (`"8080 (default)"`), and standard error.
        struct Printed {
            var status: Int32
            var lines: [String: String]
            var errors: String
            var output: String
        }

        /// Runs `routekit serve --print-config` with `arguments`, and `environment` over ``unset``.
        static func printConfig(_ binary: URL, _ arguments: [String], _ environment: [String: String] = [:]) throws
            -> Printed
        {
            let variables = unset.merging(environment) { $1 }
            let r = try runChildProcess(binary, ["serve", "--print-config"] + arguments, environment: variables)
            var lines: [String: String] = [:]
            for line in r.output.split(separator: "\n") {
                guard let separator = line.range(of: " = ") else { continue }
                lines[String(line[..<separator.lowerBound])] = String(line[separator.upperBound...])
            }
            return Printed(status: r.status, lines: lines, errors: r.errorOutput, output: r.output)
        }

        @Test("an option beats its ROUTEKIT_ variable, which beats the configuration file, which beats the default")
        func precedence() throws {
            guard let binary = routekitBinary else {
                Issue.record("the routekit executable is not next to the test bundle; build with --build-tests")
                return
            }
            let folder = try Self.folder()
            let yaml = try Self.write(
                "# serve's settings\nport: 7001\nhost: 127.0.0.2\nmax-upload-mb: 64\nidle-timeout: 12.5\n",
                "serve.yaml", in: folder)
            let variables = ["ROUTEKIT_PORT": "7002", "ROUTEKIT_HOST": "127.0.0.3"]

            let all = try Self.printConfig(binary, ["--config", yaml, "--port", "7003"], variables)
            #expect(all.status == 0, "\(all.errors)")
            #expect(all.lines["port"] == "7003 (--port)", "\(all.output)")
            #expect(all.lines["host"] == "127.0.0.3 (ROUTEKIT_HOST)", "\(all.output)")
            #expect(all.lines["max-upload-mb"] == "64 (\(yaml))", "\(all.output)")
            #expect(all.lines["idle-timeout"] == "12.5 (\(yaml))", "\(all.output)")
            #expect(all.lines["header-timeout"] == "30 (default)", "\(all.output)")
            #expect(all.lines["max-connections-per-address"] == "no limit (default)", "\(all.output)")

            // Without the option, the variable; without the variable, the file.
            let noOption = try Self.printConfig(binary, ["--config", yaml], variables)
            #expect(noOption.lines["port"] == "7002 (ROUTEKIT_PORT)", "\(noOption.output)")
            let fileOnly = try Self.printConfig(binary, ["--config", yaml])
            #expect(fileOnly.lines["port"] == "7001 (\(yaml))", "\(fileOnly.output)")
            #expect(fileOnly.lines["host"] == "127.0.0.2 (\(yaml))", "\(fileOnly.output)")
            let defaults = try Self.printConfig(binary, [])
            #expect(defaults.lines["port"] == "8080 (default)", "\(defaults.output)")
            #expect(defaults.lines["log-level"] == "info (default)", "\(defaults.output)")

            // JSON too; the store as the other settings, and ROUTEKIT_STORE as before (before the file, after --store).
            let fileStore = folder.appendingPathComponent("file.sqlite").path
            let variableStore = folder.appendingPathComponent("variable.sqlite").path
            let optionStore = folder.appendingPathComponent("option.sqlite").path
            let json = try Self.write(
                "{\"port\": 7004, \"store\": \"\(fileStore)\", \"log-level\": \"warning\", \"idle-timeout\": 5}",
                "serve.json", in: folder)
            let fromJSON = try Self.printConfig(binary, ["--config", json])
            #expect(fromJSON.status == 0, "\(fromJSON.errors)")
            #expect(fromJSON.lines["port"] == "7004 (\(json))", "\(fromJSON.output)")
            #expect(fromJSON.lines["store"] == "\(fileStore) (\(json))", "\(fromJSON.output)")
            #expect(fromJSON.lines["log-level"] == "warning (\(json))", "\(fromJSON.output)")
            #expect(fromJSON.lines["idle-timeout"] == "5 (\(json))", "\(fromJSON.output)")
            let storeVariable = try Self.printConfig(binary, ["--config", json], ["ROUTEKIT_STORE": variableStore])
            #expect(storeVariable.lines["store"] == "\(variableStore) (ROUTEKIT_STORE)", "\(storeVariable.output)")
            let storeOption = try Self.printConfig(
                binary, ["--config", json, "--store", optionStore], ["ROUTEKIT_STORE": variableStore])
            #expect(storeOption.lines["store"] == "\(optionStore) (--store)", "\(storeOption.output)")
            // --print-config opens nothing.
            let made = [fileStore, variableStore, optionStore].filter { FileManager.default.fileExists(atPath: $0) }
            #expect(made.isEmpty, "--print-config made \(made)")
        }

        @Test(
            "the storage quota per person comes from its option, its ROUTEKIT_ variable or the configuration file; 0 is no limit, and a negative one stops serve"
        )
        func storageQuotaSetting() throws {
            guard let binary = routekitBinary else {
                Issue.record("the routekit executable is not next to the test bundle; build with --build-tests")
                return
            }
            let folder = try Self.folder()
            let yaml = try Self.write("max-storage-per-person-mb: 300\n", "serve.yaml", in: folder)
            let key = "max-storage-per-person-mb"
            let variable = "ROUTEKIT_MAX_STORAGE_PER_PERSON_MB"

            let defaults = try Self.printConfig(binary, [])
            #expect(defaults.lines[key] == "0 (no limit) (default)", "\(defaults.output)")
            let fromFile = try Self.printConfig(binary, ["--config", yaml])
            #expect(fromFile.status == 0, "\(fromFile.errors)")
            #expect(fromFile.lines[key] == "300 (\(yaml))", "\(fromFile.output)")
            let fromVariable = try Self.printConfig(binary, ["--config", yaml], [variable: "200"])
            #expect(fromVariable.lines[key] == "200 (\(variable))", "\(fromVariable.output)")
            let fromOption = try Self.printConfig(
                binary, ["--config", yaml, "--max-storage-per-person-mb", "100"], [variable: "200"])
            #expect(fromOption.lines[key] == "100 (--max-storage-per-person-mb)", "\(fromOption.output)")
            let off = try Self.printConfig(binary, ["--max-storage-per-person-mb", "0"])
            #expect(off.lines[key] == "0 (no limit) (--max-storage-per-person-mb)", "\(off.output)")

            let negative = try Self.printConfig(binary, [], [variable: "-5"])
            #expect(negative.status == 78)
            #expect(negative.errors.contains("\(variable) must be from 0 (no limit)"), "\(negative.errors)")
            let badOption = try Self.printConfig(binary, ["--max-storage-per-person-mb=-5"])
            #expect(badOption.status == 64)
            #expect(badOption.errors.contains("--max-storage-per-person-mb must be from 0"), "\(badOption.errors)")
        }

        @Test(
            "a configuration file that cannot be used stops serve at start with 78, naming the file and the key; so does a bad ROUTEKIT_ variable"
        )
        func configurationErrors() throws {
            guard let binary = routekitBinary else {
                Issue.record("the routekit executable is not next to the test bundle; build with --build-tests")
                return
            }
            let folder = try Self.folder()
            let cases: [(file: String, text: String, message: String)] = [
                ("unknown.yaml", "port: 9000\nprot: 9001\n", "unknown setting 'prot' (did you mean 'port'?)"),
                ("nested.json", "{\"server\": {\"port\": 9000}}", "unknown setting 'server'"),
                ("malformed.json", "{\"port\": 9000,", "is not valid JSON"),
                ("malformed.yaml", "port: [9000\nhost: x\n", "is not valid YAML"),
                ("range.yaml", "port: 70000\n", "port must be from 0 to 65535 (it is 70000)"),
                ("kind.json", "{\"port\": \"eighty\"}", "port must be an integer"),
                ("list.yaml", "host: [a, b]\n", "host must be a single value"),
                ("level.yaml", "log-level: loud\n", "log-level must be one of trace, debug, info"),
                ("settings.toml", "port = 9000\n", "a configuration file is JSON (.json) or YAML"),
            ]
            for c in cases {
                let path = try Self.write(c.text, c.file, in: folder)
                let r = try Self.printConfig(binary, ["--config", path])
                #expect(r.status == 78, "\(c.file): \(r.errors)")
                #expect(r.errors.contains(path), "\(c.file): the message does not name the file: \(r.errors)")
                #expect(r.errors.contains(c.message), "\(c.file): \(r.errors)")
                #expect(r.output.isEmpty, "\(c.file): settings printed despite the error")
            }
            let missing = folder.appendingPathComponent("missing.yaml").path
            let noFile = try Self.printConfig(binary, ["--config", missing])
            #expect(noFile.status == 78)
            #expect(noFile.errors.contains("no configuration file at \(missing)"), "\(noFile.errors)")

            let badVariable = try Self.printConfig(binary, [], ["ROUTEKIT_PORT": "eighty"])
            #expect(badVariable.status == 78)
            let named = badVariable.errors.contains("ROUTEKIT_PORT must be an integer, not 'eighty'")
            #expect(named, "\(badVariable.errors)")
            let outOfRange = try Self.printConfig(binary, [], ["ROUTEKIT_IDLE_TIMEOUT": "0"])
            #expect(outOfRange.status == 78)
            #expect(outOfRange.errors.contains("ROUTEKIT_IDLE_TIMEOUT must be more than 0"), "\(outOfRange.errors)")
            // A bad option stays a usage error (64), said before anything is read.
            let badOption = try Self.printConfig(binary, ["--port", "70000", "--config", missing])
            #expect(badOption.status == 64)
            #expect(badOption.errors.contains("--port must be from 0 to 65535"), "\(badOption.errors)")
        }

        @Test("serve runs with the settings of its configuration file: its store, port and log level")
        func serveUsesTheFile() async throws {
            guard let binary = routekitBinary else {
                Issue.record("the routekit executable is not next to the test bundle; build with --build-tests")
                return
            }
            let folder = try Self.folder()
            let store = folder.appendingPathComponent("from-file.sqlite").path
            let config = try Self.write(
                "store: \(store)\nport: 0\nlog-level: warning\nmax-pictures: 2\n", "serve.yaml", in: folder)
            let log = folder.appendingPathComponent("serve.log")
            _ = FileManager.default.createFile(atPath: log.path, contents: nil)
            let process = Process()
            process.executableURL = binary
            process.arguments = ["serve", "--config", config]
            var environment = ProcessInfo.processInfo.environment
            for name in Self.unset.keys { environment[name] = nil }
            process.environment = environment
            let handle = try FileHandle(forWritingTo: log)
            process.standardError = handle
            process.standardOutput = handle
            try process.run()
            defer { if process.isRunning { process.terminate() } }
            var listening = false
            for _ in 0..<200 where !listening {
                try await Task.sleep(for: .milliseconds(50))
                let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
                listening = text.contains("listening on http://127.0.0.1:") && text.contains("(store \(store))")
            }
            #expect(listening, "\((try? String(contentsOf: log, encoding: .utf8)) ?? "")")
            #expect(FileManager.default.fileExists(atPath: store), "serve did not make the store its file names")
            process.terminate()
            for _ in 0..<200 where process.isRunning { try await Task.sleep(for: .milliseconds(50)) }
            try handle.close()
            #expect(!process.isRunning)
        }

        @Test("the README's table of settings is what `routekit serve --settings-table` prints from the code")
        func readmeTable() throws {
            guard let binary = routekitBinary else {
                Issue.record("the routekit executable is not next to the test bundle; build with --build-tests")
                return
            }
            let table = try runChildProcess(binary, ["serve", "--settings-table"])
            #expect(table.status == 0, "\(table.errorOutput)")
            let readme = try String(contentsOf: Self.root.appendingPathComponent("README.md"), encoding: .utf8)
            let begin = try #require(readme.range(of: "<!-- serve-settings:begin -->"))
            let end = try #require(readme.range(of: "<!-- serve-settings:end -->"))
            try #require(begin.upperBound <= end.lowerBound)
            let documented = readme[begin.upperBound..<end.lowerBound].trimmingCharacters(in: .whitespacesAndNewlines)
            let printed = table.output.trimmingCharacters(in: .whitespacesAndNewlines)
            #expect(
                documented == printed,
                "README.md's settings table is not the code's: put the output of `routekit serve --settings-table` between its markers"
            )
            // Every setting is an option of serve's --help, and named in the table with its variable.
            let help = try runChildProcess(binary, ["serve", "--help"])
            let rows = printed.split(separator: "\n").dropFirst(2)
            #expect(rows.count >= 15)
            for row in rows {
                let cells = row.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
                let option = cells.count > 1 ? cells[1].replacingOccurrences(of: "`", with: "") : ""
                #expect(help.output.contains(option), "\(option) is not in serve --help")
            }
        }
    }
#endif
