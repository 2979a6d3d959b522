package import Foundation
package import RouteKit

/// A route's or workout's uuid as a person types it: whole, or its first hex digits (at least
/// ``minimumPrefixLength``, as `routekit routes` and `routekit workouts` print them), resolved against the store's
/// current routes and workouts. Every command that takes a route or a workout resolves it here.
package enum StoredID {
    /// What an id may name.
    package struct Kinds: OptionSet, Sendable, Hashable {
        package let rawValue: Int
        package init(rawValue: Int) { self.rawValue = rawValue }

        /// Current routes.
        package static let routes = Kinds(rawValue: 1)
        /// Workouts.
        package static let workouts = Kinds(rawValue: 2)
        /// Either.
        package static let either: Kinds = [.routes, .workouts]

        /// What one is called in messages.
        var noun: String {
            switch self {
            case .routes: "route"
            case .workouts: "workout"
            default: "route or workout"
            }
        }

        /// What several are called in messages.
        var plural: String {
            switch self {
            case .routes: "routes"
            case .workouts: "workouts"
            default: "routes and workouts"
            }
        }
    }

    /// The fewest hex digits a prefix has.
    package static let minimumPrefixLength = 8

    /// The most candidates the error for an ambiguous prefix lists (how many more there are is said after them).
    package static let listedCandidates = 10

    /// A uuid's text, lowercase, as prefixes are matched against it (`-` where a uuid has one, `x` for a hex digit).
    private static let shape = Array("xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx")

    /// `text` lowercased when it can begin a uuid's text and has at least ``minimumPrefixLength`` characters (hex
    /// digits, and dashes where a uuid has them); `nil` otherwise.
    package static func prefix(_ text: String) -> String? {
        let lower = Array(text.lowercased())
        guard lower.count >= minimumPrefixLength, lower.count <= shape.count else { return nil }
        for (c, expected) in zip(lower, shape) {
            if expected == "-" {
                guard c == "-" else { return nil }
            } else {
                guard c.isHexDigit else { return nil }
            }
        }
        return String(lower)
    }

    /// The uuid `text` names: a whole uuid as it is (whether or not the store has it: the caller says what is
    /// missing), a prefix as the one current route or workout (of `kinds`) whose uuid begins with it.
    ///
    /// - Parameters:
    ///   - text: What was typed.
    ///   - argument: The argument's name for messages (`ROUTE`, `--workout`).
    ///   - kinds: What the id may name.
    ///   - store: Where a prefix is looked up.
    /// - Throws: ``RouteKitError/Code/invalidArgument`` (a usage error) for text that is neither a uuid nor a prefix,
    ///   naming `argument`, and for a prefix that begins several uuids, saying how many and listing them (the first
    ///   ``listedCandidates`` by uuid, each with its kind, as git lists the objects an ambiguous short id names);
    ///   ``RouteKitError/Code/notFound`` for a prefix that begins none; the store's errors.
    package static func resolve(
        _ text: String, argument: String, kinds: Kinds = .either, in store: any RouteStore
    ) async throws(RouteKitError) -> UUID {
        if let id = UUID(uuidString: text) { return id }
        guard let start = Self.prefix(text) else {
            throw RouteKitError(
                .invalidArgument,
                "\(argument) '\(text)' is not a \(kinds.noun)'s uuid, nor its first \(minimumPrefixLength) or more "
                    + "hex digits")
        }
        // Each match's uuid (lowercase) and how it is listed when the prefix is ambiguous.
        var matches: [String: (id: UUID, line: String)] = [:]
        if kinds.contains(.routes) {
            for route in try await store.routes(matching: RouteFilter()) {
                let key = route.id.uuidString.lowercased()
                guard key.hasPrefix(start), matches[key] == nil else { continue }
                let workout = route.workoutID.uuidString.lowercased().prefix(minimumPrefixLength)
                matches[key] = (
                    route.id,
                    "\(key) route    \(route.start?.iso8601 ?? "-"), \(route.locationCount) location(s), "
                        + "workout \(workout)"
                )
            }
        }
        if kinds.contains(.workouts) {
            for workout in try await store.workouts(matching: WorkoutFilter()) {
                let key = workout.id.uuidString.lowercased()
                guard key.hasPrefix(start), matches[key] == nil else { continue }
                matches[key] = (
                    workout.id, "\(key) workout  \(workout.start?.iso8601 ?? "-"), \(workout.activityType.rawValue)"
                )
            }
        }
        guard let first = matches.values.first else {
            throw RouteKitError(.notFound, "no \(kinds.noun) has a uuid beginning with '\(text)' (\(argument))")
        }
        guard matches.count == 1 else {
            let lines = matches.values.map { $0.line }
            throw RouteKitError(.invalidArgument, ambiguity(text, argument: argument, kinds: kinds, lines: lines))
        }
        return first.id
    }

    /// The message for a prefix that begins several uuids: how many, and the first ``listedCandidates`` of them
    /// (`lines`, each beginning with its uuid) in uuid order, one a line.
    static func ambiguity(_ text: String, argument: String, kinds: Kinds, lines: [String]) -> String {
        var message =
            "\(argument) '\(text)' is ambiguous: it begins the uuids of \(lines.count) \(kinds.plural): "
            + "give more of it. The candidates are:"
        for line in lines.sorted().prefix(listedCandidates) { message += "\n  " + line }
        if lines.count > listedCandidates { message += "\n  … and \(lines.count - listedCandidates) more" }
        return message
    }
}

extension StoredID {
    /// The person `text` names (`routekit export --person`): `default` for `PersonID.default`, a whole id, or its
    /// first hex digits (at least ``minimumPrefixLength``, as for routes and workouts), resolved against the people
    /// the store keeps.
    ///
    /// - Parameters:
    ///   - text: What was typed.
    ///   - argument: The argument's name for messages (`--person`).
    ///   - people: Where the people are looked up.
    /// - Throws: `RouteKitError.Code.invalidArgument` (a usage error) for text that is neither an id nor a prefix,
    ///   and for a prefix that begins several ids (listing them); `RouteKitError.Code.notFound` (`no person …`)
    ///   for an id or a prefix no person has; the store's errors.
    package static func resolvePerson(
        _ text: String, argument: String, in people: any PeopleStore
    ) async throws(RouteKitError) -> PersonID {
        if text.lowercased() == "default" { return .default }
        if let uuid = UUID(uuidString: text) {
            let id = PersonID(uuid)
            guard try await people.person(id: id) != nil else {
                throw RouteKitError(.notFound, "no person \(id) (\(argument))")
            }
            return id
        }
        guard let start = Self.prefix(text) else {
            throw RouteKitError(
                .invalidArgument,
                "\(argument) '\(text)' is not a person's id, nor its first \(minimumPrefixLength) or more hex digits, "
                    + "nor 'default'")
        }
        let matches = try await people.people().filter { $0.id.description.hasPrefix(start) }
        guard let first = matches.first else {
            throw RouteKitError(.notFound, "no person has an id beginning with '\(text)' (\(argument))")
        }
        guard matches.count == 1 else {
            var message =
                "\(argument) '\(text)' is ambiguous: it begins the ids of \(matches.count) people: give more of it. "
                + "The candidates are:"
            let lines = matches.map { "\($0.id.description) person   added \(Timestamp($0.created).iso8601)" }
            for line in lines.sorted().prefix(listedCandidates) { message += "\n  " + line }
            if lines.count > listedCandidates { message += "\n  … and \(lines.count - listedCandidates) more" }
            throw RouteKitError(.invalidArgument, message)
        }
        return first.id
    }
}
