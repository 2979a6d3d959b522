#if Server
    import AsyncHTTPClient
    import Foundation
    import HummingbirdTesting
    import NIOCore
    import NIOHTTP1
    import RouteKit
    import RouteKitTesting
    import Testing

    /// The numbers of a script's array result (JSON gives whole numbers as Int, others as Double).
    func scriptNumbers(_ value: Any?) -> [Double] {
        (value as? [Any] ?? []).compactMap { element -> Double? in
            if let d = element as? Double { return d }
            if let i = element as? Int { return Double(i) }
            return nil
        }
    }

    /// A W3C WebDriver client (chromedriver) over AsyncHTTPClient: just the commands the browser test uses.
    struct WebDriver {
        struct Failure: Error, CustomStringConvertible {
            var description: String
        }

        let base: String
        var session = ""

        /// Sends a command and returns its `value`.
        func call(_ method: HTTPMethod, _ path: String, _ body: [String: Any]? = nil) async throws -> Any? {
            var request = HTTPClientRequest(url: base + path)
            request.method = method
            if let body {
                request.headers.add(name: "Content-Type", value: "application/json")
                request.body = .bytes(ByteBuffer(bytes: try JSONSerialization.data(withJSONObject: body)))
            }
            let response = try await HTTPClient.shared.execute(request, timeout: .seconds(60))
            let bytes = try await response.body.collect(upTo: 64 << 20)
            let object = try? JSONSerialization.jsonObject(with: Data(bytes.readableBytesView)) as? [String: Any]
            guard response.status == .ok else {
                let value = object?["value"] as? [String: Any]
                throw Failure(
                    description: "WebDriver \(method) \(path): \(response.status.code) "
                        + "\(value?["error"] as? String ?? "") \(value?["message"] as? String ?? "")")
            }
            return object?["value"]
        }

        func session(_ path: String) -> String { "/session/\(session)\(path)" }

        func navigate(_ url: String) async throws { _ = try await call(.POST, session("/url"), ["url": url]) }

        /// The element for a CSS selector (its WebDriver reference).
        func element(_ css: String) async throws -> String {
            let value = try await call(.POST, session("/element"), ["using": "css selector", "value": css])
            guard let reference = (value as? [String: Any])?["element-6066-11e4-a52e-4f735466cecf"] as? String else {
                throw Failure(description: "no element reference for \(css)")
            }
            return reference
        }

        func type(_ css: String, _ text: String) async throws {
            _ = try await call(.POST, session("/element/\(try await element(css))/value"), ["text": text])
        }

        func click(_ css: String) async throws {
            _ = try await call(.POST, session("/element/\(try await element(css))/click"), [:])
        }

        /// Runs a script in the page and returns its result.
        func script(_ source: String) async throws -> Any? {
            try await call(.POST, session("/execute/sync"), ["script": source, "args": [Any]()])
        }

        /// Drags the mouse from the middle of the element `css` by (`dx`, `dy`) pixels (W3C pointer actions).
        func drag(_ css: String, dx: Int, dy: Int) async throws {
            let reference = try await element(css)
            let steps: [[String: Any]] = [
                [
                    "type": "pointerMove", "duration": 0, "x": 0, "y": 0,
                    "origin": ["element-6066-11e4-a52e-4f735466cecf": reference],
                ],
                ["type": "pointerDown", "button": 0],
                ["type": "pointerMove", "duration": 250, "origin": "pointer", "x": dx / 2, "y": dy / 2],
                ["type": "pointerMove", "duration": 250, "origin": "pointer", "x": dx - dx / 2, "y": dy - dy / 2],
                ["type": "pointerUp", "button": 0],
            ]
            let mouse: [String: Any] = [
                "type": "pointer", "id": "mouse", "parameters": ["pointerType": "mouse"], "actions": steps,
            ]
            _ = try await call(.POST, session("/actions"), ["actions": [mouse]])
        }

        /// Runs `source` until it returns something `accept` takes, for up to `seconds`; the last result.
        func poll(_ source: String, seconds: Double, _ accept: (Any?) -> Bool) async throws -> Any? {
            let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
            var last = try await script(source)
            while !accept(last) && ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(50))
                last = try await script(source)
            }
            return last
        }
    }

    /// Starts `executable` with `arguments`, output to `log`, and waits for `marker` followed by a port in the log.
    func startChild(_ executable: URL, _ arguments: [String], log: URL, marker: String) async throws -> (Process, Int) {
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        let handle = try FileHandle(forWritingTo: log)
        process.standardError = handle
        process.standardOutput = handle
        try process.run()
        for _ in 0..<400 {
            try await Task.sleep(for: .milliseconds(50))
            let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
            if let r = text.range(of: marker), let port = Int(text[r.upperBound...].prefix { $0.isNumber }) {
                return (process, port)
            }
            if !process.isRunning { break }
        }
        process.terminate()
        throw WebDriver.Failure(description: "\(executable.lastPathComponent) did not start (see \(log.path))")
    }

    /// Ends chromedriver, which may block SIGTERM: `GET /shutdown`, up to 2 s to exit, then SIGKILL.
    func stopChromedriver(_ process: Process, port: Int) async {
        if process.isRunning {
            let request = HTTPClientRequest(url: "http://127.0.0.1:\(port)/shutdown")
            _ = try? await HTTPClient.shared.execute(request, timeout: .seconds(2))
        }
        for _ in 0..<40 where process.isRunning { try? await Task.sleep(for: .milliseconds(50)) }
        killChromedriver(process)
    }

    func killChromedriver(_ process: Process) {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// The first executable of `names` on the usual paths.
    func findExecutable(_ names: [String]) -> URL? {
        let dirs =
            (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map(String.init)
            + ["/usr/bin", "/usr/local/bin", "/usr/lib/chromium"]
        for name in names {
            for dir in dirs where FileManager.default.isExecutableFile(atPath: dir + "/" + name) {
                return URL(fileURLWithPath: dir + "/" + name)
            }
        }
        return nil
    }

    @Suite("routekit serve's web view in headless Chromium (WebDriver)", .serialized)
    struct WebBrowserTests {
        @Test(
            "the page lists the sample workouts, draws a route, shows an upload within 2 s and a replaced route in place, and reconnects after a restart, all without a reload"
        )
        func webView() async throws {
            guard let binary = routekitBinary else {
                Issue.record("the routekit executable is not next to the test bundle; build with --build-tests")
                return
            }
            guard let chromium = findExecutable(["chromium", "chromium-browser", "google-chrome"]),
                let chromedriver = findExecutable(["chromedriver"])
            else {
                let message = "chromium or chromedriver is missing (apt-get install chromium chromium-driver)"
                if ProcessInfo.processInfo.environment["CI"] != nil {
                    Issue.record("\(message); CI is set, so the browser test must run")
                } else {
                    print("WebBrowserTests skipped: \(message)")
                }
                return
            }
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("routekit-web-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let store = folder.appendingPathComponent("store.sqlite").path
            let samples = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent().appendingPathComponent("sample-routes")
            let imported = try runChildProcess(binary, ["import", "--no-progress", "--store", store, samples.path])
            #expect(imported.status == 0, "\(imported.errorOutput)")
            func token(_ scope: String) throws -> String {
                try runChildProcess(
                    binary, ["tokens", "create", "--store", store, "--source", "web-test", "--scope", scope]
                ).output.trimmingCharacters(in: .whitespacesAndNewlines)
            }
            let reader = try token("read")
            let writer = try token("read,write")
            #expect(reader.hasPrefix("rk_") && writer.hasPrefix("rk_"))

            let serveLog = folder.appendingPathComponent("serve.log")
            var (serve, port) = try await startServe(binary, store: store, log: serveLog)
            defer { if serve.isRunning { serve.terminate() } }
            let (driverProcess, driverPort) = try await startChild(
                chromedriver, ["--port=0"], log: folder.appendingPathComponent("chromedriver.log"),
                marker: "started successfully on port ")
            defer { killChromedriver(driverProcess) }  // when the test ends before stopChromedriver below

            var driver = WebDriver(base: "http://127.0.0.1:\(driverPort)")
            let capabilities: [String: Any] = [
                "browserName": "chrome", "goog:loggingPrefs": ["browser": "ALL"],
                "goog:chromeOptions": [
                    "binary": chromium.path,
                    "args": ["--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1280,900"],
                ],
            ]
            let created = try await driver.call(.POST, "/session", ["capabilities": ["alwaysMatch": capabilities]])
            driver.session = try #require((created as? [String: Any])?["sessionId"] as? String)
            do {
                try await exercise(driver, origin: "http://127.0.0.1:\(port)", reader: reader, writer: writer, folder: folder)

                // The server restarts on the same port; meanwhile a route is imported into the store. The page
                // reconnects (a new ticket, from its anchor) and catches up without a reload.
                serve.terminate()
                for _ in 0..<200 where serve.isRunning { try await Task.sleep(for: .milliseconds(50)) }
                let away = folder.appendingPathComponent("away.gpx")
                try gpx(name: "Imported while away", points: 30, hour: 9, lat: 38.71).write(
                    to: away, atomically: true, encoding: .utf8)
                let again = try runChildProcess(binary, ["import", "--no-progress", "--store", store, away.path])
                #expect(again.status == 0, "\(again.errorOutput)")
                (serve, _) = try await startServe(
                    binary, store: store, log: folder.appendingPathComponent("serve-2.log"), port: port)
                let names = try await driver.poll(
                    "return [...document.querySelectorAll('#workouts li[data-workout] .name')].map(e => e.textContent)",
                    seconds: 20
                ) { ($0 as? [String])?.first == "Imported while away" }
                #expect((names as? [String])?.first == "Imported while away", "\(names ?? "nil")")
                #expect((names as? [String])?.count == 7)
                let live = try await driver.poll("return document.getElementById('live').textContent", seconds: 10) {
                    $0 as? String == "Live"
                }
                #expect(live as? String == "Live")
                #expect(try await driver.script("return window.routekitNoReload === true") as? Bool == true)
            } catch {
                _ = try? await driver.call(.DELETE, "/session/\(driver.session)")
                await stopChromedriver(driverProcess, port: driverPort)
                throw error
            }
            _ = try await driver.call(.DELETE, "/session/\(driver.session)")
            await stopChromedriver(driverProcess, port: driverPort)

            // The token never reached a URL the server logged.
            let log = (try? String(contentsOf: serveLog, encoding: .utf8)) ?? ""
            #expect(!log.contains(reader) && !log.contains(String(reader.suffix(43))))
        }

        @Test(
            "over a tile server the test starts: tiles, attribution, pan and zoom, profiles with tick labels; at 390 × 844 nothing overflows and a tap shows the route"
        )
        func basemapAndPhone() async throws {
            guard let binary = routekitBinary else {
                Issue.record("the routekit executable is not next to the test bundle; build with --build-tests")
                return
            }
            let leaflet = "/usr/share/javascript/leaflet/leaflet.js"
            guard let chromium = findExecutable(["chromium", "chromium-browser", "google-chrome"]),
                let chromedriver = findExecutable(["chromedriver"]), FileManager.default.fileExists(atPath: leaflet)
            else {
                let message =
                    "chromium, chromedriver or Leaflet is missing (apt-get install chromium chromium-driver libjs-leaflet)"
                if ProcessInfo.processInfo.environment["CI"] != nil {
                    Issue.record("\(message); CI is set, so the browser test must run")
                } else {
                    print("WebBrowserTests.basemapAndPhone skipped: \(message)")
                }
                return
            }
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("routekit-map-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let store = folder.appendingPathComponent("store.sqlite").path
            let samples = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent().appendingPathComponent("sample-routes")
            let imported = try runChildProcess(binary, ["import", "--no-progress", "--store", store, samples.path])
            #expect(imported.status == 0, "\(imported.errorOutput)")
            let reader = try runChildProcess(
                binary, ["tokens", "create", "--store", store, "--source", "map-test", "--scope", "read"]
            ).output.trimmingCharacters(in: .whitespacesAndNewlines)
            let tileServer = TestTileServer()
            try await tileServer.application().test(.live) { upstream in
                let upstreamPort = try #require(upstream.port)
                let (serve, port) = try await startServe(
                    binary, store: store, log: folder.appendingPathComponent("serve.log"),
                    extra: [
                        "--tiles", "http://127.0.0.1:\(upstreamPort)/t/{z}/{x}/{y}.png", "--tiles-attribution",
                        "© Test Tiles", "--tiles-cache", folder.appendingPathComponent("tiles").path,
                    ])
                defer { if serve.isRunning { serve.terminate() } }
                let (driverProcess, driverPort) = try await startChild(
                    chromedriver, ["--port=0"], log: folder.appendingPathComponent("chromedriver.log"),
                    marker: "started successfully on port ")
                defer { killChromedriver(driverProcess) }
                let origin = "http://127.0.0.1:\(port)"
                for phone in [false, true] {
                    var driver = WebDriver(base: "http://127.0.0.1:\(driverPort)")
                    var options: [String: Any] = [
                        "binary": chromium.path,
                        "args": ["--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1280,900"],
                    ]
                    if phone {
                        options["mobileEmulation"] = ["deviceMetrics": ["width": 390, "height": 844, "pixelRatio": 3]]
                    }
                    let capabilities: [String: Any] = [
                        "browserName": "chrome", "goog:loggingPrefs": ["browser": "ALL"], "goog:chromeOptions": options,
                    ]
                    let created = try await driver.call(
                        .POST, "/session", ["capabilities": ["alwaysMatch": capabilities]])
                    driver.session = try #require((created as? [String: Any])?["sessionId"] as? String)
                    do {
                        if phone {
                            try await phoneLayout(driver, origin: origin, reader: reader, folder: folder)
                        } else {
                            try await slippyMap(driver, origin: origin, reader: reader, folder: folder)
                        }
                    } catch {
                        _ = try? await driver.call(.DELETE, "/session/\(driver.session)")
                        throw error
                    }
                    _ = try await driver.call(.DELETE, "/session/\(driver.session)")
                }
                await stopChromedriver(driverProcess, port: driverPort)
                let counts = tileServer.counts.withLock { $0 }
                #expect(counts.tiles > 0, "the server fetched tiles from the tile server")
                #expect(counts.userAgents.allSatisfy { $0.hasPrefix("RouteKit/") }, "\(counts.userAgents)")
            }
        }

        /// Connects with `reader` and waits for the three sample workouts.
        func connect(_ driver: WebDriver, origin: String, reader: String) async throws {
            try await driver.navigate(origin + "/")
            try await driver.type("#token", reader)
            try await driver.click("#token-form button[type=submit]")
            let names = try await driver.poll(
                "return document.querySelectorAll('#workouts li[data-workout]').length", seconds: 10
            ) { ($0 as? Int) == 3 }
            #expect(names as? Int == 3)
        }

        /// Saves a screenshot (CI keeps them, `ROUTEKIT_SCREENSHOT_DIR`).
        func screenshot(_ driver: WebDriver, _ name: String, folder: URL) async throws {
            let shot = try await driver.call(.GET, driver.session("/screenshot")) as? String ?? ""
            let png = try #require(Data(base64Encoded: shot))
            let dir =
                ProcessInfo.processInfo.environment["ROUTEKIT_SCREENSHOT_DIR"].map { URL(fileURLWithPath: $0) } ?? folder
            try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
            try png.write(to: dir.appendingPathComponent(name))
        }

        /// The slippy map at 1280 × 900: tiles from /tiles/ drawn, the attribution shown, zoom and pan, axes.
        func slippyMap(_ driver: WebDriver, origin: String, reader: String, folder: URL) async throws {
            try await connect(driver, origin: origin, reader: reader)
            _ = try await driver.script(
                "[...document.querySelectorAll('#workouts li[data-workout]')]"
                    + ".find(li => li.querySelector('.name').textContent.startsWith('Morning run')).querySelector('button').click()"
            )
            let tilesScript =
                "return [...document.querySelectorAll('#slippy img.leaflet-tile')]"
                + ".filter(i => i.complete && i.naturalWidth > 0 && new URL(i.src).pathname.startsWith('/tiles/'))"
                + ".map(i => Number(new URL(i.src).pathname.split('/')[2]))"
            let loaded = try await driver.poll(tilesScript, seconds: 15) { !(($0 as? [Int]) ?? []).isEmpty }
            let zooms = loaded as? [Int] ?? []
            #expect(!zooms.isEmpty, "no tile from /tiles/ was drawn")
            let attribution =
                try await driver.script(
                    "const a = document.querySelector('#slippy .leaflet-control-attribution');"
                        + " return a && a.getBoundingClientRect().width > 0 ? a.textContent : ''") as? String
            #expect(attribution?.contains("© Test Tiles") == true, "\(attribution ?? "nil")")
            let plain = try await driver.script(
                "return [document.getElementById('map-note').hidden, document.getElementById('map').hasAttribute('hidden')]")
            #expect(plain as? [Bool] == [true, true], "the plain map and its note are hidden")
            let route =
                try await driver.script(
                    "return document.querySelectorAll('#slippy .leaflet-overlay-pane canvas,"
                        + " #slippy .leaflet-overlay-pane path').length") as? Int
            #expect((route ?? 0) > 0, "the route is drawn over the tiles")

            // Zoom in: tiles of the next level are drawn.
            let before = zooms.max() ?? 0
            try await driver.click("#slippy .leaflet-control-zoom-in")
            let zoomed = try await driver.poll(tilesScript, seconds: 10) { (($0 as? [Int]) ?? []).contains(before + 1) }
            let deeper = (zoomed as? [Int] ?? []).contains(before + 1)
            #expect(deeper, "after zooming in: \(zoomed ?? "nil")")
            // Pan: a drag moves the map.
            let paneScript = "return document.querySelector('#slippy .leaflet-map-pane').style.transform"
            let start = try await driver.script(paneScript) as? String ?? ""
            try await driver.drag("#slippy", dx: 140, dy: 60)
            let moved = try await driver.poll(paneScript, seconds: 5) { ($0 as? String ?? start) != start }
            let panned = moved as? String ?? start
            #expect(panned != start, "the map did not pan: \(start)")

            // Profiles with axes: tick labels on both axes, in km, then in h:mm against time.
            let ticks = try await driver.script(
                "return ['elevation', 'speed'].map(id => ['x', 'y'].map(a =>"
                    + " [...document.querySelectorAll('#' + id + ' .tick.' + a + ' text')].filter(t => t.textContent).length))")
            let counts = ticks as? [[Int]] ?? []
            let labelled = counts.count == 2 && counts.allSatisfy { $0.count == 2 && $0.allSatisfy { $0 >= 2 } }
            #expect(labelled, "tick labels of elevation and speed, x and y: \(counts)")
            let units =
                try await driver.script(
                    "return [...document.querySelectorAll('#elevation .unit')].map(t => t.textContent)") as? [String]
            #expect(units == ["m", "km"], "\(units ?? [])")
            try await driver.click("#x-axis input[value=time]")
            let clock = try await driver.poll(
                "return [...document.querySelectorAll('#elevation .tick.x text')].map(t => t.textContent)", seconds: 5
            ) { ($0 as? [String])?.first == "0:00" }
            #expect((clock as? [String])?.first == "0:00", "\(clock ?? "nil")")
            let caption =
                try await driver.script(
                    "return document.querySelector('#elevation-figure figcaption').textContent") as? String
            #expect(caption?.hasPrefix("Elevation against time") == true, "\(caption ?? "")")

            if let log = try? await driver.call(.POST, driver.session("/se/log"), ["type": "browser"]) as? [[String: Any]] {
                let severe = log.filter { $0["level"] as? String == "SEVERE" }.map { $0["message"] as? String ?? "" }
                #expect(severe.isEmpty, "\(severe)")
            }
            try await screenshot(driver, "web-view-basemap.png", folder: folder)
        }

        /// The page at 390 × 844 (a phone): no horizontal overflow, a tap on a workout scrolls to its map, text
        /// stays readable.
        func phoneLayout(_ driver: WebDriver, origin: String, reader: String, folder: URL) async throws {
            try await connect(driver, origin: origin, reader: reader)
            let widthScript = "return [document.documentElement.scrollWidth, window.innerWidth]"
            let widths = scriptNumbers(try await driver.script(widthScript))
            #expect(widths.last == 390, "\(widths)")
            let fits = widths.count == 2 && widths[0] <= 390
            #expect(fits, "the page is wider than the phone: \(widths)")
            let header = scriptNumbers(
                try await driver.script(
                    "return [...document.querySelectorAll('header button:not([hidden]), header input')]"
                        + ".map(e => e.getBoundingClientRect().right)"))
            let onScreen = !header.isEmpty && header.allSatisfy { $0 <= 390 }
            #expect(onScreen, "the header's controls stay on screen: \(header)")
            try await driver.click("#workouts li[data-workout] button")
            let shown = try await driver.poll(
                "const f = document.getElementById('map-figure'); const r = f.getBoundingClientRect();"
                    + " return !f.hidden && window.scrollY > 0 && r.top < window.innerHeight && r.bottom > 0", seconds: 15
            ) { $0 as? Bool == true }
            #expect(shown as? Bool == true, "a tap on a workout scrolls to its map")
            _ = try await driver.poll(
                "return document.querySelectorAll('#elevation .tick text').length", seconds: 5
            ) { ($0 as? Int ?? 0) > 0 }
            let after = scriptNumbers(try await driver.script(widthScript))
            let stillFits = after.count == 2 && after[0] <= 390
            #expect(stillFits, "with the route shown: \(after)")
            let sizes = scriptNumbers(
                try await driver.script(
                    "return ['.workouts .facts', '#elevation .tick text', '.slippy .leaflet-control-attribution']"
                        + ".map(s => document.querySelector(s)).filter(e => e)"
                        + ".map(e => parseFloat(getComputedStyle(e).fontSize))"))
            let readable = sizes.count == 3 && sizes.allSatisfy { $0 >= 11 }
            #expect(readable, "font sizes: \(sizes)")
            try await screenshot(driver, "web-view-phone.png", folder: folder)
        }

        /// The steps in the browser, once the session is open.
        func exercise(_ driver: WebDriver, origin: String, reader: String, writer: String, folder: URL) async throws {
            try await driver.navigate(origin + "/")
            try await driver.type("#token", reader)
            try await driver.click("#token-form button[type=submit]")

            // The three sample workouts, newest saved first.
            let names = try await driver.poll(
                "return [...document.querySelectorAll('#workouts li[data-workout] .name')].map(e => e.textContent)",
                seconds: 10
            ) { ($0 as? [String])?.count == 3 }
            let listed = names as? [String] ?? []
            let expected = ["Evening walk", "Lunch ride", "Morning run"]
            #expect(
                listed.sorted().enumerated().allSatisfy { $0.element.hasPrefix(expected[$0.offset]) }
                    && listed.count == 3,
                "\(listed)")
            #expect(try await driver.script("return location.href") as? String == origin + "/")

            // Open the morning run: its 2,700 points drawn as one polyline.
            _ = try await driver.script(
                "[...document.querySelectorAll('#workouts li[data-workout]')]"
                    + ".find(li => li.querySelector('.name').textContent.startsWith('Morning run')).querySelector('button').click()"
            )
            let vertices = try await driver.poll(
                "const p = document.querySelector('#map polyline.path');"
                    + " return p ? p.getAttribute('points').trim().split(/\\s+/).length : 0",
                seconds: 10
            ) { ($0 as? Int ?? 0) > 0 }
            let count = vertices as? Int ?? 0
            #expect(count >= 1000 && count <= 2700, "vertices drawn: \(count)")
            // The profiles are drawn after the map, a task each.
            let profiles = try await driver.poll(
                "return ['elevation', 'speed'].map(id => document.querySelector('#' + id + ' polyline.line') !== null)",
                seconds: 5
            ) { ($0 as? [Bool]) == [true, true] }
            #expect(profiles as? [Bool] == [true, true])
            // Heart rate from /v1/workouts/ID/series/heartRate, placed along the route by time.
            let heartVertices = try await driver.poll(
                "const p = document.querySelector('#heart-rate polyline.line');"
                    + " return p && !document.getElementById('heart-rate-figure').hidden"
                    + " ? p.getAttribute('points').trim().split(/\\s+/).length : 0",
                seconds: 10
            ) { ($0 as? Int ?? 0) > 0 }
            #expect((heartVertices as? Int ?? 0) >= 100, "heart-rate vertices: \(heartVertices ?? "none")")
            let note = try await driver.script("return document.getElementById('heart-rate-note').hidden") as? Bool
            #expect(note == true)
            let summary = try await driver.script("return document.getElementById('summary').textContent") as? String
            #expect(summary?.contains("km") == true, "\(summary ?? "")")

            // An upload through the API appears in the list within 2 s, without a reload.
            _ = try await driver.script("window.routekitNoReload = true")
            var upload = HTTPClientRequest(url: origin + "/v1/uploads?name=live.gpx")
            upload.method = .POST
            upload.headers.add(name: "Authorization", value: "Bearer \(writer)")
            upload.body = .bytes(ByteBuffer(string: gpx(name: "Live upload", points: 40, lat: 38.7)))
            let uploaded = try await HTTPClient.shared.execute(upload, timeout: .seconds(30))
            #expect(uploaded.status == .created)
            let appeared = try await driver.poll(
                "return [...document.querySelectorAll('#workouts li[data-workout] .name')].map(e => e.textContent)",
                seconds: 2
            ) { ($0 as? [String])?.first == "Live upload" }
            #expect((appeared as? [String])?.first == "Live upload", "\(appeared ?? "nil")")
            #expect((appeared as? [String])?.count == 4)
            #expect(try await driver.script("return window.routekitNoReload === true") as? Bool == true)
            let live = try await driver.script("return document.getElementById('live').textContent") as? String
            #expect(live == "Live")
            let errorShown = try await driver.script("return document.getElementById('error').textContent") as? String
            #expect(errorShown == "", "the page shows an error: \(errorShown ?? "nil")")

            // A route replaced by a higher version (the route builder) swaps in place, also in the open detail.
            func post(_ path: String, _ body: String) async throws -> [String: Any] {
                var r = HTTPClientRequest(url: origin + path)
                r.method = .POST
                r.headers.add(name: "Authorization", value: "Bearer \(writer)")
                r.body = .bytes(ByteBuffer(string: body))
                let response = try await HTTPClient.shared.execute(r, timeout: .seconds(30))
                let bytes = try await response.body.collect(upTo: 1 << 20)
                #expect(response.status.code < 300, "\(path): \(String(buffer: bytes))")
                return (try? JSONSerialization.jsonObject(with: Data(bytes.readableBytesView)) as? [String: Any]) ?? [:]
            }
            func build(_ name: String, version: Int, points: Int) async throws {
                let id = try #require(try await post("/v1/builders", "")["id"] as? String)
                _ = try await post(
                    "/v1/builders/\(id)/locations?first=0", locationsJSON(from: 0, count: points, latitude: nil))
                _ = try await post(
                    "/v1/builders/\(id)/finish",
                    #"{"activity": "cycling", "name": "\#(name)", "syncIdentifier": "swap", "syncVersion": \#(version)}"#)
            }
            let listScript =
                "return [...document.querySelectorAll('#workouts li[data-workout]')]"
                + ".map(li => li.querySelector('.name').textContent + ' ' + li.dataset.locations)"
            try await build("Swap", version: 1, points: 60)
            let built = try await driver.poll(listScript, seconds: 2) { ($0 as? [String])?.first == "Swap 60" }
            #expect((built as? [String])?.first == "Swap 60", "\(built ?? "nil")")
            _ = try await post("/v1/uploads?name=after.gpx", gpx(name: "After swap", points: 20, hour: 7, lat: 38.72))
            let before = try await driver.poll(listScript, seconds: 2) { ($0 as? [String])?.first == "After swap 20" }
            #expect((before as? [String])?.prefix(3) == ["After swap 20", "Swap 60", "Live upload 40"], "\(before ?? "nil")")
            _ = try await driver.script(
                "[...document.querySelectorAll('#workouts li[data-workout]')]"
                    + ".find(li => li.querySelector('.name').textContent === 'Swap').querySelector('button').click()")
            let caption = "return document.getElementById('map-figure').hidden ? '' : document.getElementById('map-caption').textContent"
            let first = try await driver.poll(caption, seconds: 5) { ($0 as? String)?.hasPrefix("60 points") == true }
            #expect((first as? String)?.hasPrefix("60 points") == true, "\(first ?? "nil")")
            try await build("Swap", version: 2, points: 90)
            let swapped = try await driver.poll(listScript, seconds: 2) { ($0 as? [String])?.dropFirst().first == "Swap 90" }
            #expect((swapped as? [String])?.prefix(3) == ["After swap 20", "Swap 90", "Live upload 40"], "\(swapped ?? "nil")")
            #expect((swapped as? [String])?.count == 6)
            let redrawn = try await driver.poll(caption, seconds: 5) { ($0 as? String)?.hasPrefix("90 points") == true }
            #expect((redrawn as? String)?.hasPrefix("90 points") == true, "\(redrawn ?? "nil")")

            // Nothing went wrong in the page: no script error, no request blocked by the CSP, no failed load
            // (chromedriver's log endpoint; not W3C, so only when it answers).
            if let log = try? await driver.call(.POST, driver.session("/se/log"), ["type": "browser"]) as? [[String: Any]] {
                let severe = log.filter { $0["level"] as? String == "SEVERE" }.map { $0["message"] as? String ?? "" }
                #expect(severe.isEmpty, "\(severe)")
            }

            // The screenshot, for people and CI artifacts.
            let shot = try await driver.call(.GET, driver.session("/screenshot")) as? String ?? ""
            let png = try #require(Data(base64Encoded: shot))
            #expect(png.starts(with: [0x89, 0x50, 0x4E, 0x47]))
            let dir =
                ProcessInfo.processInfo.environment["ROUTEKIT_SCREENSHOT_DIR"].map {
                    URL(fileURLWithPath: $0)
                } ?? folder
            try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
            let file = dir.appendingPathComponent("web-view.png")
            try png.write(to: file)
            print("WebBrowserTests: screenshot saved to \(file.path)")
        }
    }
#endif
