import Foundation
import RouteKit
import RouteKitGPX
import RouteKitImport
import RouteKitIngest
import Testing

@Suite("Strava activities.csv")
struct StravaIndexTests {
    static let header =
        "Activity ID,Activity Date,Activity Name,Activity Type,Activity Description,Elapsed Time,Distance,"
        + "Max Heart Rate,Relative Effort,Commute,Activity Private Note,Activity Gear,Filename,Athlete Weight,"
        + "Bike Weight,Elapsed Time,Moving Time,Distance,Max Speed"

    @Test("columns by position: the second Distance in metres, the second Elapsed Time, quoted names with commas")
    func current() throws {
        let csv =
            Self.header + "\n"
            + "123,\"Sep 12, 2018, 3:02:23 PM\",\"Lunch, run\",Run,\"two\nlines\",1800,5.01,170,40,false,,,"
            + "activities/111.fit.gz,70,,1800.5,1700.0,5012.3,4.2\n"
            + "124,\"Sep 13, 2018, 6:00:00 AM\",Swim,Swim,,600,1.0,,,true,,,,70,,600.0,600.0,1000.0,1\n"
        let (rows, warnings) = try StravaIndex.parse(csv, name: "activities.csv")
        #expect(warnings.isEmpty)
        #expect(rows.count == 2)
        #expect(rows[0].id == "123")
        #expect(rows[0].name == "Lunch, run")
        #expect(rows[0].description == "two\nlines")
        #expect(rows[0].distanceMeters == 5012.3)
        #expect(rows[0].elapsedSeconds == 1800.5)
        #expect(rows[0].filename == "activities/111.fit.gz")
        #expect(rows[0].commute == false)
        #expect(rows[0].start?.iso8601 == "2018-09-12T15:02:23Z")
        #expect(rows[0].overrides.activityType == .running)
        #expect(rows[1].filename == nil)
        #expect(rows[1].commute == true)
    }

    @Test("a header in another language is read by position, with a warning")
    func localized() throws {
        let header = Self.header.replacingOccurrences(of: "Activity ID", with: "ID de actividad")
        let (rows, warnings) = try StravaIndex.parse(
            header + "\n9,\"Jan 1, 2020, 1:00:00 AM\",X,Ride,,60,1,,,false,,,activities/9.gpx,,,60,60,1000,1\n",
            name: "a.csv")
        #expect(rows.map(\.filename) == ["activities/9.gpx"])
        #expect(warnings.count == 1)
    }

    @Test("the pre-2019 layout is read by name; a file that is not an index is refused")
    func legacyAndRefused() throws {
        let (rows, _) = try StravaIndex.parse(
            "id,date,name,type,description,elapsed_time,distance,commute,gear,filename\n"
                + "5,2016-05-01 10:00:00,Old,Run,,100,2000.5,false,,activities/5.gpx\n", name: "a.csv")
        #expect(rows.first?.distanceMeters == 2000.5)
        #expect(rows.first?.filename == "activities/5.gpx")
        #expect(throws: RouteKitError.self) { try StravaIndex.parse("a,b\n1,2\n", name: "x.csv") }
    }
}
