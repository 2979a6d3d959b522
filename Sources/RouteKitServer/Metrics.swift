#if Server
    import Foundation
    import Prometheus

    /// The server's metrics in Prometheus's text format (`GET /metrics`): requests by route template, method and
    /// status, their latency, open event streams, and locations stored by uploads and builders. Route labels are
    /// the router's templates (`/v1/routes/{id}`), never an id, so the series stay few.
    final class ServerMetrics: Sendable {
        let registry = PrometheusCollectorRegistry()
        let openStreams: Gauge
        let locationsStored: Counter

        init() {
            openStreams = registry.makeGauge(
                descriptor: MetricNameDescriptor(
                    namespace: "routekit", metricName: "open_event_streams", unitName: "",
                    helpText: "Event streams (GET /v1/changes as Server-Sent Events) open now."))
            locationsStored = registry.makeCounter(
                descriptor: MetricNameDescriptor(
                    namespace: "routekit", metricName: "locations_stored", unitName: "total",
                    helpText: "Locations stored by uploads and route builders."))
        }

        static let buckets: [Duration] = [
            .milliseconds(1), .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50),
            .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1), .seconds(2.5), .seconds(5),
            .seconds(10), .seconds(30), .seconds(60),
        ]

        /// Counts a finished request (event streams: when their head is sent).
        func request(method: String, route: String, status: Int, duration: Duration) {
            registry.makeCounter(
                descriptor: MetricNameDescriptor(
                    namespace: "routekit", subsystem: "http", metricName: "requests", unitName: "total",
                    helpText: "HTTP requests by route template, method and status."),
                labels: [("method", method), ("route", route), ("status", String(status))]
            ).increment()
            registry.makeDurationHistogram(
                descriptor: MetricNameDescriptor(
                    namespace: "routekit", subsystem: "http", metricName: "request_duration", unitName: "seconds",
                    helpText: "Time to the response head, by route template and method."),
                labels: [("method", method), ("route", route)], buckets: Self.buckets
            ).record(duration)
        }

        func streamOpened() { openStreams.increment() }
        func streamClosed() { openStreams.decrement() }
        func stored(_ locations: Int) { locationsStored.increment(by: Int64(locations)) }

        /// The text exposition.
        func text() -> [UInt8] { registry.emitToBuffer() }
    }
#endif
