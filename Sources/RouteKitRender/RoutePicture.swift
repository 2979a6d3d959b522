import Foundation
public import RouteKit
public import RouteKitProcessing

/// What processing did to a route: the numbers `routekit smooth` keeps in a processed version's metadata.
package struct ProcessingNumbers: Sendable, Hashable {
    package var pointsIn: Int
    package var pointsOut: Int
    package var smoothingRmsMetres: Double?
    package var maxDeviationMetres: Double?
    package var lengthInMetres: Double?
    package var lengthOutMetres: Double?

    /// The numbers from a route version's metadata, or nil when it is not a processed version.
    package init?(metadata: [String: MetadataValue]) {
        func int(_ key: String) -> Int? {
            switch metadata[key] {
            case .integer(let v)?: return Int(exactly: v)
            // Metadata is anyone's (a builder's finish, an import): 1e300 is no count.
            case .double(let v)?: return v.isFinite && abs(v) < 1e15 ? Int(v) : nil
            default: return nil
            }
        }
        func double(_ key: String) -> Double? {
            switch metadata[key] {
            case .integer(let v)?: return Double(v)
            case .double(let v)?: return v
            default: return nil
            }
        }
        guard let pointsIn = int("pointsIn"), let pointsOut = int("pointsOut") else { return nil }
        self.pointsIn = pointsIn
        self.pointsOut = pointsOut
        smoothingRmsMetres = double("smoothingRmsMetres")
        maxDeviationMetres = double("maxDeviationMetres")
        lengthInMetres = double("lengthInMetres")
        lengthOutMetres = double("lengthOutMetres")
    }

    /// The caption line: `5,400 → 812 points · smoothing RMS 1.8 m · max deviation 4.9 m · 12.41 → 12.38 km`.
    package var caption: String {
        var parts = ["\(grouped(pointsIn)) → \(grouped(pointsOut)) points"]
        if let v = smoothingRmsMetres { parts.append("smoothing RMS " + String(format: "%.1f m", v)) }
        if let v = maxDeviationMetres { parts.append("max deviation " + String(format: "%.1f m", v)) }
        if let a = lengthInMetres, let b = lengthOutMetres {
            parts.append(String(format: "%.2f → %.2f km", a / 1000, b / 1000))
        }
        return parts.joined(separator: " · ")
    }
}

func grouped(_ n: Int) -> String {
    let digits = String(n.magnitude)
    var out = ""
    for (i, c) in digits.enumerated() {
        if i > 0 && (digits.count - i) % 3 == 0 { out += "," }
        out.append(c)
    }
    return n < 0 ? "-" + out : out
}

/// Everything a route picture shows. Only `current` is required.
public struct RoutePictureInput: Sendable {
    /// The route drawn (the current version, or a file's track).
    public var current: RenderTrack
    /// The raw recording, drawn faint under `current` (a processed route's raw version). The profiles are drawn
    /// from it when it is given.
    public var raw: RenderTrack?
    /// The first line: activity, date, name.
    public var title: String
    /// Pause intervals in seconds since 1970 (the workout's pause and resume events); each gets a marker.
    public var pauses: [ClosedRange<Double>]
    /// Privacy zones shaded on the map.
    public var privacyZones: [PrivacyZone]
    /// Heart-rate samples (against distance, through the route's times).
    public var heartRate: [QuantitySample]
    /// Power samples.
    public var power: [QuantitySample]
    /// Heart-rate zones: bands behind the heart-rate profile.
    public var zones: Zones?
    /// Time in each heart-rate zone (`StatisticsAccumulator.timeInZones(_:zones:)`): the time-in-zone bar.
    public var zoneTimes: [ZoneTime]?
    /// What processing did, for the caption.
    package var processing: ProcessingNumbers?

    /// A picture of `current` and nothing else.
    public init(current: RenderTrack, title: String = "") {
        self.current = current
        self.title = title
        raw = nil
        pauses = []
        privacyZones = []
        heartRate = []
        power = []
        zones = nil
        zoneTimes = nil
        processing = nil
    }
}

