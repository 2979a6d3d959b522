import Foundation
import RouteKit
import RouteKitFIT
import RouteKitGPX
import RouteKitGeoJSON
import RouteKitIngest
import RouteKitTCX

/// The events of one route file as the GPX reader makes them, whatever its format (told by content, plain or
/// gzip-compressed), through the readers `routekit import` and `convert` use: FIT through `FITFile.gpxEvents` (a chunk
/// at a time), TCX through `TCXDocument.gpxEvents`, GeoJSON through `GeoJSONFile.events` (read whole, up to its
/// limit), anything else through `GPXReader`, which names what is wrong with a file that is none of them.
///
/// `body` returns `false` when it has what it wants: a GPX file is read no further; the other readers go on to the end
/// of the file, but `body` is handed nothing more.
/// - Throws: the readers' errors (naming the file); ``RouteKitError/Code/invalidArgument`` for an Apple Health export,
///   which only the importer reads (`routekit import`, and `render` through it).
func forEachRouteFileEvent(
    _ path: String, options: GPXReadOptions = GPXReadOptions(),
    _ body: (GPXEvent) throws(RouteKitError) -> Bool
) throws(RouteKitError) {
    var going = true
    switch regularFileFormat(path) {
    case .fit?:
        do throws(RouteKitError) {
            try FITFile.gpxEvents(FITInput(path: path)) { (event: GPXEvent) throws(RouteKitError) in
                if going { going = try body(event) }
            }
        } catch {
            throw error.inFile(path)
        }
    case .tcx?:
        let document = try TCXCommands.document(path)
        try document.gpxEvents { (event: GPXEvent) throws(RouteKitError) in
            if going { going = try body(event) }
        }
    case .geojson?:
        let file = try GeoJSONFile.contents(of: path)
        try GeoJSONFile.events(of: file.bytes, name: path, inGPXOrder: false) {
            (event: GPXEvent) throws(RouteKitError) in
            if going { going = try body(event) }
        }
    case .healthExport?:
        throw healthExportRefusal(path)
    case .gpx?, nil:
        let reader = try GPXReader(path: path, options: options)
        while going, let event = try reader.next() {
            going = try body(event)
        }
    }
}
