import ArgumentParser
import Foundation
import RouteKit

struct PrivacyZones: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "privacy-zones",
        abstract: "List, add or clear a source's privacy zones (circles removed from processed routes).",
        discussion: """
            A source's zones are kept in the store. Every route of the source that `routekit smooth` processes \
            afterwards gets the privacy stage with these zones (plus any --privacy-zone given to smooth): the \
            points inside are removed from the new version, the original stays as it was, and `routekit stats` \
            of a workout, computed from the original, does not change. Changing the zones changes the pipeline's \
            parameter hash, so the next `smooth --all` processes the source's routes again. A user's zones are \
            those of the source their routes are imported as (--source).

            Examples:
              routekit privacy-zones --source alice --add 47.3769,8.5417,300
              routekit privacy-zones --source alice --json
              routekit privacy-zones --source alice --clear
            """)

    @OptionGroup var storeOptions: StoreOptions
    @OptionGroup var person: PersonOption
    @OptionGroup var sourceOption: SourceOption
    @Option(
        help: ArgumentHelp("Add a zone of RADIUS metres around LAT,LON (repeatable).", valueName: "LAT,LON,RADIUS"))
    var add: [String] = []
    @Flag(help: "Remove all of the source's zones (before adding any given with --add).") var clear = false
    @Flag(help: "One JSON object per zone: {\"latitude\", \"longitude\", \"radiusMetres\"}.") var json = false

    func validate() throws {
        for text in add { _ = try parsePrivacyZone(text, option: "--add") }
    }

    func run() async throws {
        let added = try add.map { try parsePrivacyZone($0, option: "--add") }
        try await runReportingErrors {
            // Listing reads (no store: refused); adding or clearing writes, making the store if need be.
            let store = try await person.view(of: storeOptions.open(creating: clear || !added.isEmpty))
            let source = try sourceOption.resolved()
            if clear || !added.isEmpty {
                let kept = clear ? [] : try await store.privacyZones(of: source)
                try await store.setPrivacyZones(kept + added.filter { !kept.contains($0) }, of: source)
            }
            let zones = try await store.privacyZones(of: source)
            if json {
                for z in zones { printJSONLine(z) }
                return
            }
            if zones.isEmpty { print("no privacy zones for source '\(source.name)'") }
            for (i, z) in zones.enumerated() {
                print(String(format: "%d  %.6f, %.6f  radius %.0f m", i + 1, z.latitude, z.longitude, z.radiusMetres))
            }
        }
    }
}
