import ArgumentParser
import Foundation
import RouteKit
import RouteKitApplication
import RouteKitProcessing

struct ZonesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "zones",
        abstract: "Show or set a source's heart-rate and power zones (what its workouts' statistics use).",
        discussion: """
            A zone configuration has 3 to 9 zones, the first from 0 and the last unbounded, given by their 2 to 8 \\
            inner boundaries in bpm or W. A source's workouts use, unless `stats` is given zones of its own: the \\
            person's own configuration (`zones set … BOUNDARIES`); else one the system computes from what is known \\
            (`--max-hr` with `--resting-hr`: five zones of heart-rate reserve, Karvonen; `--max-hr` alone: 60, 70, \\
            80, 90 % of it; `--age`: a maximum of 208 − 0.7 × age; `--ftp`: Coggan's seven power zones); and only \\
            when nothing is known, each workout's own maximum heart rate or estimated FTP, which its statistics \\
            then name. The same settings are served at GET/PUT/DELETE /v1/zones/{heartRate|power}.

            With --workout ID, the zones saved with one workout (HealthKit's custom configuration an app supplies \
            for a workout, origin `app`): that workout's statistics use them, and its own figures, before the \
            person's. Only the workout's source may set or clear them (GET/PUT/DELETE \
            /v1/workouts/ID/zones/{heartRate|power}).
            """,
        subcommands: [Show.self, Set.self, Clear.self], defaultSubcommand: Show.self)

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "show", abstract: "The zones a source's workouts use, and what they come from.",
            discussion: """
                JSON (--json):
                  {"heartRate": {"quantity": "heartRate", "origin": "system"|"user"|"app", "unit": "bpm",
                   "boundaries": [x, …], "basis": "…"|null}|null, "power": {…}|null,
                   "maximumHeartRate": x|null, "restingHeartRate": x|null, "age": x|null, "ftp": x|null}
                """)

        @OptionGroup var storeOptions: StoreOptions
        @OptionGroup var person: PersonOption
        @OptionGroup var sourceOption: SourceOption
        @Option(help: "The zones one workout's statistics use (uuid, or its first 8+ hex digits).") var workout: String?
        @Flag(help: "One JSON object.") var json = false

        func run() async throws {
            try await runReportingErrors {
                let store = try await person.view(of: storeOptions.open())
                let source = try sourceOption.resolved()
                var settings = try await store.zoneSettings(of: source)
                if let workout {
                    let w = try await ZonesCommand.workout(workout, in: store)
                    settings = try await ZoneSettingsChanges.settings(ofWorkout: w, in: store)
                }
                if json {
                    printJSONLine(ZoneSettingsJSON(settings))
                    return
                }
                ZonesCommand.print(ZonePreference.heartRate(settings), .heartRate, source: source)
                ZonesCommand.print(ZonePreference.power(settings), .power, source: source)
            }
        }
    }

    struct Set: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "set", abstract: "Set a source's own zones, or the figures its system zones come from.",
            discussion: """
                Examples:
                  routekit zones set heart-rate 120,140,155,170 --source alice
                  routekit zones set heart-rate --max-hr 190 --resting-hr 50 --source alice
                  routekit zones set power --ftp 250 --source alice
                """)

        @OptionGroup var storeOptions: StoreOptions
        @OptionGroup var person: PersonOption
        @OptionGroup var sourceOption: SourceOption
        @OptionGroup var quantity: ZoneQuantity
        @Argument(
            help: ArgumentHelp(
                "The 2 to 8 inner boundaries (bpm or W), comma-separated, ascending: the person's own zones.",
                valueName: "BOUNDARIES"))
        var boundaries: String?
        @Option(help: ArgumentHelp("Maximum heart rate (bpm).", valueName: "BPM")) var maxHr: Double?
        @Option(help: ArgumentHelp("Resting heart rate (bpm), for zones of heart-rate reserve.", valueName: "BPM"))
        var restingHr: Double?
        @Option(help: "Age in years.") var age: Double?
        @Option(help: ArgumentHelp("Functional threshold power (W).", valueName: "WATTS")) var ftp: Double?
        @Option(help: "Save them with this workout only (uuid, or its first 8+ hex digits).") var workout: String?

        func run() async throws {
            try await runReportingErrors {
                // Zones may be set before anything is imported: this one makes the store if need be.
                let store = try await person.view(of: storeOptions.open(creating: true))
                let source = try sourceOption.resolved()
                let q = try quantity.resolved()
                let values = try boundaries.map { text throws(RouteKitError) -> [Double] in
                    let parts = text.split(separator: ",").map { Double($0.trimmingCharacters(in: .whitespaces)) }
                    guard !parts.isEmpty, parts.allSatisfy({ $0 != nil }) else {
                        throw RouteKitError(
                            .invalidArgument, "BOUNDARIES takes numbers separated by commas, not '\(text)'")
                    }
                    return parts.compactMap { $0 }
                }
                let change = ZoneSettingsChanges.Change(
                    boundaries: values, maximumHeartRate: maxHr, restingHeartRate: restingHr, age: age, ftp: ftp)
                if let workout {
                    let w = try await ZonesCommand.workout(workout, in: store)
                    let now = try await ZoneSettingsChanges.apply(change, to: q, ofWorkout: w, as: source, in: store)
                    ZonesCommand.print(now, q, source: source)
                    return
                }
                let now = try await ZoneSettingsChanges.apply(change, to: q, of: source, in: store)
                ZonesCommand.print(now, q, source: source)
            }
        }
    }

    struct Clear: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "clear",
            abstract: "Remove a source's own zones of a quantity (the system's apply again; figures stay).")

        @OptionGroup var storeOptions: StoreOptions
        @OptionGroup var person: PersonOption
        @OptionGroup var sourceOption: SourceOption
        @OptionGroup var quantity: ZoneQuantity
        @Option(help: "Clear what is saved with this workout (its zones and that quantity's figures).")
        var workout: String?

        func run() async throws {
            try await runReportingErrors {
                let store = try await person.view(of: storeOptions.open())
                let source = try sourceOption.resolved()
                let q = try quantity.resolved()
                if let workout {
                    let w = try await ZonesCommand.workout(workout, in: store)
                    let now = try await ZoneSettingsChanges.clear(q, ofWorkout: w, as: source, in: store)
                    ZonesCommand.print(now, q, source: source)
                    return
                }
                ZonesCommand.print(try await ZoneSettingsChanges.clear(q, of: source, in: store), q, source: source)
            }
        }
    }

    /// The QUANTITY argument of `set` and `clear`.
    struct ZoneQuantity: ParsableArguments {
        @Argument(help: ArgumentHelp("heart-rate or power.", valueName: "QUANTITY")) var quantity: String

        func validate() throws {
            do { _ = try resolved() } catch { throw ValidationError(error.message) }
        }

        func resolved() throws(RouteKitError) -> ZoneConfiguration.Quantity {
            try ZoneConfiguration.Quantity(parsing: quantity)
        }
    }

    /// The workout a --workout argument names.
    static func workout(_ text: String, in store: any RouteStore) async throws -> Workout {
        let id = try await resolveID(text, argument: "--workout", .workouts, in: store)
        guard let w = try await store.workout(id: id) else {
            throw RouteKitError(.notFound, "no workout \(id.lowercaseText)")
        }
        return w
    }

    /// One quantity's configuration as lines: what it comes from, then each zone's range.
    static func print(_ c: ZoneConfiguration?, _ q: ZoneConfiguration.Quantity, source: Source) {
        let name = q == .heartRate ? "heart rate" : "power"
        guard let c else {
            Swift.print(
                "\(name): nothing known for source '\(source.name)': each workout's own "
                    + (q == .heartRate ? "maximum heart rate" : "estimated FTP") + " is used")
            return
        }
        Swift.print("\(name): \(c.origin.rawValue)" + (c.basis.map { " (\($0))" } ?? ""))
        let bounds = c.lowerBounds
        for (i, lower) in bounds.enumerated() {
            let range =
                i + 1 < bounds.count
                ? String(format: "%.0f–%.0f", lower, bounds[i + 1]) : String(format: "%.0f+", lower)
            Swift.print("  zone \(i + 1)  \(range) \(q.unit)")
        }
    }
}
