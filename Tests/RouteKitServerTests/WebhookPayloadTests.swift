#if Server
    import Foundation
    import HTTPTypes
    import Hummingbird
    import HummingbirdTesting
    import NIOCore
    import RouteKit
    import RouteKitServer
    import RouteKitSQLite
    import Testing

    @Suite("Webhooks: the body of a change set")
    struct WebhookPayloadTests {
        @Test("{data, timestamp, type}: data is GET /v1/changes's answer byte for byte, and its anchor resumes the feed")
        func sameAsTheFeed() async throws {
            let f = try Fixture()
            let token = try await f.token()
            _ = try await saveRoute(f.store, "morning run")
            let every = ChangePredicate(types: Set(ChangeObjectType.allCases))
            let set = try await f.store.changes(since: nil, matching: every, limit: 500)
            #expect(set.added.count == 1)
            #expect(!set.addedObjects.isEmpty)
            let body = WebhookPayload.body(set, timestamp: Date(timeIntervalSince1970: 1_714_543_200))

            let object = try #require(try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any])
            #expect(Set(object.keys) == ["type", "timestamp", "data"])
            #expect(object["type"] as? String == "routekit.changes")
            #expect(object["timestamp"] as? String == "2024-05-01T06:00:00Z")
            let data = try #require(object["data"] as? [String: Any])
            #expect(Set(data.keys) == ["added", "addedObjects", "anchor", "deleted", "deletedObjects", "hasMore"])
            let anchor = try #require(data["anchor"] as? String)
            #expect(anchor == set.anchor.text)

            try await f.app().test(.router) { client in
                let feed = try await client.execute(
                    uri: "/v1/changes?types=all&limit=500", method: .get, headers: auth(token)
                ) { response in
                    #expect(response.status == .ok)
                    return Array(response.body.readableBytesView)
                }
                let prefix = Array("{\"data\":".utf8)
                let start = Array(body.prefix(prefix.count))
                let inner = Array(body.dropFirst(prefix.count).prefix(feed.count))
                let rest = String(decoding: body.dropFirst(prefix.count + feed.count), as: UTF8.self)
                #expect(start == prefix)
                #expect(inner == feed)
                #expect(rest == ",\"timestamp\":\"2024-05-01T06:00:00Z\",\"type\":\"routekit.changes\"}")
                // A receiver that missed later deliveries resumes from the anchor of the last one it has.
                try await client.execute(
                    uri: "/v1/changes?types=all&anchor=\(anchor)", method: .get, headers: auth(token)
                ) { response in
                    #expect(response.status == .ok)
                    let later = json(response.body)
                    let added = later["added"] as? [Any]
                    #expect(added?.isEmpty == true)
                }
            }
        }

        @Test("an anchor given for the subscriber (a sealed one) is the body's anchor")
        func anchorText() throws {
            let anchor = ChangeAnchor(storeID: UUID(), epoch: 1, position: 7, token: 9)
            let set = ChangeSet(deleted: [], added: [], anchor: anchor, hasMore: true)
            let body = WebhookPayload.body(set, anchorText: "s1.sealed", timestamp: Date(timeIntervalSince1970: 0))
            let object = try #require(try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any])
            let data = try #require(object["data"] as? [String: Any])
            #expect(data["anchor"] as? String == "s1.sealed")
            #expect(data["hasMore"] as? Bool == true)
            #expect(object["timestamp"] as? String == "1970-01-01T00:00:00Z")
        }

        @Test("an admin-wide subscription's body names the person, its keys still sorted")
        func person() throws {
            let anchor = ChangeAnchor(storeID: UUID(), epoch: 1, position: 7, token: 9)
            let set = ChangeSet(deleted: [], added: [], anchor: anchor, hasMore: false)
            let person = PersonID(UUID())
            let body = WebhookPayload.body(
                set, anchorText: "w1.sealed", person: person, timestamp: Date(timeIntervalSince1970: 0))
            let text = String(decoding: body, as: UTF8.self)
            let tail = #","person":"\#(person)","timestamp":"1970-01-01T00:00:00Z","type":"routekit.changes"}"#
            #expect(text.hasSuffix(tail))
            let object = try #require(try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any])
            #expect(Set(object.keys) == ["data", "person", "timestamp", "type"])
            let plain = WebhookPayload.body(set, timestamp: Date(timeIntervalSince1970: 0))
            #expect(!String(decoding: plain, as: UTF8.self).contains("person"))
        }
    }
#endif
