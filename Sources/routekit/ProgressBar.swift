import Foundation
import RouteKit

/// A one-line progress bar on standard error (only on a terminal), with the rate and the time remaining:
/// `[#########---------------------]  31% 12.4 MB/s, 0:41 left  120/388 ride.gpx`.
///
/// Safe to update from several tasks at once (a mutex guards its state); it redraws at most ten times a second.
final class ProgressBar: Sendable {
    /// What the bar counts, for its rate.
    enum Unit: Sendable {
        /// Bytes (shown as MB/s).
        case bytes
        /// Items with a plural name (shown as `routes/s`).
        case items(String)
    }

    let enabled: Bool
    let total: Int
    let unit: Unit
    private struct State {
        var started = Date()
        var lastDraw = Date.distantPast
        var shown = false
    }
    private let state = Locked(State())

    init(enabled: Bool, total: Int, unit: Unit = .bytes) {
        self.enabled = enabled
        self.total = max(1, total)
        self.unit = unit
    }

    func update(_ done: Int, label: String) {
        guard enabled else { return }
        let now = Date()
        let line: String? = state.withLock { s in
            guard now.timeIntervalSince(s.lastDraw) > 0.1 else { return nil }
            s.lastDraw = now
            s.shown = true
            return Self.line(done: done, total: total, elapsed: now.timeIntervalSince(s.started), unit: unit)
        }
        if let line { printErrorRaw("\r" + line + " " + column(label, 30)) }
    }

    /// The bar, the percentage, the rate and the time left.
    static func line(done: Int, total: Int, elapsed: Double, unit: Unit) -> String {
        let fraction = min(1, max(0, Double(done) / Double(total)))
        let width = 30
        let filled = Int(fraction * Double(width))
        let bar = String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled)
        var text = "[\(bar)] \(String(format: "%3.0f", fraction * 100))%"
        guard elapsed > 0.5, done > 0 else { return text }
        let rate = Double(done) / elapsed
        switch unit {
        case .bytes: text += String(format: " %.1f MB/s", rate / 1e6)
        case .items(let name): text += String(format: " %.1f %@/s", rate, name)
        }
        let left = Int((Double(total - done) / rate).rounded())
        text += String(format: ", %d:%02d left", left / 60, left % 60)
        return text
    }

    func clear() {
        guard enabled else { return }
        let wasShown = state.withLock { s in
            defer {
                s.shown = false
                s.lastDraw = .distantPast
            }
            return s.shown
        }
        if wasShown { printErrorRaw("\r" + String(repeating: " ", count: 100) + "\r") }
    }
}