/// Lays a route out as a picture: a map (local projection, scale bar, north arrow, start/end/pause and distance
/// markers, privacy zones, the raw version faint under the current one, a caption with the processing's numbers),
/// then profiles against distance (elevation, speed, heart rate over its zone bands, power) and a time-in-zone bar.
/// Every line is reduced to what its pixels can show, so a million-point route draws a few thousand vertices.
public enum RoutePicture {
    static let ink = RGBA(36, 41, 47)
    static let faint = RGBA(101, 109, 118)
    static let grid = RGBA(208, 215, 222)
    static let routeColor = RGBA(9, 105, 218)
    static let rawColor = RGBA(140, 149, 159)
    static let startColor = RGBA(26, 127, 55)
    static let endColor = RGBA(207, 34, 46)
    static let pauseColor = RGBA(191, 135, 0)
    static let zoneColors = [
        RGBA(84, 174, 255), RGBA(46, 160, 67), RGBA(212, 167, 44), RGBA(251, 143, 68), RGBA(248, 81, 73),
        RGBA(191, 57, 137), RGBA(130, 80, 223), RGBA(110, 119, 129), RGBA(36, 41, 47),
    ]

    /// The picture's scene.
    public static func scene(_ input: RoutePictureInput, size: PictureSize) -> Scene {
        var scene = Scene(width: size.width, height: size.height)
        let w = Double(size.width)
        let h = Double(size.height)
        let margin = 16.0
        var top = margin
        if !input.title.isEmpty {
            scene.add(.text(input.title, at: Point(margin, top + 14), size: 15, anchor: .start, color: ink, bold: true))
            top += 24
        }
        // The profiles that have data, bottom up: from the recording as imported when there is one (as the
        // workout's statistics are), since smoothing and simplification are for the map.
        let track = input.raw ?? input.current
        var profiles: [Profile] = []
        if track.hasAltitude {
            profiles.append(
                Profile(label: "Elevation", unit: "m", points: zip(track.distance, track.altitude).map { ($0, $1) }))
        }
        if track.hasTimes {
            let speeds = track.speed
            if speeds.contains(where: { !$0.isNaN }) {
                profiles.append(
                    Profile(label: "Speed", unit: "km/h", points: zip(track.distance, speeds).map { ($0, $1 * 3.6) }))
            }
            let hr = series(input.heartRate, on: track)
            if !hr.isEmpty {
                profiles.append(Profile(label: "Heart rate", unit: "bpm", points: hr, zones: input.zones))
            }
            let power = series(input.power, on: track)
            if !power.isEmpty { profiles.append(Profile(label: "Power", unit: "W", points: power)) }
        }
        let zoneBar = (input.zoneTimes?.reduce(0) { $0 + $1.seconds } ?? 0) > 0 ? 34.0 : 0
        let profileHeight = min(140, max(56, h * 0.12))
        let axisHeight = profiles.isEmpty ? 0 : 22.0
        let captionHeight = 20.0
        var profilesHeight = Double(profiles.count) * (profileHeight + 8) + axisHeight + zoneBar
        // A small picture keeps the map: profiles go first.
        while !profiles.isEmpty && h - top - margin - captionHeight - profilesHeight < max(120, h * 0.4) {
            profiles.removeLast()
            profilesHeight =
                Double(profiles.count) * (profileHeight + 8) + (profiles.isEmpty ? 0 : axisHeight) + zoneBar
        }
        let mapFrame = Frame(
            x: margin, y: top, width: w - 2 * margin, height: max(40, h - top - margin - captionHeight - profilesHeight)
        )
        drawMap(input, in: mapFrame, into: &scene)
        var y = mapFrame.y + mapFrame.height + 15
        let caption: String
        if let p = input.processing {
            caption = p.caption
        } else {
            caption =
                grouped(input.current.count) + " points · " + String(format: "%.2f km", input.current.length / 1000)
        }
        scene.add(.text(caption, at: Point(margin, y), size: 12, anchor: .start, color: faint, bold: false))
        y += captionHeight - 10
        for (i, profile) in profiles.enumerated() {
            let frame = Frame(x: margin + 44, y: y + 8, width: w - 2 * margin - 44, height: profileHeight)
            drawProfile(profile, in: frame, length: track.length, axis: i == profiles.count - 1, into: &scene)
            y += profileHeight + 8
        }
        y += axisHeight
        if zoneBar > 0, let times = input.zoneTimes {
            drawZoneBar(
                times, in: Frame(x: margin + 44, y: y + 6, width: w - 2 * margin - 44, height: 16), into: &scene)
        }
        return scene
    }

