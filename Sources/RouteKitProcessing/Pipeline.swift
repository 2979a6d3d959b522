import Foundation
public import RouteKit
public import RouteKitGEOS

/// A stage of the processing pipeline. They always run in this order.
public enum PipelineStage: String, CaseIterable, Codable, Sendable, Hashable {
    /// Drop impossible fixes (speed gate, poor accuracy, duplicates).
    case outliers
    /// Kalman + RTS smoothing of positions and altitudes.
    case smoothing
    /// Douglas–Peucker on GEOS, tolerance in metres.
    case simplification
    /// Drop the points inside privacy zones (last, so no later stage moves a point back into one).
    case privacy
}

extension PrivacyZone {
    /// Whether a location lies inside (or on) the circle (ellipsoidal distance to the centre).
    package func contains(_ l: Location) -> Bool {
        let centre = Location(latitude: latitude, longitude: longitude)
        return ellipsoidalDistance(centre, l) <= radiusMetres
    }
}

/// What the pipeline does, with every parameter: its ``parameterHash`` identifies a run.
public struct PipelineConfiguration: Sendable, Hashable, Codable {
    /// The stages to run (in ``PipelineStage`` order, whatever the order here).
    public var stages: [PipelineStage]
    /// Outlier removal's parameters.
    public var outliers: OutlierOptions
    /// Smoothing's parameters.
    public var smoothing: SmoothingOptions
    /// Simplification's parameters.
    public var simplification: SimplificationOptions
    /// The privacy stage's zones.
    public var privacyZones: [PrivacyZone]

    /// Outliers, smoothing and simplification with default parameters (5 m tolerance); the privacy stage runs
    /// when it is asked for and has zones.
    public init(
        stages: [PipelineStage] = [.outliers, .smoothing, .simplification], outliers: OutlierOptions = OutlierOptions(),
        smoothing: SmoothingOptions = SmoothingOptions(),
        simplification: SimplificationOptions = SimplificationOptions(), privacyZones: [PrivacyZone] = []
    ) {
        self.privacyZones = privacyZones
        self.stages = PipelineStage.allCases.filter { stages.contains($0) }
        self.outliers = outliers
        self.smoothing = smoothing
        self.simplification = simplification
    }

    /// A hash of the stages and every parameter (canonical JSON, sorted keys): the pipeline's idempotency key
    /// with the route's sync identifier and raw version.
    public var parameterHash: String {
        let e = JSONEncoder()
        e.outputFormatting = .sortedKeys
        var h = ContentHasher(domain: "routekit-pipeline-v1")
        h.combine(String(decoding: (try? e.encode(self)) ?? Data(), as: UTF8.self))
        return String(h.hexDigest.prefix(16))
    }

    /// The stages as text (`"outliers,smoothing,simplification"`).
    package var stageList: String { stages.map(\.rawValue).joined(separator: ",") }
}

/// What a run did: the numbers every processed version records (<doc:ProcessingPipeline>).
public struct PipelineMetrics: Sendable, Hashable, Codable {
    /// Locations in.
    public var pointsIn = 0
    /// Locations out.
    public var pointsOut = 0
    /// Fixes the outlier stage dropped, by reason.
    public var outliers = OutlierCounts()
    /// Length of the input, metres, as `RouteOdometer` measures it under the activity's speed gate (one segment:
    /// the pipeline sees the locations only).
    public var lengthInMetres = 0.0
    /// Length of the output, metres, measured the same way.
    public var lengthOutMetres = 0.0
    /// RMS horizontal displacement the smoothing applied, metres.
    public var smoothingRmsMetres = 0.0
    /// The simplification stage against its own input: the largest distance of a dropped point to the output
    /// segment that spans it, metres (within the tolerance plus 1 mm).
    public var maxDeviationMetres = 0.0
    /// Points the privacy stage removed.
    public var privacyRemoved = 0
    /// Stages that did not run, with the reason.
    public var skipped: [String: String] = [:]
}

/// The pipeline's output: a subsequence of the input (``keptIndices``) whose coordinates (and altitudes) are
/// the smoothed ones when smoothing ran, every other field the original's.
public struct PipelineResult: Sendable {
    /// The processed locations.
    public var locations: [Location]
    /// For each output location, its index in the input.
    public var keptIndices: [Int]
    /// What the run did.
    public var metrics: PipelineMetrics
}

/// The processing pipeline: outlier removal, smoothing, simplification (<doc:ProcessingPipeline>).
public struct RoutePipeline: Sendable {
    /// Its configuration.
    public let configuration: PipelineConfiguration

    /// A pipeline.
    public init(configuration: PipelineConfiguration = PipelineConfiguration()) {
        self.configuration = configuration
    }

    /// Runs the stages on one route.
    ///
    /// - Parameters:
    ///   - input: the route's locations, in order.
    ///   - activity: what was done (the outlier stage's speed gate depends on it).
    ///   - context: the worker's GEOS context (one per worker, not per call).
    /// - Throws: `RouteKitError.Code.invalidLocation` for an invalid input location (naming its index),
    ///   `RouteKitError.Code.invalidArgument` for bad parameters, `RouteKitError.Code.geos`.
    public func run(_ input: consuming [Location], activity: ActivityType, context: GEOSContext)
        throws(RouteKitError) -> PipelineResult
    {
        try input.validateBatch()
        var metrics = PipelineMetrics()
        metrics.pointsIn = input.count
        metrics.lengthInMetres = RouteOdometer.length(of: input, activity: activity)
        var indices = Array(input.indices)
        // Owned from here on: each stage replaces it, so at most two copies of the route live at once.
        var current = consume input
        let stages = Set(configuration.stages)
        if stages.contains(.outliers) {
            let (keep, counts) = findOutliers(current, activity: activity, options: configuration.outliers)
            metrics.outliers = counts
            if keep.count < current.count {
                indices = keep.map { indices[$0] }
                current = keep.map { current[$0] }
            }
        }
        if stages.contains(.smoothing) {
            if current.contains(where: { $0.timestamp == nil }) {
                metrics.skipped[PipelineStage.smoothing.rawValue] = "the route has locations without a time"
            } else if current.count < 3 {
                metrics.skipped[PipelineStage.smoothing.rawValue] = "fewer than 3 locations"
            } else {
                let (smoothed, rms) = smoothLocations(consume current, options: configuration.smoothing)
                current = smoothed
                metrics.smoothingRmsMetres = rms
            }
        }
        if stages.contains(.simplification) {
            let simplified = try simplifyIndices(current, options: configuration.simplification, context: context)
            metrics.maxDeviationMetres = simplified.maxDeviation
            indices = simplified.keep.map { indices[$0] }
            current = simplified.keep.map { current[$0] }
        }
        if stages.contains(.privacy) && !configuration.privacyZones.isEmpty {
            let keep = current.indices.filter { i in !configuration.privacyZones.contains { $0.contains(current[i]) } }
            metrics.privacyRemoved = current.count - keep.count
            indices = keep.map { indices[$0] }
            current = keep.map { current[$0] }
        }
        metrics.pointsOut = current.count
        metrics.lengthOutMetres = RouteOdometer.length(of: current, activity: activity)
        return PipelineResult(locations: current, keptIndices: indices, metrics: metrics)
    }
}
