import Foundation

/// Who a store's objects belong to: one person of a service that serves many (HealthKit gives each person a store
/// of their own; RouteKit keeps everyone in one store, partitioned by person).
///
/// Every workout, route, series, effort score, zone configuration, privacy zone, builder, job and change-feed
/// entry belongs to exactly one person, and sources live inside a person (a person's watch and phone). A store
/// object is always seen as one person (``RouteStore/person``): ``RouteStore/forPerson(_:)`` gives the same store
/// seen as another. A store written before people existed keeps everything in ``PersonID/default``.
public struct PersonID: Hashable, Sendable, Codable, Comparable, CustomStringConvertible {
    /// The identifier.
    public var uuid: UUID

    /// Creates a person identifier.
    public init(_ uuid: UUID) { self.uuid = uuid }

    /// The person a store starts with, and the one whose objects a store written before people existed holds:
    /// `00000000-0000-0000-0000-000000000000`. Command-line tools work as this person unless told otherwise.
    public static let `default` = PersonID(UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)))

    /// Lowercase text, as stores keep it.
    public var description: String { uuid.uuidString.lowercased() }

    public static func < (a: PersonID, b: PersonID) -> Bool { a.uuid.uuidString < b.uuid.uuidString }

    public init(from decoder: any Decoder) throws {
        self.uuid = try decoder.singleValueContainer().decode(UUID.self)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(description)
    }
}

/// A person as a store keeps them.
public struct Person: Hashable, Sendable, Identifiable {
    /// Their identifier.
    public var id: PersonID
    /// A name for the operator ("Ana", "user 1234"); never shown to other people.
    public var name: String
    /// The identity provider's subject this person was created for (`issuer` + `sub` of the JWTs that act as
    /// them), if any. At most one person has a given subject.
    public var subject: ExternalSubject?
    /// When they were added.
    public var created: Date

    /// Creates a person record.
    public init(id: PersonID = PersonID(UUID()), name: String, subject: ExternalSubject? = nil, created: Date = Date())
    {
        self.id = id
        self.name = name
        self.subject = subject
        self.created = created
    }
}

/// A person's identity at an identity provider: the `iss` and `sub` claims of the tokens it signs.
public struct ExternalSubject: Hashable, Sendable, Codable {
    /// The issuer (`iss`).
    public var issuer: String
    /// The subject (`sub`), unique within the issuer.
    public var subject: String

    /// Creates a subject.
    public init(issuer: String, subject: String) {
        self.issuer = issuer
        self.subject = subject
    }
}

/// A store that keeps people (`routekit people`, `POST /v1/people`). Both backends and the in-memory store conform.
///
/// Operations here are the operator's: they are not limited to the store object's ``RouteStore/person``.
public protocol PeopleStore: AnyObject, Sendable {
    /// Adds a person.
    /// - Throws: ``RouteKitError/Code/invalidArgument`` when a person with its id, or its subject, exists.
    func addPerson(_ person: Person) async throws(RouteKitError)
    /// The person with `id` (``PersonID/default`` always exists).
    func person(id: PersonID) async throws(RouteKitError) -> Person?
    /// The person created for an identity provider's subject.
    func person(subject: ExternalSubject) async throws(RouteKitError) -> Person?
    /// Every person, oldest first (the default person first).
    func people() async throws(RouteKitError) -> [Person]
    /// Erases a person in one transaction: every object they own (workouts, routes, chunks, series, effort scores,
    /// zone settings, privacy zones, summaries, builders and their chunks, jobs), every token of theirs, their
    /// change-feed entries, then the person. Freed pages are overwritten (SQLite's `secure_delete`) so nothing of
    /// theirs stays readable in the database file. Returns `false` when there is no such person.
    /// - Throws: ``RouteKitError/Code/invalidArgument`` for ``PersonID/default`` (it can be emptied, not erased).
    func erasePerson(id: PersonID) async throws(RouteKitError) -> Bool
    /// The people who have a pending builder whose last batch was acknowledged before `cutoff` (the server's sweep
    /// of abandoned uploads visits only them).
    func peopleWithPendingBuilders(updatedBefore cutoff: Date) async throws(RouteKitError) -> [PersonID]
    /// Where the change log stands for everyone: the newest position (`head`) and the people whose newest change is
    /// after `position` (a server's commit watcher wakes only those people's followers).
    func feedHeads(after position: Int64) async throws(RouteKitError) -> FeedHeads
    /// The bytes the store keeps for `person`'s data, in one aggregate query: the packed chunks of their routes'
    /// locations, of their series and attachments (GPX waypoints and extension fields among them) and of their
    /// pending builders' batches, and their workouts' and routes' stored records (with their metadata, a GPX file's
    /// `<metadata>` among it). Indexes and the store's own overhead are not counted; 0 for a person with nothing (or
    /// no such person). What a server's storage quota (`routekit serve --max-storage-per-person-mb`) is checked
    /// against.
    func storageUsed(by person: PersonID) async throws(RouteKitError) -> Int64
}

/// Where the change log of a store stands, for everyone (``PeopleStore/feedHeads(after:)``).
public struct FeedHeads: Hashable, Sendable {
    /// The newest position of the whole log (0: none).
    public var head: Int64
    /// The people with changes after the position asked about.
    public var people: Set<PersonID>

    /// Creates a reading.
    public init(head: Int64, people: Set<PersonID>) {
        self.head = head
        self.people = people
    }
}
