import Foundation
import PackagePlugin

/// Generates RouteKitClient's types and client from the OpenAPI document with swift-openapi-generator, as the
/// generator's own build plugin (`OpenAPIGenerator`) does, with one difference: it adds no command when the
/// generator is not among its tools. The generator is a dependency of this plugin only with the `Client` trait
/// (Package.swift), so a build without the trait neither builds the generator nor runs it, while RouteKitClient's
/// sources, all under `#if Client`, compile to an empty module.
///
/// The target's folder holds `openapi.yaml` (a symbolic link to `../RouteKitServer/openapi.yaml`: one document,
/// never a copy) and `openapi-generator-config.yaml`; both are excluded from the target's sources and named here.
/// The link is resolved before the command is made: the build system tracks the document itself, so an edit of
/// the server's `openapi.yaml` regenerates the client, and an invalid document fails the build.
@main
struct RouteKitClientGenerator: BuildToolPlugin {
    /// The files the generator writes in build-plugin mode: all of them, those of modes not asked for empty (the
    /// generator's `OutputFileName`, 1.14).
    static let outputFiles = [
        "Types.swift", "Types+Components.swift", "Types+Operations.swift", "Types+Components+Schemas.swift",
        "Types+Components+Parameters.swift", "Types+Components+RequestBodies.swift",
        "Types+Components+Responses.swift", "Types+Components+Headers.swift", "Client.swift", "Server.swift",
    ]

    func createBuildCommands(context: PluginContext, target: any Target) async throws -> [Command] {
        // Without the `Client` trait the generator is not a dependency of this plugin: nothing to generate.
        guard let generator = try? context.tool(named: "swift-openapi-generator") else { return [] }
        guard let module = target as? SourceModuleTarget else { return [] }
        let folder = module.directoryURL
        let document = folder.appending(component: "openapi.yaml").resolvingSymlinksInPath()
        let config = folder.appending(component: "openapi-generator-config.yaml")
        for file in [document, config] where !FileManager.default.fileExists(atPath: file.path) {
            throw GeneratorError(message: "\(target.name): \(file.path) is missing")
        }
        let output = context.pluginWorkDirectoryURL.appending(component: "GeneratedSources")
        return [
            .buildCommand(
                displayName: "Running swift-openapi-generator on \(document.lastPathComponent) for \(target.name)",
                executable: generator.url,
                arguments: [
                    "generate", document.path, "--config", config.path, "--output-directory", output.path,
                    "--plugin-source", "build",
                ],
                environment: [:],
                inputFiles: [config, document],
                outputFiles: Self.outputFiles.map { output.appending(component: $0) }
            )
        ]
    }
}

/// A missing input, named.
struct GeneratorError: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}
