import ArgumentParser
import RouteKit

@main
struct RouteKitCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "routekit",
        abstract: "Inspect and convert GPS routes (importing, smoothing and following arrive with the route store).",
        discussion: """
            RouteKit reads GPX 1.0 and 1.1 from any producer (Garmin, Strava, Apple Health, OsmAnd, GPSBabel…), \
            tolerating real-world quirks with a warning and refusing broken files with the file, line and column \
            at fault.

            Exit codes: 0 success; 1 at least one input failed (the others were still processed); \
            64 invalid command-line usage.
            """,
        version: "0.1.0",
        subcommands: [Inspect.self, Convert.self]
    )
}

/// Exit code when at least one input failed.
let exitInputFailed = ExitCode(1)
