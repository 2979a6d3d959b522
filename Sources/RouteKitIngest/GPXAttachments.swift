import Foundation
import RouteKit

/// A file's `<wpt>` and `<rte>` (and a FIT or TCX course's points), as the importers store them:
/// `ChunkKind.attachment` chunks of the workout of the file's first track (or of a workout of their own when the
/// file has no track), JSON-encoded, at most ``GPXAttachments/pointsPerChunk`` points per chunk, waypoints before
/// routes.
package struct GPXAttachments: Sendable {
    /// Points per stored chunk.
    package static let pointsPerChunk = 1024
    /// Waypoints and route points kept per file; beyond this they are counted and reported, not stored.
    package static let maxPoints = 1_000_000

    /// Waypoints, in file order.
    package var waypoints: [GPXPoint] = []
    /// Routes, in file order: their fields and points.
    package var routes: [(info: GPXPathInfo, points: [GPXPoint])] = []
    /// Points that were read but not kept (over ``maxPoints``).
    package private(set) var dropped = 0
    private var kept = 0

    /// Nothing yet.
    package init() {}

    /// Whether there is nothing to store.
    package var isEmpty: Bool { waypoints.isEmpty && routes.isEmpty }

    package mutating func add(waypoint p: GPXPoint) {
        guard kept < Self.maxPoints else { return dropped += 1 }
        kept += 1
        waypoints.append(p)
    }

    package mutating func startRoute(_ info: GPXPathInfo) { routes.append((info, [])) }

    package mutating func add(routePoints points: [GPXPoint]) {
        guard !routes.isEmpty else { return }
        let room = max(0, Self.maxPoints - kept)
        routes[routes.count - 1].points += points.prefix(room)
        kept += min(room, points.count)
        dropped += points.count - min(room, points.count)
    }

    package mutating func endRoute(_ info: GPXPathInfo) {
        guard !routes.isEmpty else { return }
        routes[routes.count - 1].info = info
    }

    /// A content hash (the sync identifier of a file that has only waypoints and routes).
    var contentHash: String {
        var h = ContentHasher(domain: "gpx-attachments-v1")
        func point(_ p: GPXPoint) {
            h.combine(p.location)
            for slot in 0..<6 { h.combine(p.values.raw(slot)) }
            if let x = p.extras { TrackScan.combine(x, into: &h) } else { h.combine(0 as UInt64) }
        }
        for p in waypoints { point(p) }
        h.combine(UInt64(waypoints.count))
        for r in routes {
            h.combine(r.info.name)
            h.combine(r.info.description)
            h.combine(r.info.comment)
            h.combine(r.info.type)
            for p in r.points { point(p) }
            h.combine(UInt64(r.points.count))
        }
        return h.hexDigest
    }

    // MARK: Encoding

    struct StoredPoint: Codable {
        var t: Timestamp?
        var la: Double
        var lo: Double
        var f: [Double?]
        var v: [String: Double]?
        var x: GPXPointExtras?

        init(_ p: GPXPoint) {
            let l = p.location
            t = l.timestamp
            la = l.latitude
            lo = l.longitude
            f = [
                l.altitude, l.horizontalAccuracy, l.verticalAccuracy, l.speed, l.speedAccuracy, l.course,
                l.courseAccuracy,
            ]
            var values: [String: Double] = [:]
            for slot in 0..<6 where !p.values.raw(slot).isNaN {
                values[QuantityType.all[slot].identifier] = p.values.raw(slot)
            }
            v = values.isEmpty ? nil : values
            x = p.extras
        }

        var point: GPXPoint {
            func field(_ i: Int) -> Double? { i < f.count ? f[i] : nil }
            var values = GPXPointValues()
            for (name, value) in v ?? [:] {
                if let type = QuantityType(identifier: name) { values[type] = value }
            }
            return GPXPoint(
                location: Location(
                    latitude: la, longitude: lo, timestamp: t, altitude: field(0), horizontalAccuracy: field(1),
                    verticalAccuracy: field(2), speed: field(3), speedAccuracy: field(4), course: field(5),
                    courseAccuracy: field(6)),
                values: values, extras: x)
        }
    }

    struct StoredRoute: Codable {
        /// The route's ordinal in the file: consecutive pieces with the same ordinal are one route.
        var i: Int
        var info: GPXPathInfo?
        var p: [StoredPoint]
    }

    struct Chunk: Codable {
        var w: [StoredPoint]?
        var r: [StoredRoute]?
    }

    /// The chunks to store, waypoints first: each the points it holds and its bytes.
    func chunks() throws -> [(count: Int, bytes: [UInt8])] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        var out: [(count: Int, bytes: [UInt8])] = []
        func add(_ c: Chunk, _ count: Int) throws {
            let bytes = Array(try encoder.encode(c))
            out.append((count: count, bytes: bytes))
        }
        var start = 0
        while start < waypoints.count {
            let end = min(start + Self.pointsPerChunk, waypoints.count)
            try add(Chunk(w: waypoints[start..<end].map(StoredPoint.init), r: nil), end - start)
            start = end
        }
        for (i, route) in routes.enumerated() {
            var s = 0
            repeat {
                let e = min(s + Self.pointsPerChunk, route.points.count)
                let piece = StoredRoute(
                    i: i, info: s == 0 ? route.info : nil, p: route.points[s..<e].map(StoredPoint.init))
                try add(Chunk(w: nil, r: [piece]), e - s)
                s = e
            } while s < route.points.count
        }
        return out
    }

    /// Reads a workout's attachments back.
    package static func read(workout: UUID, from store: any RouteStore) async throws(RouteKitError) -> GPXAttachments {
        var result = GPXAttachments()
        let cursor = try await store.attachments(ofWorkout: workout)
        defer { cursor.close() }
        let decoder = JSONDecoder()
        var lastRoute = -1
        while let chunk = try await cursor.next() {
            let c: Chunk
            do { c = try decoder.decode(Chunk.self, from: Data(chunk.bytes)) } catch {
                throw RouteKitError(
                    .storage, "workout \(workout) has an unreadable attachment (chunk \(chunk.sequence))")
            }
            result.waypoints += (c.w ?? []).map(\.point)
            for r in c.r ?? [] {
                if r.i != lastRoute || result.routes.isEmpty {
                    result.routes.append((r.info ?? GPXPathInfo(), []))
                    lastRoute = r.i
                }
                result.routes[result.routes.count - 1].points += r.p.map(\.point)
            }
        }
        return result
    }
}
