internal import CGEOS
public import RouteKit

/// One GEOS context: the handle every re-entrant GEOS call takes, with its own error state.
///
/// Create one per task or thread (``withGEOSContext(_:)``) and keep it for all the work that task does;
/// never share one between tasks: like GRDB's `Database`, a context is explicitly not `Sendable`.
/// Errors GEOS reports through the context's message handler become `RouteKitError` values with code
/// `RouteKitError.Code.geos`.
public final class GEOSContext {
    let handle: GEOSContextHandle_t
    private let errorBox: ErrorBox

    /// Holds the last message the C handler reported.
    final class ErrorBox {
        var message: String?
    }

    /// Creates a context.
    /// - Throws: `RouteKitError.Code.geos` if GEOS cannot allocate one.
    public init() throws(RouteKitError) {
        guard let handle = GEOS_init_r() else {
            throw RouteKitError(.geos, "GEOS could not create a context")
        }
        self.handle = handle
        self.errorBox = ErrorBox()
        let userdata = Unmanaged.passUnretained(errorBox).toOpaque()
        GEOSContext_setErrorMessageHandler_r(
            handle,
            { message, userdata in
                guard let message, let userdata else { return }
                let box = Unmanaged<GEOSContext.ErrorBox>.fromOpaque(userdata).takeUnretainedValue()
                var text = String(cString: message)
                while text.last == "\n" { text.removeLast() }
                box.message = text
            }, userdata)
    }

    deinit {
        GEOS_finish_r(handle)
    }

    /// The version of the GEOS library in use (`"3.11.1-CAPI-1.17.1"`).
    public var libraryVersion: String { String(cString: GEOSversion()) }

    /// Clears the error state before a call.
    func clearError() { errorBox.message = nil }

    /// An error for a failed GEOS call named `function`, with GEOS's own message when it gave one.
    func error(_ function: String) -> RouteKitError {
        let detail = errorBox.message.map { ": " + $0 } ?? ""
        errorBox.message = nil
        return RouteKitError(.geos, "\(function) failed\(detail)")
    }
}

@available(*, unavailable)
extension GEOSContext: Sendable {}

/// Runs `body` with a new GEOS context that lives exactly as long as the call.
///
/// Call it once per worker task, not once per geometry: creating a context costs far more than most
/// operations on short routes.
public func withGEOSContext<R, E: Error>(_ body: (GEOSContext) throws(E) -> R) throws -> R {
    let context = try GEOSContext()
    return try body(context)
}
