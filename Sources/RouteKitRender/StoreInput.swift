import Foundation
public import RouteKit
import RouteKitProcessing

extension RoutePictureInput {
    /// Everything a picture of a stored route shows, read from `store`: the route's locations (through the route
    /// query, batch by batch), for a processed version its raw recording and the processing's numbers, the
    /// workout's pauses, the source's privacy zones, heart rate and power, and the heart-rate zones with the time
    /// in each (from `maximumHeartRate`, else the observed maximum, as `routekit stats` does).
    ///
    /// - Parameters:
    ///   - store: the store to read.
    ///   - route: the route version to draw (a current one, usually).
    ///   - drawRaw: draw the raw recording of a processed route (faint under it; the profiles come from it).
    ///   - drawCurrent: draw `route` itself; with `raw` only, the raw recording is drawn alone.
    ///   - maximumHeartRate: the maximum heart rate the zones come from (else the observed maximum).
    public static func load(
        from store: any RouteStore, route: RouteSample, raw drawRaw: Bool = true, current drawCurrent: Bool = true,
        maximumHeartRate: Double? = nil
    ) async throws -> RoutePictureInput {
        guard let workout = try await store.workout(id: route.workoutID) else {
            throw RouteKitError(.notFound, "the workout of route \(route.id) is gone")
        }
        let processing = ProcessingNumbers(metadata: route.metadata)
        var raw: RouteSample?
        if processing != nil, drawRaw {
            let r = try await store.recording(of: route)
            if r.id != route.id { raw = r }
        }
        var main = route
        if !drawCurrent, let r = raw {
            main = r
            raw = nil
        }
        let pauses = workout.pauseIntervals
        // The recording (raw when drawn, else the route itself) gives the profiles and the time in zone.
        let recording = raw ?? main
        var accumulator = StatisticsAccumulator(
            options: StatisticsOptions(activity: workout.activityType), segmentStarts: recording.segmentStarts,
            pauses: pauses)
        func track(_ r: RouteSample) async throws -> RenderTrack {
            var t = RenderTrack(activity: workout.activityType)
            t.reserve(r.locationCount)
            let starts = Set(r.segmentStarts)
            for try await batch in store.locations(of: r.id, batchSize: 16_384) {
                t.append(batch.locations, segmentStarts: starts)
                if r.id == recording.id { accumulator.add(batch.locations) }
            }
            return t
        }
        var input = RoutePictureInput(current: try await track(main), title: title(workout, main))
        if let raw { input.raw = try await track(raw) }
        if main.id == route.id {
            input.processing = processing
            // The caption's lengths measured here, as the statistics measure (the raw recording's is the workout's
            // distance); the processing's own figures are kept when the raw recording is not drawn.
            if let raw = input.raw { input.processing?.lengthInMetres = raw.length }
            if input.processing != nil { input.processing?.lengthOutMetres = input.current.length }
        }
        input.pauses = pauses.map { seconds($0.lowerBound)...seconds($0.upperBound) }
        input.privacyZones = try await store.privacyZones(of: main.source)
        input.heartRate = try await store.allSamples(of: .heartRate, workout: workout.id)
        input.power = try await store.allSamples(of: .power, workout: workout.id)
        input.setZones(maximumHeartRate: maximumHeartRate, accumulator: &accumulator)
        return input
    }

    /// Heart-rate zones from `maximumHeartRate` (else the observed maximum, when above 60) and the time in each,
    /// over the moving time `accumulator` saw.
    package mutating func setZones(maximumHeartRate: Double?, accumulator: inout StatisticsAccumulator) {
        let maximum = maximumHeartRate ?? heartRate.map(\.value).max()
        guard let maximum, maximum > 60, let zones = try? Zones.heartRate(maximum: maximum) else { return }
        self.zones = zones
        zoneTimes =
            accumulator.finish(heartRate: heartRate, cadence: [], zones: zones, power: [], powerZones: nil).zones
    }

    static func seconds(_ i: Instant) -> Double { Double(i.seconds) + Double(i.nanoseconds) / 1e9 }

    /// `Cycling · 2025-06-14 12:03 · Lunch ride`.
    static func title(_ workout: Workout, _ route: RouteSample) -> String {
        var parts = [workout.activityType.rawValue.capitalized]
        if let start = workout.start ?? route.start {
            parts.append(String(start.iso8601.prefix(16)).replacingOccurrences(of: "T", with: " "))
        }
        if case .string(let name)? = route.metadata["gpxName"] ?? workout.metadata["name"], !name.isEmpty {
            parts.append(name)
        }
        return parts.joined(separator: " · ")
    }
}
