#if Server
    import AsyncHTTPClient
    import Foundation
    import HummingbirdTesting
    import NIOCore
    import NIOHTTP1
    @_spi(RouteKitBackend) import RouteKit
    import RouteKitServer
    import RouteKitSQLite
    import Testing

    /// nginx (Debian's package), for the reverse-proxy test; `.ci/run` installs it.
    let nginxBinary: String? = ["/usr/sbin/nginx", "/usr/local/sbin/nginx", "/usr/bin/nginx"].first {
        FileManager.default.isExecutableFile(atPath: $0)
    }

    /// The `location` block the README documents for event streams behind nginx.
    func nginxConfig(prefix: String, listen: Int, upstream: Int) -> String {
        """
        \(getuid() == 0 ? "user root;" : "")
        daemon off;
        worker_processes 1;
        pid \(prefix)/nginx.pid;
        error_log \(prefix)/error.log warn;
        events { worker_connections 256; }
        http {
            access_log off;
            client_body_temp_path \(prefix)/body;
            proxy_temp_path \(prefix)/proxy;
            fastcgi_temp_path \(prefix)/fastcgi;
            uwsgi_temp_path \(prefix)/uwsgi;
            scgi_temp_path \(prefix)/scgi;
            server {
                listen 127.0.0.1:\(listen);
                client_max_body_size 512m;
                location / {
                    proxy_pass http://127.0.0.1:\(upstream);
                    proxy_http_version 1.1;
                    proxy_set_header Connection "";
                    proxy_set_header Host $host;
                    proxy_read_timeout 3600s;
                    proxy_request_buffering off;
                }
            }
        }
        """
    }

    @Suite(
        "routekit serve behind nginx", .serialized,
        .enabled(if: nginxBinary != nil, "nginx is not installed (apt-get install nginx-light); .ci/run installs it"))
    struct NginxTests {
        @Test("through nginx with the README's configuration, a stream's first event is not held in a buffer")
        func eventsPassThrough() async throws {
            let f = try Fixture()
            let token = try await f.token()
            let store = f.store
            try await f.app().test(.live) { client in
                let upstream = try #require(client.port)
                let prefix = f.folder + "/nginx"
                for sub in ["", "/body", "/proxy", "/fastcgi", "/uwsgi", "/scgi"] {
                    try FileManager.default.createDirectory(atPath: prefix + sub, withIntermediateDirectories: true)
                }
                let listen = 30_000 + Int.random(in: 0..<20_000)
                try nginxConfig(prefix: prefix, listen: listen, upstream: upstream)
                    .write(toFile: prefix + "/nginx.conf", atomically: true, encoding: .utf8)
                let nginx = Process()
                nginx.executableURL = URL(fileURLWithPath: try #require(nginxBinary))
                nginx.arguments = ["-p", prefix, "-c", prefix + "/nginx.conf"]
                try nginx.run()
                defer {
                    nginx.terminate()
                    nginx.waitUntilExit()
                }
                var ready = false
                for _ in 0..<100 where !ready {
                    try await Task.sleep(for: .milliseconds(50))
                    var r = HTTPClientRequest(url: "http://127.0.0.1:\(listen)/healthz")
                    r.method = .GET
                    ready = (try? await HTTPClient.shared.execute(r, timeout: .seconds(2)).status) == .ok
                }
                #expect(ready)
                let response = try await HTTPClient.shared.execute(
                    request(listen, "/v1/changes", token: token), timeout: .seconds(30))
                #expect(response.status == .ok)
                var reader = EventReader(response.body)
                let upToDate = try #require(try await reader.next())
                #expect(upToDate.event == "up-to-date")
                let committed = ContinuousClock.now
                _ = try await saveRoute(store, "proxied")
                let event = try #require(try await reader.nextChanges())
                let delay = ContinuousClock.now - committed
                #expect(event.addedNames == ["test-proxied"])
                // Buffered by nginx, the event would wait for 4–8 KiB of heartbeats (13 bytes each 0.5 s: minutes); 5 s
                // tells that apart from a machine loaded by the whole suite (2.5 s was seen there once).
                #expect(delay < .seconds(5), "the event took \(delay) through nginx")
            }
        }
    }
#endif
