import ArgumentParser
import Foundation
import RouteKit
import RouteKitApplication

@main
struct RouteKitCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "routekit",
        abstract: "Import, store, query, export, follow and smooth GPS routes.",
        discussion: """
            RouteKit reads GPX 1.0 and 1.1 from any producer (Garmin, Strava, Apple Health, OsmAnd, GPSBabel…), \
            tolerating real-world quirks with a warning and refusing broken files with the file, line and column \
            at fault.

            Commands that touch a store take --store PATH (default $ROUTEKIT_STORE, else \
            $XDG_DATA_HOME/routekit/store.sqlite, i.e. ~/.local/share/routekit/store.sqlite): one SQLite file, \
            safe for several processes at once, made by the first import (or serve, tokens create, zones set, \
            privacy-zones --add); a command that only reads refuses a path with no store (`no store at PATH`, \
            exit 1) rather than answer from a new, empty one. Or a postgres://user:password@host/db URL, for \
            importers, workers and consumers on several machines (a routekit built with --traits Postgres).

            A store keeps many people apart (`routekit people`): the commands that read or write data act as the \
            default person unless given --person ID; `smooth --all-people` smooths everyone's routes in turn.

            `routekit serve` serves a store over HTTP to holders of API tokens (`routekit tokens`), in a routekit \
            built with --traits Server.

            Exit codes: 0 success; 1 failure: at least one input failed (the others were still processed), \
            nothing to import (a folder with no route file), no store at the path given (--store, \
            $ROUTEKIT_STORE); 3 a change-feed anchor the store cannot use (start again without it); 64 invalid \
            command-line usage; 78 `serve`: a configuration file (--config) or a ROUTEKIT_ environment variable it \
            cannot use; 130 interrupted (Ctrl-C; import says what it stored and how to finish).
            """,
        // The OpenAPI document's info.version too (Sources/RouteKitServer/openapi.yaml): a test holds them equal.
        version: RouteKitRelease.version,
        subcommands: [
            Import.self, Routes.self, Workouts.self, Locations.self, Export.self, Delete.self, Builders.self,
            Recover.self, Discard.self, Changes.self, Compact.self, Smooth.self, Stats.self, Splits.self, Series.self,
            Effort.self,
            PrivacyZones.self, ZonesCommand.self,
            Inspect.self,
            Convert.self, Render.self, Serve.self, Tokens.self, People.self,
        ]
    )

    /// A reader that stops early (`routekit routes --json | head -1`) ends the output, not the process: with
    /// SIGPIPE ignored, writes to a closed pipe fail quietly and the command finishes with its own status.
    static func main() async {
        signal(SIGPIPE, SIG_IGN)
        // A misspelt command is named as such (the argument parser would say "2 unexpected arguments").
        if let message = unknownCommand(Array(CommandLine.arguments.dropFirst())) {
            printError("error: \(message)")
            Self.exit(withError: ExitCode.validationFailure)
        }
        await main(nil)
    }

    /// What to say when `arguments` start with a word that is no command (the root takes no argument of its own):
    /// the command it is closest to, within two edits; `nil` when the first argument is a command, an option, or
    /// `help`.
    static func unknownCommand(_ arguments: [String]) -> String? {
        guard let first = arguments.first, !first.hasPrefix("-"), first != "help" else { return nil }
        let names: [String] = configuration.subcommands.flatMap { command -> [String] in
            [command.configuration.commandName].compactMap { $0 } + command.configuration.aliases
        }
        guard !names.contains(first) else { return nil }
        var best: (name: String, distance: Int)?
        for name in names {
            let distance = editDistance(first.lowercased(), name)
            if distance <= 2 && distance < (best?.distance ?? .max) { best = (name, distance) }
        }
        if let best { return "unknown command '\(first)'; did you mean '\(best.name)'?" }
        return "unknown command '\(first)' (routekit --help lists the commands)"
    }

    /// The edits (insertions, deletions, substitutions, swaps of two neighbours) from `a` to `b`; words whose lengths
    /// differ by more than 2 are 3 apart without counting.
    static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a)
        let b = Array(b)
        if abs(a.count - b.count) > 2 { return 3 }
        if a.isEmpty || b.isEmpty { return max(a.count, b.count) }
        var d = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in 0...a.count { d[i][0] = i }
        for j in 0...b.count { d[0][j] = j }
        for i in 1...a.count {
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost)
                if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                    d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1)
                }
            }
        }
        return d[a.count][b.count]
    }
}

/// Exit code when a command failed: at least one input failed, there was nothing to import (a folder with no route
/// file), or there is no store at the path a command that reads was given.
let exitInputFailed = ExitCode(1)

/// Exit code when a command was interrupted (Ctrl-C): 128 + SIGINT, as a shell reports a process SIGINT ended.
let exitInterrupted = ExitCode(130)

/// Exit code when `serve`'s configuration cannot be used: a configuration file that cannot be read, is not JSON or YAML,
/// or has a key that is no setting, or a value there or in a `ROUTEKIT_` environment variable that is not of its
/// setting's kind or out of its range (EX_CONFIG).
let exitConfiguration = ExitCode(78)
