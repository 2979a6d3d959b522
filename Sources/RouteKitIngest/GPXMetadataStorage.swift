import Foundation
import RouteKit

/// A GPX file's `<metadata>` (``GPXMetadata``) kept in the metadata of the workouts its import makes, so that
/// `routekit export` (and `GET /v1/routes/ID/export`) writes it back: one entry, ``key`` (`gpxMetadata`), whose
/// value is a JSON object with GPX's own element names.
///
/// ```
/// {"author":{"email":"jo@example.org","link":{"href":"https://example.org","text":"Jo"},"name":"Jo"},
///  "bounds":{"maxlat":46.6,"maxlon":7.6,"minlat":46.5,"minlon":7.5},
///  "copyright":{"author":"Jo","license":"https://creativecommons.org/licenses/by/4.0/","year":"2024"},
///  "desc":"…","extensions":["<x:e xmlns:x=\"urn:example\"/>"],"keywords":"alps, ride",
///  "links":[{"href":"https://example.org/ride","text":"The ride","type":"text/html"}],"name":"…",
///  "time":"2024-05-01T08:00:00.123+02:00"}
/// ```
///
/// Absent fields are left out; the time keeps its UTC offset and fraction as written; `email` is GPX 1.1's
/// `id@domain`. GPX 1.0's file-level fields are the same model (the reader gives them as ``GPXMetadata``). The entry
/// is not part of a track's identity: the same track with other metadata imports as `unchanged`, and keeps the
/// metadata of its first import.
package enum GPXMetadataStorage {
    /// The workout metadata key.
    package static let key = "gpxMetadata"

    private struct Stored: Codable {
        var name: String?
        var desc: String?
        var author: Person?
        var copyright: Copyright?
        var links: [GPXLink]?
        var time: String?
        var keywords: String?
        var bounds: Bounds?
        var extensions: [String]?
    }

    private struct Person: Codable {
        var name: String?
        var email: String?
        var link: GPXLink?
    }

    private struct Copyright: Codable {
        var author: String
        var year: String?
        var license: String?
    }

    private struct Bounds: Codable {
        var minlat: Double
        var minlon: Double
        var maxlat: Double
        var maxlon: Double
    }

    /// `metadata` as the entry's value (a JSON object, keys sorted); `nil` when it is empty.
    package static func value(_ metadata: GPXMetadata) -> MetadataValue? {
        if metadata.isEmpty { return nil }
        var s = Stored()
        s.name = metadata.name
        s.desc = metadata.description
        if let a = metadata.author, a != GPXPerson() {
            s.author = Person(name: a.name, email: a.email, link: a.link)
        }
        if let c = metadata.copyright {
            s.copyright = Copyright(author: c.author, year: c.year, license: c.license)
        }
        s.links = metadata.links.isEmpty ? nil : metadata.links
        s.time = metadata.time?.iso8601
        s.keywords = metadata.keywords
        // JSON has no NaN or infinity: bounds that are not finite numbers (the reader never gives such) are left out.
        if let b = metadata.bounds,
            [b.minLatitude, b.minLongitude, b.maxLatitude, b.maxLongitude].allSatisfy(\.isFinite)
        {
            s.bounds = Bounds(
                minlat: b.minLatitude, minlon: b.minLongitude, maxlat: b.maxLatitude, maxlon: b.maxLongitude)
        }
        s.extensions = metadata.extensions.isEmpty ? nil : metadata.extensions
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        guard let json = try? encoder.encode(s) else { return nil }
        return .string(String(decoding: json, as: UTF8.self))
    }

    /// The metadata an entry holds; `nil` when there is no entry, or when it is not one ``value(_:)`` made (a
    /// value another program stored under the key is ignored, not an error).
    package static func metadata(_ value: MetadataValue?) -> GPXMetadata? {
        guard case .string(let text)? = value,
            let s = try? JSONDecoder().decode(Stored.self, from: Data(text.utf8))
        else { return nil }
        var m = GPXMetadata()
        m.name = s.name
        m.description = s.desc
        if let a = s.author { m.author = GPXPerson(name: a.name, email: a.email, link: a.link) }
        if let c = s.copyright { m.copyright = GPXCopyright(author: c.author, year: c.year, license: c.license) }
        m.links = s.links ?? []
        m.time = s.time.flatMap { Timestamp(iso8601: $0) }
        m.keywords = s.keywords
        if let b = s.bounds {
            m.bounds = GPXBounds(
                minLatitude: b.minlat, minLongitude: b.minlon, maxLatitude: b.maxlat, maxLongitude: b.maxlon)
        }
        m.extensions = s.extensions ?? []
        return m.isEmpty ? nil : m
    }
}
