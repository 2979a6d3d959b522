/// The release of RouteKit these modules are: `routekit --version`, the OpenAPI document's `info.version`
/// (Sources/RouteKitServer/openapi.yaml: a test holds them equal), and the `routekitVersion` a person's archive
/// names (``PersonArchive``).
package enum RouteKitRelease {
    /// The version, `MAJOR.MINOR.PATCH`.
    package static let version = "0.3.0"
}