    struct Frame {
        var x, y, width, height: Double
        var maxX: Double { x + width }
        var maxY: Double { y + height }
    }

    struct Profile {
        var label: String
        var unit: String
        var points: [(Double, Double)]
        var zones: Zones? = nil
    }

    /// Samples placed along the route by time: (distance, value), in time order.
    package static func series(_ samples: [QuantitySample], on track: RenderTrack) -> [(Double, Double)] {
        timedSeries(samples, on: track).map { ($0.distance, $0.value) }
    }

    /// Samples placed along the route by time: the distance along it, the seconds from its first location, and the
    /// value, in time order.
    package static func timedSeries(
        _ samples: [QuantitySample], on track: RenderTrack
    ) -> [(distance: Double, seconds: Double, value: Double)] {
        var out: [(distance: Double, seconds: Double, value: Double)] = []
        guard let start = track.time.first else { return out }
        for s in samples where s.value > 0 && s.value.isFinite {
            let t = Double(s.timestamp.instant.seconds) + Double(s.timestamp.instant.nanoseconds) / 1e9
            if let d = track.distance(at: t) { out.append((d, t - start, s.value)) }
        }
        return out
    }

    // MARK: The map

    static func drawMap(_ input: RoutePictureInput, in frame: Frame, into scene: inout Scene) {
        let track = input.current
        scene.add(
            .rect(
                x: frame.x, y: frame.y, width: frame.width, height: frame.height,
                style: Style(fill: RGBA(246, 248, 250), stroke: grid)))
        guard track.count > 0 else {
            scene.add(
                .text(
                    "no locations", at: Point(frame.x + frame.width / 2, frame.y + frame.height / 2), size: 14,
                    anchor: .middle, color: faint, bold: false))
            return
        }
        var minLat = Double.infinity, maxLat = -Double.infinity
        var minLon = Double.infinity, maxLon = -Double.infinity
        for t in [track] + (input.raw.map { [$0] } ?? []) {
            for i in 0..<t.count {
                minLat = min(minLat, t.latitude[i])
                maxLat = max(maxLat, t.latitude[i])
                minLon = min(minLon, t.longitude[i])
                maxLon = max(maxLon, t.longitude[i])
            }
        }
        let projection = LocalProjection(latitude: (minLat + maxLat) / 2, longitude: (minLon + maxLon) / 2)
        let a = projection.project(latitude: minLat, longitude: minLon)
        let b = projection.project(latitude: maxLat, longitude: maxLon)
        let spanX = max(b.x - a.x, 1)
        let spanY = max(b.y - a.y, 1)
        let pad = 24.0
        let scale = min((frame.width - 2 * pad) / spanX, (frame.height - 2 * pad) / spanY)
        let cx = frame.x + frame.width / 2
        let cy = frame.y + frame.height / 2
        let midX = (a.x + b.x) / 2
        let midY = (a.y + b.y) / 2
        func pixel(_ lat: Double, _ lon: Double) -> Point {
            let p = projection.project(latitude: lat, longitude: lon)
            return Point(cx + (p.x - midX) * scale, cy - (p.y - midY) * scale)
        }
        // Privacy zones under everything.
        for zone in input.privacyZones {
            let c = pixel(zone.latitude, zone.longitude)
            let r = zone.radiusMetres * scale
            guard c.x + r > frame.x, c.x - r < frame.maxX, c.y + r > frame.y, c.y - r < frame.maxY else { continue }
            scene.add(
                .circle(
                    center: c, radius: r,
                    style: Style(
                        fill: RGBA(110, 119, 129, alpha: 0.18), stroke: RGBA(110, 119, 129, alpha: 0.7), lineWidth: 1,
                        dash: [4, 3])))
        }
        func paths(_ t: RenderTrack) -> [[Point]] {
            var starts = [0] + t.segmentStarts
            starts.append(t.count)
            var out: [[Point]] = []
            for k in 0..<(starts.count - 1) where starts[k] < starts[k + 1] {
                var points: [Point] = []
                points.reserveCapacity(starts[k + 1] - starts[k])
                for i in starts[k]..<starts[k + 1] { points.append(pixel(t.latitude[i], t.longitude[i])) }
                out.append(Decimation.mapPath(points))
            }
            return out
        }
        if let raw = input.raw {
            for p in paths(raw) {
                scene.add(.path(p, closed: false, style: Style(stroke: rawColor.opacity(0.75), lineWidth: 1.5)))
            }
        }
        for p in paths(track) {
            scene.add(.path(p, closed: false, style: Style(stroke: routeColor, lineWidth: 2.5)))
        }
        // Distance markers: every 1, 2, 5, 10… km, at most about 12.
        let length = track.length
        if length >= 1_000 {
            let step = niceStep(length / 12, minimum: 1_000)
            var next = step
            var i = 0
            while next < length - step / 4 {
                while i + 1 < track.count && track.distance[i + 1] < next { i += 1 }
                let p = pixel(track.latitude[i], track.longitude[i])
                let label = step >= 1_000 ? String(Int((next / 1_000).rounded())) : String(format: "%.1f", next / 1000)
                let radius = max(7, Double(label.count) * 2.6 + 2.5)
                scene.add(
                    .circle(
                        center: p, radius: radius, style: Style(fill: RGBA(255, 255, 255), stroke: ink, lineWidth: 1)))
                scene.add(.text(label, at: Point(p.x, p.y + 3), size: 8, anchor: .middle, color: ink, bold: true))
                next += step
            }
        }
        // Pauses: workout events, and segment breaks.
        var pauseIndices = track.segmentStarts.map { max(0, $0 - 1) }
        for pause in input.pauses {
            if let i = track.index(atOrBefore: pause.lowerBound) { pauseIndices.append(i) }
        }
        for i in Set(pauseIndices).sorted() {
            let p = pixel(track.latitude[i], track.longitude[i])
            scene.add(
                .rect(
                    x: p.x - 4, y: p.y - 4, width: 8, height: 8,
                    style: Style(fill: pauseColor, stroke: RGBA(255, 255, 255), lineWidth: 1)))
        }
        let start = pixel(track.latitude[0], track.longitude[0])
        let end = pixel(track.latitude[track.count - 1], track.longitude[track.count - 1])
        scene.add(
            .circle(center: end, radius: 6, style: Style(fill: endColor, stroke: RGBA(255, 255, 255), lineWidth: 2)))
        scene.add(
            .circle(center: start, radius: 6, style: Style(fill: startColor, stroke: RGBA(255, 255, 255), lineWidth: 2))
        )
        // Scale bar, bottom left: a round length about a quarter of the map's width.
        let metres = niceStep(frame.width / 4 / scale, minimum: 1)
        let barLength = metres * scale
        let bx = frame.x + 12
        let by = frame.maxY - 14
        scene.add(
            .path(
                [Point(bx, by - 5), Point(bx, by), Point(bx + barLength, by), Point(bx + barLength, by - 5)],
                closed: false, style: Style(stroke: ink, lineWidth: 1.5)))
        let label = metres >= 1_000 ? "\(formatNumber(metres / 1_000)) km" : "\(formatNumber(metres)) m"
        scene.add(
            .text(label, at: Point(bx + barLength / 2, by - 7), size: 11, anchor: .middle, color: ink, bold: false))
        // North arrow, top right (the projection keeps north up).
        let nx = frame.maxX - 20
        let ny = frame.y + 14
        scene.add(
            .path(
                [Point(nx, ny), Point(nx + 7, ny + 20), Point(nx, ny + 15), Point(nx - 7, ny + 20)], closed: true,
                style: Style(fill: ink)))
        scene.add(.text("N", at: Point(nx, ny + 34), size: 11, anchor: .middle, color: ink, bold: true))
    }

