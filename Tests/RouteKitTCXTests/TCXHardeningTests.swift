import Foundation
import RouteKit
import RouteKitGPX
import RouteKitIngest
@_spi(RouteKitInternals) import RouteKitTCX
import RouteKitTesting
import Testing

@Suite("TCX: hostile numbers")
struct TCXHardeningTests {
    @Test(
        "a lap's TotalTimeSeconds of 1e300 (or the largest double) gives a lap without an end, never a trap",
        arguments: ["1e300", "1.7976931348623157e308", "9223372036854775807"])
    func hugeLapTime(total: String) async throws {
        var xml = TCX.activity([[[TCX.positioned(1), TCX.positioned(2)]], []])
        // The second lap has no trackpoints: its end comes from its total time alone.
        let last = try #require(xml.range(of: "<TotalTimeSeconds>10</TotalTimeSeconds>", options: .backwards))
        xml.replaceSubrange(last, with: "<TotalTimeSeconds>\(total)</TotalTimeSeconds>")
        let store = InMemoryStore()
        let result = await TCXImporter(store: store).importBytes(Array(xml.utf8), name: "hostile.tcx")
        #expect(result.error == nil, "\(String(describing: result.error))")
        #expect(result.status == .imported)
        let workout = try #require(try await store.workouts(matching: WorkoutFilter()).first)
        let laps = workout.events.filter { $0.kind == .lap }
        #expect(laps.count == 2)
        #expect(laps.last?.start != nil)
        #expect(laps.last?.end == nil)
    }
}

@Suite("TCX: declared encodings")
struct TCXEncodingTests {
    static func document(encoding: String) -> String {
        """
        <?xml version="1.0" encoding=\(encoding)?><TrainingCenterDatabase \
        xmlns="http://www.garmin.com/xmlschemas/TrainingCenterDatabase/v2"><Activities><Activity Sport="Biking">\
        <Id>2018-02-05T12:16:02Z</Id><Lap StartTime="2018-02-05T12:16:02Z"><Track><Trackpoint>\
        <Time>2018-02-05T12:16:02Z</Time><Position><LatitudeDegrees>47.1</LatitudeDegrees>\
        <LongitudeDegrees>8.5</LongitudeDegrees></Position></Trackpoint></Track></Lap></Activity></Activities>\
        </TrainingCenterDatabase>
        """
    }

    @Test(
        "an encoding libxml2 would need iconv for (UTF-7: a crash the fuzzer found) is refused before parsing, read whole or a byte at a time",
        arguments: [#""UTF-7""#, #"'utf-7'"#, #""EBCDIC-US""#, #""UTF-32""#])
    func refused(encoding: String) throws {
        let bytes = Array(Self.document(encoding: encoding).utf8)
        for chunk in [1, 4096] {
            var offset = 0
            let source = { (buffer: UnsafeMutableRawBufferPointer) throws(RouteKitError) -> Int in
                let n = min(chunk, buffer.count, bytes.count - offset)
                for i in 0..<n { buffer[i] = bytes[offset + i] }
                offset += n
                return n
            }
            do {
                _ = try TCXDocument.parse(reading: source)
                Issue.record("\(encoding) was parsed, \(chunk) byte(s) at a time")
            } catch {
                #expect(error.code == .invalidTCX, "\(chunk) byte(s) at a time: \(error)")
            }
        }
        do {
            _ = try TCXDocument.parse(bytes)
            Issue.record("\(encoding) was parsed")
        } catch {
            #expect(error.code == .invalidTCX)
            #expect(error.message.contains("encoding"), "\(error.message)")
        }
    }

    @Test(
        "UTF-8, US-ASCII and ISO-8859-1, in either quotes and any case, are read",
        arguments: [
            #""UTF-8""#, #"'utf-8'"#, #""US-ASCII""#, #""ISO-8859-1""#, #""iso-8859-1""#,
        ])
    func read(encoding: String) throws {
        let doc = try TCXDocument.parse(Array(Self.document(encoding: encoding).utf8))
        #expect(doc.activities.first?.laps.first?.tracks.first?.count == 1)
    }
}
