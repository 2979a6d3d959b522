public import RouteKit

/// Puts quantity series back onto the points they were measured at, by timestamp.
///
/// The importers store heart rate, cadence, temperature and power as series related to the workout; an
/// export writes them back into each point whose time equals a sample's time (same instant). Points
/// are usually in time order, so matching walks each series with a cursor (O(n)); a point whose time went
/// backwards falls back to a binary search.
public struct SeriesMerger {
    private var series: [(type: QuantityType, instants: [Instant], values: [Double], cursor: Int)]

    /// Creates a merger over series whose samples are in time order.
    public init(_ series: [QuantitySeries]) {
        self.series = series.map { s in
            (s.type, s.samples.map(\.timestamp.instant), s.samples.map(\.value), 0)
        }
    }

    /// Sets each point's value for every series that has a sample at the point's time.
    public mutating func apply(to points: inout [GPXPoint]) {
        for i in points.indices {
            guard let t = points[i].location.timestamp?.instant else { continue }
            for k in series.indices {
                let instants = series[k].instants
                var c = series[k].cursor
                while c < instants.count && instants[c] < t { c += 1 }
                if c < instants.count && instants[c] == t {
                    points[i].values[series[k].type] = series[k].values[c]
                    // Past this sample: a second point with the same time takes the next sample.
                    series[k].cursor = c + 1
                } else if c == series[k].cursor {
                    // Nothing ahead matches (time went backwards, or the series ended): binary search it all.
                    var lo = 0
                    var hi = instants.count
                    while lo < hi {
                        let mid = (lo + hi) / 2
                        if instants[mid] < t { lo = mid + 1 } else { hi = mid }
                    }
                    if lo < instants.count && instants[lo] == t {
                        points[i].values[series[k].type] = series[k].values[lo]
                    }
                } else {
                    series[k].cursor = c
                }
            }
        }
    }
}
