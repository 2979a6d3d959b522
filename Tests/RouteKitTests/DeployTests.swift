import Foundation
import Testing

/// The systemd unit in deploy/ (read as text; `systemd-analyze verify` is scripts/verify-systemd-unit.sh's, in CI).
@Suite("deploy/routekit.service")
struct DeployTests {
    /// The unit's `[Service]` section: every value of each key, in order (a key may be given more than once).
    static func serviceSection() throws -> [String: [String]] {
        let url = ModuleLayoutTests.root.appendingPathComponent("deploy/routekit.service")
        let text = try String(contentsOf: url, encoding: .utf8)
        var section = ""
        var keys: [String: [String]] = [:]
        for raw in text.split(separator: "\n", omittingEmptySubsequences: true) {
            let line = raw.trimmingCharacters(in: .whitespaces)
            if line.hasPrefix("#") || line.hasPrefix(";") || line.isEmpty { continue }
            if line.hasPrefix("[") {
                section = line
                continue
            }
            guard section == "[Service]", let equals = line.firstIndex(of: "=") else { continue }
            let key = line[..<equals].trimmingCharacters(in: .whitespaces)
            let value = line[line.index(after: equals)...].trimmingCharacters(in: .whitespaces)
            keys[key, default: []].append(value)
        }
        return keys
    }

    @Test("the service runs hardened: its own user, a read-only system but the store's folder, no privileges")
    func hardened() throws {
        let service = try Self.serviceSection()
        let expected: [(key: String, value: String)] = [
            ("User", "routekit"),
            ("StateDirectory", "routekit"),
            ("ProtectSystem", "strict"),
            ("ReadWritePaths", "/var/lib/routekit"),
            ("PrivateTmp", "yes"),
            ("ProtectHome", "yes"),
            ("NoNewPrivileges", "yes"),
            ("CapabilityBoundingSet", ""),
            ("RestrictAddressFamilies", "AF_INET AF_INET6 AF_UNIX"),
            ("SystemCallFilter", "@system-service"),
            ("KillSignal", "SIGTERM"),
            ("Environment", "ROUTEKIT_STORE=/var/lib/routekit/routekit.sqlite"),
        ]
        for (key, value) in expected {
            let values = service[key] ?? []
            #expect(values.contains(value), "\(key)=\(value) is not in [Service] (it has \(values))")
        }
        // No key undoes what is above (a later empty assignment resets most of them).
        for key in ["ProtectSystem", "PrivateTmp", "ProtectHome", "NoNewPrivileges", "ReadWritePaths"] {
            let values = service[key] ?? []
            #expect(values.count == 1, "\(key) is set \(values.count) times")
        }
        let dynamicUser = service["DynamicUser"] ?? ["no"]
        #expect(dynamicUser == ["no"], "a dynamic user cannot be the one `tokens create` runs as (sudo -u routekit)")
        // A stop waits for the drain, then not forever.
        let timeout = Double(service["TimeoutStopSec"]?.last ?? "") ?? 0
        #expect(timeout >= 30 && timeout <= 600, "TimeoutStopSec=\(timeout)")
        // The binary make install puts in place (install-systemd rewrites the prefix), running serve.
        let start = service["ExecStart"]?.first ?? ""
        #expect(start == "/usr/local/bin/routekit serve", "\(start)")
    }

    @Test("the user the unit names is the one deploy/routekit.sysusers makes, with the state folder as its home")
    func sysusers() throws {
        let url = ModuleLayoutTests.root.appendingPathComponent("deploy/routekit.sysusers")
        let text = try String(contentsOf: url, encoding: .utf8)
        let entries = text.split(separator: "\n").filter { !$0.hasPrefix("#") && !$0.isEmpty }
        #expect(entries.count == 1)
        let first = entries.first.map(String.init) ?? ""
        #expect(first.hasPrefix("u routekit "), "\(first)")
        #expect(first.hasSuffix(" /var/lib/routekit"), "\(first)")
    }
}
