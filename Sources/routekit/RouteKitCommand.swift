import ArgumentParser
import Foundation
import RouteKit

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
            privacy-zones --add); a command that only reads refuses a path with no store (exit 66) rather than \
            answer from a new, empty one. Or a postgres://user:password@host/db URL, for importers, workers and \
            consumers on several machines (a routekit built with --traits Postgres).

            `routekit serve` serves a store over HTTP to holders of API tokens (`routekit tokens`), in a routekit \
            built with --traits Server.

            Exit codes: 0 success; 1 at least one input failed (the others were still processed); 3 a change-feed \
            anchor the store cannot use (start again without it); \
            64 invalid command-line usage; 65 nothing to import (a folder with no route file); 66 no store at the \
            path given (--store, $ROUTEKIT_STORE).
            """,
        // The OpenAPI document's info.version too (Sources/RouteKitServer/openapi.yaml): a test holds them equal.
        version: "0.3.0",
        subcommands: [
            Import.self, Routes.self, Workouts.self, Locations.self, Export.self, Delete.self, Builders.self,
            Recover.self, Discard.self, Changes.self, Compact.self, Smooth.self, Stats.self, Splits.self, Series.self,
            Effort.self,
            PrivacyZones.self, ZonesCommand.self,
            Inspect.self,
            Convert.self, Render.self, Serve.self, Tokens.self,
        ]
    )

    /// A reader that stops early (`routekit routes --json | head -1`) ends the output, not the process: with
    /// SIGPIPE ignored, writes to a closed pipe fail quietly and the command finishes with its own status.
    static func main() async {
        signal(SIGPIPE, SIG_IGN)
        await main(nil)
    }
}

/// Exit code when at least one input failed.
let exitInputFailed = ExitCode(1)

/// Exit code when a command found nothing to read: no store at the path it was given (EX_NOINPUT).
let exitNoInput = ExitCode(66)

/// Exit code when the input holds nothing a command reads: a folder with no file to import (EX_DATAERR).
let exitDataError = ExitCode(65)
