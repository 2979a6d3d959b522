import ArgumentParser
import RouteKitGPX

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
