import ArgumentParser
import RouteKitGPX
import RouteKitImport

/// `--skip-invalid-points`, shared by the commands that read GPX files (import, recover, inspect, convert).
struct GPXReadingOptions: ParsableArguments {
    @Flag(
        help: ArgumentHelp(
            "Skip points whose latitude is outside -90…90 or longitude outside -180…180 (with their time and "
                + "values), with a warning that counts them, instead of failing the file. Points without lat/lon "
                + "are always skipped and counted; anything else malformed still fails the file. A file that needed "
                + "this flag needs it again to be re-imported or recovered."))
    var skipInvalidPoints = false

    /// The reader options these flags select.
    var readOptions: GPXReadOptions {
        var options = GPXReadOptions()
        options.skipInvalidPoints = skipInvalidPoints
        return options
    }
}

/// The limits an archive (zip, a Strava or Apple Health export) is read within, for `import` and `render`.
/// `serve` has the same two options as settings of its own (`ServeSetting.maxArchiveEntries`, `.maxEntryMb`), which may
/// also come from the environment or a configuration file.
struct ArchiveOptions: ParsableArguments {
    /// What `--max-archive-entries` sets (here and in `serve`'s settings).
    static let entriesMeaning =
        "The most entries a zip archive may list (files, folders and links); one that lists more is refused when it "
        + "is opened, before any entry is read. A Strava export lists about one per activity."
    /// What `--max-entry-mb` sets (here and in `serve`'s settings).
    static let entryMeaning =
        "The largest entry of a zip archive once inflated, in MiB; a larger one is refused (the others still import)."

    @Option(help: ArgumentHelp(ArchiveOptions.entriesMeaning, valueName: "N"))
    var maxArchiveEntries = ArchiveLimits().maxEntries
    @Option(help: ArgumentHelp(ArchiveOptions.entryMeaning, valueName: "MiB"))
    var maxEntryMb = ArchiveLimits().maxEntryBytes >> 20

    func validate() throws {
        if maxArchiveEntries < 1 { throw ValidationError("--max-archive-entries must be at least 1.") }
        if !(1...(1 << 20)).contains(maxEntryMb) {
            throw ValidationError("--max-entry-mb must be from 1 to 1048576.")
        }
    }

    /// The limits these options select.
    var limits: ArchiveLimits {
        var limits = ArchiveLimits()
        limits.maxEntries = maxArchiveEntries
        limits.maxEntryBytes = maxEntryMb << 20
        return limits
    }
}
