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

/// What a picture's profiles are drawn against: the distance along the recording (km) or the time from its start
/// (h:mm; `routekit render --x-axis time`).
package enum ProfileAxis: String, Sendable, CaseIterable {
    case distance, time
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
        scene(input, size: size, xAxis: .distance, basemap: nil)
    }

    /// Where each part of the picture goes.
    struct Layout {
        var title: String
        var top: Double
        var profiles: [Profile]
        var mapFrame: Frame
        var profileHeight: Double
        var axisHeight: Double
        var zoneBar: Double
        var captionHeight: Double
        /// What the profiles are drawn against (distance when `.time` was asked for a recording without times).
        var xAxis: ProfileAxis
        /// Metres or seconds at the profiles' right end.
        var xLength: Double
    }

    static let margin = 16.0

    /// The layout of `input`'s picture at `size`: the title, the profiles that have data (dropped, last first, when
    /// the map would be too small), the map's frame.
    static func layout(_ input: RoutePictureInput, size: PictureSize, xAxis wanted: ProfileAxis) -> Layout {
        let h = Double(size.height)
        let w = Double(size.width)
        var top = margin
        if !input.title.isEmpty { top += 24 }
        // The profiles that have data, bottom up: from the recording as imported when there is one (as the
        // workout's statistics are), since smoothing and simplification are for the map.
        let track = input.raw ?? input.current
        let start = track.time.first ?? .nan
        let duration = (track.time.last ?? .nan) - start
        let xAxis: ProfileAxis = wanted == .time && track.hasTimes && duration > 0 ? .time : .distance
        let xLength = xAxis == .time ? duration : track.length
        func x(_ i: Int) -> Double { xAxis == .time ? track.time[i] - start : track.distance[i] }
        var profiles: [Profile] = []
        if track.hasAltitude {
            profiles.append(
                Profile(label: "Elevation", unit: "m", points: (0..<track.count).map { (x($0), track.altitude[$0]) }))
        }
        if track.hasTimes {
            let speeds = track.speed
            if speeds.contains(where: { !$0.isNaN }) {
                profiles.append(
                    Profile(label: "Speed", unit: "km/h", points: (0..<track.count).map { (x($0), speeds[$0] * 3.6) }))
            }
            func placed(_ samples: [QuantitySample]) -> [(Double, Double)] {
                timedSeries(samples, on: track).map { (xAxis == .time ? $0.seconds : $0.distance, $0.value) }
            }
            let hr = placed(input.heartRate)
            if !hr.isEmpty {
                profiles.append(Profile(label: "Heart rate", unit: "bpm", points: hr, zones: input.zones))
            }
            let power = placed(input.power)
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
        return Layout(
            title: input.title, top: top, profiles: profiles, mapFrame: mapFrame, profileHeight: profileHeight,
            axisHeight: axisHeight, zoneBar: zoneBar, captionHeight: captionHeight, xAxis: xAxis, xLength: xLength)
    }

    /// The basemap's view for `input`'s picture at `size`: the map's frame at the highest zoom of `zoomLevels` at
    /// which the route (and its raw version) fits; `nil` for a route without locations.
    package static func basemapView(
        _ input: RoutePictureInput, size: PictureSize, zoomLevels: ClosedRange<Int>
    ) -> BasemapView? {
        guard let box = bounds(input) else { return nil }
        let frame = layout(input, size: size, xAxis: .distance).mapFrame
        return BasemapView.fitting(
            minLatitude: box.minLat, maxLatitude: box.maxLat, minLongitude: box.minLon, maxLongitude: box.maxLon,
            width: frame.width, height: frame.height, padding: 24, zoomLevels: zoomLevels)
    }

    /// The box of the current route and its raw version, or `nil` when they have no locations.
    static func bounds(
        _ input: RoutePictureInput
    ) -> (minLat: Double, maxLat: Double, minLon: Double, maxLon: Double)? {
        var minLat = Double.infinity, maxLat = -Double.infinity
        var minLon = Double.infinity, maxLon = -Double.infinity
        for t in [input.current] + (input.raw.map { [$0] } ?? []) {
            for i in 0..<t.count {
                minLat = min(minLat, t.latitude[i])
                maxLat = max(maxLat, t.latitude[i])
                minLon = min(minLon, t.longitude[i])
                maxLon = max(maxLon, t.longitude[i])
            }
        }
        guard minLat <= maxLat else { return nil }
        return (minLat, maxLat, minLon, maxLon)
    }

    /// The picture's scene, its profiles against `xAxis` (distance when the recording has no times), the map over
    /// `basemap` when one is given (``basemapView(_:size:zoomLevels:)``'s view, with its tiles): Web Mercator at
    /// the basemap's zoom, its attribution in the map's corner.
    package static func scene(
        _ input: RoutePictureInput, size: PictureSize, xAxis: ProfileAxis, basemap: Basemap?
    ) -> Scene {
        var scene = Scene(width: size.width, height: size.height)
        let w = Double(size.width)
        let layout = Self.layout(input, size: size, xAxis: xAxis)
        if !input.title.isEmpty {
            scene.add(
                .text(input.title, at: Point(margin, margin + 14), size: 15, anchor: .start, color: ink, bold: true))
        }
        let mapFrame = layout.mapFrame
        drawMap(input, in: mapFrame, basemap: basemap, into: &scene)
        var y = mapFrame.y + mapFrame.height + 15
        let caption: String
        if let p = input.processing {
            caption = p.caption
        } else {
            caption =
                grouped(input.current.count) + " points · " + String(format: "%.2f km", input.current.length / 1000)
        }
        scene.add(.text(caption, at: Point(margin, y), size: 12, anchor: .start, color: faint, bold: false))
        y += layout.captionHeight - 10
        for (i, profile) in layout.profiles.enumerated() {
            let frame = Frame(x: margin + 44, y: y + 8, width: w - 2 * margin - 44, height: layout.profileHeight)
            drawProfile(
                profile, in: frame, length: layout.xLength, xAxis: layout.xAxis,
                axis: i == layout.profiles.count - 1, into: &scene)
            y += layout.profileHeight + 8
        }
        y += layout.axisHeight
        if layout.zoneBar > 0, let times = input.zoneTimes {
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

    static func drawMap(_ input: RoutePictureInput, in frame: Frame, basemap: Basemap?, into scene: inout Scene) {
        let track = input.current
        scene.add(
            .rect(
                x: frame.x, y: frame.y, width: frame.width, height: frame.height,
                style: Style(fill: RGBA(246, 248, 250), stroke: grid)))
        guard track.count > 0, let box = bounds(input) else {
            scene.add(
                .text(
                    "no locations", at: Point(frame.x + frame.width / 2, frame.y + frame.height / 2), size: 14,
                    anchor: .middle, color: faint, bold: false))
            return
        }
        // Pixels a metre spans on the map (at the route's middle latitude, for a basemap's Web Mercator).
        let scale: Double
        let pixel: (Double, Double) -> Point
        if let basemap {
            let view = basemap.view
            let clip = Rect(x: frame.x, y: frame.y, width: frame.width, height: frame.height)
            for tile in basemap.tiles {
                scene.add(
                    .image(
                        png: tile.image.bytes,
                        frame: Rect(
                            x: frame.x + tile.x, y: frame.y + tile.y, width: WebMercator.tileSize,
                            height: WebMercator.tileSize), clip: clip))
            }
            scale = 1 / WebMercator.metresPerPixel(latitude: (box.minLat + box.maxLat) / 2, zoom: view.zoom)
            pixel = { lat, lon in
                let p = view.pixel(latitude: lat, longitude: lon)
                return Point(frame.x + p.x, frame.y + p.y)
            }
        } else {
            let projection = LocalProjection(
                latitude: (box.minLat + box.maxLat) / 2, longitude: (box.minLon + box.maxLon) / 2)
            let a = projection.project(latitude: box.minLat, longitude: box.minLon)
            let b = projection.project(latitude: box.maxLat, longitude: box.maxLon)
            let spanX = max(b.x - a.x, 1)
            let spanY = max(b.y - a.y, 1)
            let pad = 24.0
            let fitted = min((frame.width - 2 * pad) / spanX, (frame.height - 2 * pad) / spanY)
            let cx = frame.x + frame.width / 2
            let cy = frame.y + frame.height / 2
            let midX = (a.x + b.x) / 2
            let midY = (a.y + b.y) / 2
            scale = fitted
            pixel = { lat, lon in
                let p = projection.project(latitude: lat, longitude: lon)
                return Point(cx + (p.x - midX) * fitted, cy - (p.y - midY) * fitted)
            }
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
        if basemap != nil {
            scene.add(
                .rect(
                    x: bx - 6, y: by - 20, width: barLength + 12, height: 26,
                    style: Style(fill: RGBA(255, 255, 255, alpha: 0.75))))
        }
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
        // The basemap's attribution, bottom right, on a pale band (its terms ask for it to be legible).
        if let basemap, !basemap.attribution.isEmpty {
            let size = 10.0
            let width = min(frame.width - 8, Double(basemap.attribution.count) * size * 0.56 + 8)
            scene.add(
                .rect(
                    x: frame.maxX - width, y: frame.maxY - size - 6, width: width, height: size + 6,
                    style: Style(fill: RGBA(255, 255, 255, alpha: 0.8))))
            scene.add(
                .text(
                    basemap.attribution, at: Point(frame.maxX - 4, frame.maxY - 4), size: size, anchor: .end,
                    color: ink, bold: false))
        }
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

    /// A profile in `frame`: its values against distance or time (`length` metres or seconds at the right end),
    /// with a y axis of round ticks and grid lines in the profile's unit; with `axis`, the x axis's ticks under it
    /// (km, or h:mm).
    static func drawProfile(
        _ profile: Profile, in frame: Frame, length: Double, xAxis: ProfileAxis, axis: Bool, into scene: inout Scene
    ) {
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
        // The y axis: round values (1, 2 or 5 times a power of ten apart), a grid line and a label at each.
        let tickCount = max(2.0, (frame.height / 36).rounded(.down))
        let step = niceStep((hi - lo) / tickCount, minimum: 1e-9)
        var tick = (lo / step).rounded(.up) * step
        var ticks = 0
        while tick <= hi + step * 1e-9 && ticks < 12 {
            let ty = y(tick)
            if ty > frame.y + 2 && ty < frame.maxY - 1 {
                scene.add(
                    .path(
                        [Point(frame.x, ty), Point(frame.maxX, ty)], closed: false,
                        style: Style(stroke: grid.opacity(0.7), lineWidth: 0.75)))
            }
            scene.add(
                .path([Point(frame.x - 4, ty), Point(frame.x, ty)], closed: false, style: Style(stroke: faint)))
            scene.add(
                .text(
                    formatTick(tick, step: step), at: Point(frame.x - 6, ty + 3.5), size: 10, anchor: .end,
                    color: faint, bold: false))
            tick += step
            ticks += 1
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
        guard axis else { return }
        let xStep: Double
        switch xAxis {
        case .distance: xStep = niceStep(length / 8, minimum: 100)
        case .time: xStep = timeStep(length)
        }
        var d = 0.0
        while d <= length {
            let px = x(d)
            scene.add(
                .path([Point(px, frame.maxY), Point(px, frame.maxY + 4)], closed: false, style: Style(stroke: faint)))
            let label: String
            switch xAxis {
            case .distance: label = xStep >= 1_000 ? formatNumber(d / 1_000) : String(format: "%.1f", d / 1_000)
            case .time: label = clock(d)
            }
            scene.add(
                .text(label, at: Point(px, frame.maxY + 15), size: 10, anchor: .middle, color: faint, bold: false))
            d += xStep
        }
        scene.add(
            .text(
                xAxis == .time ? "h:mm" : "km", at: Point(frame.x - 6, frame.maxY + 15), size: 10, anchor: .end,
                color: faint, bold: true))
    }

    /// A y tick's label: whole numbers, or as many decimals as the step needs.
    static func formatTick(_ v: Double, step: Double) -> String {
        guard abs(v) < 1e15 else { return String(format: "%.3g", v) }
        if step >= 1 { return String(Int(v.rounded())) }
        let decimals = min(3, Int((-log10(step)).rounded(.up)))
        return String(format: "%.\(decimals)f", v)
    }

    /// Seconds between time ticks: a round number of minutes or hours giving at most about eight.
    static func timeStep(_ seconds: Double) -> Double {
        let steps: [Double] = [60, 120, 300, 600, 900, 1_200, 1_800, 3_600, 7_200, 10_800, 21_600, 43_200]
        return steps.first { seconds / $0 <= 8 } ?? 86_400
    }

    /// `h:mm` of a number of seconds.
    static func clock(_ seconds: Double) -> String {
        let minutes = Int((seconds / 60).rounded())
        return "\(minutes / 60):" + String(format: "%02d", minutes % 60)
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