    /// A round number (1, 2 or 5 times a power of ten) at most `target`, and at least `minimum`.
    static func niceStep(_ target: Double, minimum: Double) -> Double {
        guard target.isFinite, target > minimum else { return minimum }
        let power = pow(10, (log10(target)).rounded(.down))
        for m in [5.0, 2, 1] where m * power <= target { return m * power }
        return power
    }

    static func formatNumber(_ v: Double) -> String {
        // An elevation of 1e300 in a file is finite, and past Int's range.
        guard abs(v) < 1e15 else { return String(format: "%.3g", v) }
        return v == v.rounded() ? String(Int(v)) : String(format: "%.1f", v)
    }

    // MARK: Profiles

    static func drawProfile(_ profile: Profile, in frame: Frame, length: Double, axis: Bool, into scene: inout Scene) {
        let values = profile.points.map(\.1).filter(\.isFinite)
        guard var lo = values.min(), var hi = values.max(), length > 0 else { return }
        if hi - lo < 1 {
            lo -= 1
            hi += 1
        }
        let padY = (hi - lo) * 0.08
        lo -= padY
        hi += padY
        if profile.unit != "m" { lo = max(0, lo) }
        func y(_ v: Double) -> Double { frame.maxY - (v - lo) / (hi - lo) * frame.height }
        func x(_ d: Double) -> Double { frame.x + d / length * frame.width }
        scene.add(.rect(x: frame.x, y: frame.y, width: frame.width, height: frame.height, style: Style(stroke: grid)))
        if let zones = profile.zones {
            for (i, lower) in zones.lowerBounds.enumerated() {
                let upper = i + 1 < zones.lowerBounds.count ? zones.lowerBounds[i + 1] : hi
                let a = max(lower, lo)
                let b = min(upper, hi)
                guard b > a else { continue }
                scene.add(
                    .rect(
                        x: frame.x, y: y(b), width: frame.width, height: y(a) - y(b),
                        style: Style(fill: zoneColors[i % zoneColors.count].opacity(0.14))))
            }
        }
        let points = profile.points.map { Point(x($0.0), $0.1.isFinite ? y($0.1) : .nan) }
        for path in Decimation.profilePaths(points) {
            if profile.unit == "m" {
                // Elevation filled down to the axis.
                var area = path
                area.append(Point(path[path.count - 1].x, frame.maxY))
                area.append(Point(path[0].x, frame.maxY))
                scene.add(.path(area, closed: true, style: Style(fill: routeColor.opacity(0.12))))
            }
            scene.add(
                .path(
                    path, closed: false,
                    style: Style(stroke: profile.zones == nil ? routeColor : endColor, lineWidth: 1.25)))
        }
        scene.add(
            .text(
                "\(profile.label) (\(profile.unit))", at: Point(frame.x + 4, frame.y + 12), size: 11, anchor: .start,
                color: ink, bold: true))
        scene.add(
            .text(
                formatNumber((hi - padY).rounded()), at: Point(frame.x - 4, frame.y + 10), size: 10, anchor: .end,
                color: faint, bold: false))
        scene.add(
            .text(
                formatNumber((lo + padY).rounded()), at: Point(frame.x - 4, frame.maxY), size: 10, anchor: .end,
                color: faint, bold: false))
        guard axis else { return }
        let step = niceStep(length / 8, minimum: 100)
        var d = 0.0
        while d <= length {
            let px = x(d)
            scene.add(
                .path([Point(px, frame.maxY), Point(px, frame.maxY + 4)], closed: false, style: Style(stroke: faint)))
            let label = step >= 1_000 ? formatNumber(d / 1_000) : String(format: "%.1f", d / 1_000)
            scene.add(
                .text(label, at: Point(px, frame.maxY + 15), size: 10, anchor: .middle, color: faint, bold: false))
            d += step
        }
        scene.add(
            .text("km", at: Point(frame.maxX, frame.maxY + 15), size: 10, anchor: .end, color: faint, bold: false))
    }

    static func drawZoneBar(_ times: [ZoneTime], in frame: Frame, into scene: inout Scene) {
        let total = times.reduce(0) { $0 + $1.seconds }
        guard total > 0 else { return }
        scene.add(
            .text("Zones", at: Point(frame.x - 4, frame.y + 12), size: 10, anchor: .end, color: faint, bold: false))
        var x = frame.x
        for t in times {
            let width = t.seconds / total * frame.width
            guard width > 0 else { continue }
            let color = zoneColors[(t.zone - 1 + zoneColors.count) % zoneColors.count]
            scene.add(.rect(x: x, y: frame.y, width: width, height: frame.height, style: Style(fill: color)))
            if width > 70 {
                let m = Int(t.seconds.rounded()) / 60
                let label = "Z\(t.zone) \(m / 60):" + String(format: "%02d", m % 60)
                scene.add(
                    .text(
                        label, at: Point(x + width / 2, frame.y + 12), size: 10, anchor: .middle,
                        color: RGBA(255, 255, 255), bold: true))
            }
            x += width
        }
    }
}
