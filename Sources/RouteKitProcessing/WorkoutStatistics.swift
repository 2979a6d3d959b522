import Foundation
import RouteKit

/// What to compute a workout's statistics with: zones and the activity's thresholds. Every field is optional; the
/// defaults are those `routekit stats` documents.
package struct WorkoutStatisticsRequest: Sendable, Hashable {
    /// Maximum heart rate for five default zones.
    package var maximumHeartRate: Double?
    /// Age, for five default zones from a maximum heart rate of 208 − 0.7 × age (when no maximum is given).
    package var age: Double?
    /// Explicit heart-rate zones (over the maximum and age).
    package var zones: Zones?
    /// Functional threshold power, for seven power zones (else estimated from the power series).
    package var ftp: Double?
    /// Explicit power zones (over the FTP).
    package var powerZones: Zones?
    /// Slower than this (m/s) for longer than the grace period is not moving.
    package var minimumSpeed: Double?
    /// Seconds a slow stretch may last and still count as moving.
    package var grace: Double?
    /// Elevation changes within this band are noise (metres).
    package var elevationHysteresis: Double?

    /// The defaults.
    package init() {}
}

extension Zones {
    /// Zones from their lower bounds written as numbers separated by commas (`0,120,140,160,175`).
    /// - Parameters:
    ///   - text: the lower bounds (`0,120,140,160,175`).
    ///   - name: how the text is called in an error (`--zones`, `'zones'`).
    package init(parsing text: String, name: String) throws(RouteKitError) {
        let bounds = text.split(separator: ",").map { Double($0.trimmingCharacters(in: .whitespaces)) }
        guard !bounds.isEmpty, bounds.allSatisfy({ $0 != nil }) else {
            throw RouteKitError(.invalidArgument, "\(name) takes numbers separated by commas, not '\(text)'")
        }
        try self.init(lowerBounds: bounds.compactMap { $0 })
    }
}

/// A workout's statistics with what they were computed from: what `routekit stats` prints and the HTTP service's
/// `GET /v1/workouts/ID/stats` serves. Their JSON shape (`routekit stats --json` and that endpoint's body) is
/// RouteKitApplication's `WorkoutStatisticsJSON`, where every door's wire shapes are defined.
package struct WorkoutStatisticsReport: Sendable {
    /// The workout.
    package var workout: Workout
    /// The route version the numbers come from (the workout's raw recording, or the route asked for), if any; `nil`
    /// for a reader that may not read routes (an API token without `read:routes`).
    package var route: RouteSample?
    /// The numbers.
    package var statistics: RouteStatistics
    /// The FTP the power zones used (given, or estimated), if any.
    package var ftp: Double?
    /// The heart-rate zones used, with where they came from; `nil` without heart-rate zones (or when the caller's
    /// explicit zones are outside what a configuration may hold).
    package var zoneConfiguration: ZoneConfiguration?
    /// The power zones used, with where they came from.
    package var powerZoneConfiguration: ZoneConfiguration?
}

