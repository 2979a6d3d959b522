#if Server
    import Foundation
    import HTTPTypes
    import Hummingbird
    import NIOCore
    import RouteKit
    import RouteKitApplication

    /// `GET /v1/export`: everything the token's person has, as one zip (RouteKitApplication's `PersonArchive`, the
    /// archive `routekit export --person … --archive` writes), limited to the sources the token may read and to what
    /// its scopes allow (`read:workouts` at least; routes with `read:routes`, effort scores with `read:effort`,
    /// series and point values of the quantity types it may read).
    struct PersonExportRoutes: Sendable {
        let stores: PersonStores
        let configuration: ServerConfiguration

        /// The archive, written to a spool file in the upload folder first (memory stays at one entry's writer), then
        /// streamed. The file is unlinked once it is open for the answer, and on any error, so the spool folder holds
        /// nothing of it after the answer (a server killed while writing one leaves it to the next server's sweep).
        func archive(_ request: Request, context: RouteKitRequestContext) async throws -> Response {
            let token = try context.requireToken()
            guard let person = token.person else {
                throw Problem(
                    status: .forbidden, type: "insufficient-scope", title: "The token lacks a scope",
                    detail: "an admin token reads no person's objects: export with a token of the person")
            }
            _ = try context.require(.reading(.workouts))
            // The person's view of the store, narrowed to the token's scopes: the archive leaves out what they do not
            // allow.
            let view = try stores.store(for: token)
            let folder = configuration.uploadDirectory as NSString
            let path = folder.appendingPathComponent(Spool.name(Spool.exportPrefix, suffix: ".zip"))
            let scratch = folder.appendingPathComponent(Spool.name(Spool.exportPrefix, suffix: ".entry"))
            let readable = token.readableSources
            // Written and opened again on the blocking executor: file I/O never holds a cooperative thread.
            let opened = try await BlockingExecutor.shared.withPreference { () async throws -> FileHandle? in
                do {
                    _ = try await PersonArchive.write(
                        from: view, to: path, readableSources: readable, scratch: scratch)
                } catch {
                    unlink(path)
                    unlink(scratch)
                    throw error
                }
                return FileHandle(forReadingAtPath: path)
            }
            guard let handle = opened else {
                unlink(path)
                throw Problem(
                    status: .internalServerError, type: "internal", title: "The server failed",
                    detail: "the archive could not be read back")
            }
            unlink(path)  // the open handle keeps the data until it is closed
            // Its length (`Content-Length`): where its end is; then back to its start for the answer.
            let end = lseek(handle.fileDescriptor, 0, SEEK_END)
            let length: Int? = end >= 0 && lseek(handle.fileDescriptor, 0, SEEK_SET) == 0 ? Int(end) : nil
            let day = String(Timestamp(Date()).iso8601.prefix(10))
            let name = "routekit-\(String(person.description.prefix(8)))-\(day).zip"
            let headers: HTTPFields = [
                .contentType: "application/zip",
                .contentDisposition: "attachment; filename=\"\(name)\"",
                .cacheControl: "private, no-store",
            ]
            return Response(
                status: .ok, headers: headers,
                body: ResponseBody(contentLength: length) { writer in
                    defer { try? handle.close() }
                    try await BlockingExecutor.shared.withPreference {
                        while let data = try handle.read(upToCount: 256 * 1024), !data.isEmpty {
                            try await writer.write(ByteBuffer(bytes: data))
                        }
                    }
                    try await writer.finish(nil)
                })
        }
    }
#endif