/// A workout's (or one route version's) statistics, read from a store: the rules of `routekit stats` as a library
/// call, so that the command line and the HTTP service give the same numbers.
package enum WorkoutStatistics {
    /// The statistics of a route version, or of a workout: its current route's raw version (the recording as
    /// imported), so that smoothing, simplification and privacy zones never change a workout's numbers.
    ///
    /// - Parameters:
    ///   - store: the store to read.
    ///   - id: a route's or a workout's uuid.
    ///   - request: the heart-rate and power zones to use (a maximum heart rate, an age, zones, an FTP).
    /// - Throws: `RouteKitError.Code.notFound` when it is neither.
    package static func compute(
        store: any RouteStore, id: UUID, request: WorkoutStatisticsRequest = WorkoutStatisticsRequest()
    ) async throws -> WorkoutStatisticsReport {
        // Measuring a long recording is CPU work: on the blocking executor, never on a cooperative thread.
        try await BlockingExecutor.shared.withPreference { () async throws -> WorkoutStatisticsReport in
            try await computeHere(store: store, id: id, request: request)
        }
    }

    /// The workout `id` names (a route's or a workout's uuid) and the route version to measure: the route asked
    /// for, or the workout's current route's recording.
    static func recording(store: any RouteStore, id: UUID) async throws -> (Workout, RouteSample?) {
        if let r = try await store.route(id: id) {
            guard let w = try await store.workout(id: r.workoutID) else {
                throw RouteKitError(.notFound, "the workout of route \(id) is gone")
            }
            return (w, r)
        } else if let w = try await store.workout(id: id) {
            // The recording as imported: processed versions (smoothed, simplified, privacy-trimmed) are for
            // display and must not change the workout's numbers.
            if let current = try await store.routes(matching: RouteFilter(workout: id)).first {
                return (w, try await store.recording(of: current))
            }
            return (w, nil)
        }
        throw RouteKitError(.notFound, "no route or workout \(id)")
    }

    private static func computeHere(
        store: any RouteStore, id: UUID, request: WorkoutStatisticsRequest
    ) async throws -> WorkoutStatisticsReport {
        let (workout, route) = try await recording(store: store, id: id)
        let options = statisticsOptions(workout, request)
        var accumulator = try await measure(route, of: workout, in: store, options: options)
        // Values ≤ 0 (no sensor) are left out by the accumulator; they never make the observed maximum.
        let heartRate = try await store.allSamples(of: .heartRate, workout: workout.id)
        let cadence = try await store.allSamples(of: .cadence, workout: workout.id)
        // Zones: the caller's, else those saved with the workout over the person's (their own, or from what is known
        // about them), else the workout's own maximum.
        let settings = try await ZonePreference.settings(of: workout, in: store)
        var zones: Zones?
        var zoneConfiguration: ZoneConfiguration?
        if let z = request.zones {
            zones = z
            zoneConfiguration = ZonePreference.supplied(z, .heartRate)
        } else if let maximum = request.maximumHeartRate ?? request.age.map(Zones.maximumHeartRate(age:)) {
            let z = try Zones.heartRate(maximum: maximum)
            zones = z
            let basis =
                request.maximumHeartRate == nil
                ? "age \(ZonePreference.format(request.age ?? 0)): maximum heart rate \(ZonePreference.format(maximum)) bpm"
                : "maximum heart rate \(ZonePreference.format(maximum)) bpm"
            zoneConfiguration = ZonePreference.supplied(z, .heartRate, basis: basis)
        } else if let preferred = ZonePreference.heartRate(settings) {
            zones = try Zones(preferred)
            zoneConfiguration = preferred
        } else if let observed = heartRate.map(\.value).max(), observed > 60 {
            zones = try Zones.heartRate(maximum: observed)
            zoneConfiguration = ZonePreference.fromWorkout(maximum: observed)
        }
        // A reader that may not read heart rate (an API token without `read:heartRate`: its store reads no such
        // series) gets no heart-rate zones either, even from its settings or the request: they would be zones of
        // nothing, and say what the person's heart rate is.
        let grant = store.readGrant
        if !grant.mayRead(quantity: .heartRate) {
            zones = nil
            zoneConfiguration = nil
        }
        let power = try await store.allSamples(of: .power, workout: workout.id)
        var usedFTP: Double?
        var powerZones: Zones?
        var powerConfiguration: ZoneConfiguration?
        if let z = request.powerZones {
            powerZones = z
            powerConfiguration = ZonePreference.supplied(z, .power)
        } else if !power.isEmpty {
            if let ftp = request.ftp {
                usedFTP = ftp
                let z = try Zones.power(ftp: ftp)
                powerZones = z
                powerConfiguration = ZonePreference.supplied(z, .power, basis: "FTP \(ZonePreference.format(ftp)) W")
            } else if let preferred = ZonePreference.power(settings) {
                usedFTP = preferred.origin == .system ? settings.ftp : nil
                powerZones = try Zones(preferred)
                powerConfiguration = preferred
            } else if let value = Zones.estimatedFTP(power, maxGap: options.maxSampleGap) {
                usedFTP = value
                powerZones = try Zones.power(ftp: max(20, value))
                powerConfiguration = ZonePreference.coggan(
                    ftp: max(20, value),
                    basis: "FTP estimated from the workout (95 % of its best 20-minute power, "
                        + "\(ZonePreference.format(value.rounded())) W): nothing else is known; set an FTP or zones "
                        + "with routekit zones set")
            }
        }
        if !grant.mayRead(quantity: .power) {
            usedFTP = nil
            powerZones = nil
            powerConfiguration = nil
        }
        if route == nil, let span = seriesSpan(workout, [heartRate, cadence, power], maxGap: options.maxSampleGap) {
            // An indoor workout: its series count over its time, less its pauses.
            accumulator.weighSeriesWithoutFixes(over: span)
        }
        let statistics = accumulator.finish(
            heartRate: heartRate, cadence: cadence, zones: zones, power: power, powerZones: powerZones)
        // The numbers are the workout's; which route they come from is for a reader of routes.
        return WorkoutStatisticsReport(
            workout: workout, route: grant.mayRead(.routes) ? route : nil, statistics: statistics, ftp: usedFTP,
            zoneConfiguration: zoneConfiguration, powerZoneConfiguration: powerConfiguration)
    }

    /// The time a workout without a route was recorded over: its start to its end, else its series' first sample to
    /// the last one's hold (`maxGap`); `nil` without either.
    static func seriesSpan(_ workout: Workout, _ series: [[QuantitySample]], maxGap: Double) -> ClosedRange<Instant>? {
        if let s = workout.start?.instant, let e = workout.end?.instant, s < e { return s...e }
        let times = series.flatMap { [$0.first?.timestamp.instant, $0.last?.timestamp.instant] }.compactMap { $0 }
        guard let first = times.min(), let last = times.max() else { return nil }
        let end = Instant(seconds: last.seconds + Int64(maxGap), nanoseconds: last.nanoseconds)
        return first < end ? first...end : nil
    }

    /// The options `request` asks for, over the defaults of `workout`'s activity.
    static func statisticsOptions(_ workout: Workout, _ request: WorkoutStatisticsRequest) -> StatisticsOptions {
        var options = StatisticsOptions(activity: workout.activityType)
        if let v = request.minimumSpeed { options.minimumSpeed = v }
        if let v = request.grace { options.grace = v }
        if let v = request.elevationHysteresis { options.elevationHysteresis = v }
        return options
    }

    /// Measures `route` (a workout's recording, see ``compute(store:id:request:)``) with `workout`'s pauses: the
    /// numbers that come from the route alone.
    static func measure(
        _ route: RouteSample?, of workout: Workout, in store: any RouteStore, options: StatisticsOptions
    )
        async throws -> StatisticsAccumulator
    {
        var accumulator = StatisticsAccumulator(
            options: options, segmentStarts: route?.segmentStarts ?? [], pauses: workout.pauseIntervals)
        if let route {
            for try await batch in store.locations(of: route.id, batchSize: 16_384) { accumulator.add(batch.locations) }
        }
        return accumulator
    }

    /// The numbers of `workout` that come from its route alone (distance, elapsed and moving time, climb, speeds),
    /// with the default options: what ``compute(store:id:request:)`` gives for them, from the recording of
    /// `current` (one of the workout's current routes, the first as ``compute(store:id:request:)`` takes it).
    package static func routeStatistics(of workout: Workout, current: RouteSample, in store: any RouteStore)
        async throws -> RouteStatistics
    {
        try await BlockingExecutor.shared.withPreference { () async throws -> RouteStatistics in
            let recording = try await store.recording(of: current)
            var accumulator = try await measure(
                recording, of: workout, in: store, options: statisticsOptions(workout, WorkoutStatisticsRequest()))
            return accumulator.finish(heartRate: [], cadence: [], zones: nil, power: [], powerZones: nil)
        }
    }
}
