#!/usr/bin/env python3
"""The OpenAPI document as a generated client sees it (scripts/openapi-client-check.sh runs this).

    openapi-client-check.py operations SPEC CLIENT_DIR
        Every operation of SPEC (its operationId) has a module in the client openapi-python-client generated into
        CLIENT_DIR (api/<tag>/<operation_id>.py with sync_detailed): an operation the generator skipped fails.

    openapi-client-check.py live CLIENT_PARENT PACKAGE BASE_URL TOKEN GPX
        The generated client (CLIENT_PARENT/PACKAGE) against a running `routekit serve` on an empty store: upload GPX,
        list workouts and routes, read the workout's stats, export the route in every format, read its locations as
        NDJSON, and read the change feed with an anchor. Each step checks what the document promises.

Exits 1 on the first failed check, with what failed.
"""
import importlib
import json
import re
import sys
from pathlib import Path


def fail(message):
    print(f"openapi-client-check: FAILED: {message}", file=sys.stderr)
    sys.exit(1)


def check(condition, message):
    if not condition:
        fail(message)


def snake_case(name):
    """An operationId as openapi-python-client names its module: healthHead -> health_head, openAPI -> open_api."""
    name = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", name)
    name = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name)
    return name.lower()


def operations(spec_path, client_dir):
    import yaml

    spec = yaml.safe_load(Path(spec_path).read_text(encoding="utf-8"))
    methods = {"get", "put", "post", "delete", "options", "head", "patch", "trace"}
    wanted = {}
    for path, item in spec.get("paths", {}).items():
        for method, operation in item.items():
            if method not in methods:
                continue
            operation_id = operation.get("operationId")
            check(operation_id, f"{method.upper()} {path} has no operationId")
            wanted[snake_case(operation_id)] = f"{method.upper()} {path} ({operation_id})"
    generated = {}
    for module in Path(client_dir, "api").glob("*/*.py"):
        if module.name != "__init__.py":
            generated[module.stem] = module
    missing = sorted(f"{wanted[name]} -> {name}.py" for name in wanted if name not in generated)
    check(not missing, "operations the generator left out:\n  " + "\n  ".join(missing))
    for name in wanted:
        text = generated[name].read_text(encoding="utf-8")
        check("def sync_detailed(" in text, f"{generated[name]} has no sync_detailed")
    extra = sorted(name for name in generated if name not in wanted)
    check(not extra, f"modules for no operation of the document: {extra}")
    print(f"openapi-client-check: all {len(wanted)} operations of the document were generated")


def live(parent, package, base_url, token, gpx_path):
    sys.path.insert(0, parent)
    client_module = importlib.import_module(package)
    types = importlib.import_module(f"{package}.types")

    def api(name):
        return importlib.import_module(f"{package}.api.{name}")

    def parsed(response, what, status=200):
        """The typed answer of a generated call's `sync_detailed`, once its status is the one expected."""
        check(response.status_code == status, f"{what}: status {response.status_code}, not {status}")
        check(response.parsed is not None, f"{what}: the generated client could not read the answer")
        return response.parsed

    # Statuses are checked here, step by step: an answer the generator could not type (NDJSON) is not an error.
    anonymous = client_module.Client(base_url=base_url)
    client = client_module.AuthenticatedClient(base_url=base_url, token=token)

    health = api("health.health").sync_detailed(client=anonymous)
    check(health.status_code == 200, f"GET /healthz: {health.status_code}")

    # The change feed of the empty store: nothing yet, and an anchor to come back with.
    changes = api("feed.changes")
    first = parsed(changes.sync_detailed(client=client), "GET /v1/changes")
    check(first.added == [], f"an empty store's first change set adds nothing: {first.added}")

    # Upload a GPX file, as bytes (the format is told by content).
    name = Path(gpx_path).name
    payload = Path(gpx_path).read_bytes()
    upload = api("upload.upload").sync_detailed(
        client=client, body=types.File(payload=payload, file_name=name), name=name
    )
    results = parsed(upload, "POST /v1/uploads", status=201).results
    check(len(results) == 1 and str(results[0].status) == "imported", f"the upload's results: {results}")
    check(len(results[0].routes) == 1, f"one route imported: {results[0].routes}")

    # Workouts and routes.
    workouts = parsed(api("read.workouts").sync_detailed(client=client), "GET /v1/workouts")
    check(len(workouts.workouts) == 1, f"GET /v1/workouts: {workouts.workouts}")
    workout = workouts.workouts[0]
    routes = parsed(api("read.routes").sync_detailed(client=client), "GET /v1/routes")
    check(len(routes.routes) == 1, f"GET /v1/routes: {routes.routes}")
    route = routes.routes[0]
    check(route.workout == workout.uuid, "the route is the workout's")
    check(route.locations > 0, "the route has locations")
    one = parsed(api("read.workout").sync_detailed(workout.uuid, client=client), "GET /v1/workouts/ID")
    check(one.workout.uuid == workout.uuid, f"GET /v1/workouts/ID: {one!r}")
    check([r.uuid for r in one.routes] == [route.uuid], f"GET /v1/workouts/ID: its routes {one.routes}")
    same = parsed(api("read.route").sync_detailed(route.uuid, client=client), "GET /v1/routes/ID")
    check(same.uuid == route.uuid, "GET /v1/routes/ID: another route")

    # The workout's statistics.
    stats = parsed(api("read.workout_stats").sync_detailed(workout.uuid, client=client), "GET /v1/workouts/ID/stats")
    check(stats.workout == workout.uuid, f"GET /v1/workouts/ID/stats: {stats!r}")
    check(stats.distance_metres > 0, f"a distance: {stats.distance_metres}")

    # The route in every export format. The generated request (path, query), sent as it is: the generator parses
    # only the JSON one of the answer's content types, and these are GPX, GeoJSON and CSV.
    export = api("read.route_export")
    formats = importlib.import_module(f"{package}.models.route_export_format").RouteExportFormat
    expected = {
        "gpx": ("application/gpx+xml", lambda body: body.startswith(b"<?xml") and b"<trkpt " in body),
        "geojson": ("application/geo+json", lambda body: json.loads(body)["type"] == "FeatureCollection"),
        "csv": ("text/csv", lambda body: body.count(b"\n") == route.locations + 1),
    }
    http = client.get_httpx_client()
    for export_format in formats:
        content_type, looks_right = expected[str(export_format)]
        response = http.request(**export._get_kwargs(route.uuid, format_=export_format))
        check(response.status_code == 200, f"export {export_format}: {response.status_code}")
        got = response.headers.get("content-type", "")
        check(got.startswith(content_type), f"export {export_format}: Content-Type {got}, not {content_type}")
        # Said without the body: it holds coordinates.
        check(looks_right(response.content), f"export {export_format}: not what the format looks like")
    # GeoJSON also through the generated parser.
    parsed(export.sync_detailed(route.uuid, client=client, format_=formats.GEOJSON), "export geojson, typed")

    # Locations as NDJSON: one object a line, every location.
    locations = api("read.route_locations").sync_detailed(route.uuid, client=client)
    check(locations.status_code == 200, f"GET /v1/routes/ID/locations: {locations.status_code}")
    got = locations.headers.get("content-type", "")
    check(got.startswith("application/x-ndjson"), f"locations: Content-Type {got}")
    lines = [line for line in locations.content.split(b"\n") if line]
    objects = [json.loads(line) for line in lines]
    check(all(isinstance(o, dict) for o in objects), "every NDJSON line is an object")
    check(len(objects) == route.locations, f"{len(objects)} NDJSON lines for {route.locations} locations")

    # The change feed from the first anchor: the uploaded route; from the anchor it gives, nothing more.
    since = parsed(changes.sync_detailed(client=client, anchor=first.anchor), "GET /v1/changes?anchor=")
    check([r.uuid for r in since.added] == [route.uuid], f"changes since the first anchor: {since.added}")
    after = parsed(changes.sync_detailed(client=client, anchor=since.anchor), "GET /v1/changes?anchor=")
    check(after.added == [] and after.deleted == [], f"changes since the latest anchor: {after!r}")

    print(
        "openapi-client-check: the generated client uploaded, listed, read stats, exported "
        f"{', '.join(str(f) for f in formats)}, read {len(objects)} NDJSON locations and the change feed"
    )


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "operations":
        operations(sys.argv[2], sys.argv[3])
    elif len(sys.argv) == 7 and sys.argv[1] == "live":
        live(*sys.argv[2:])
    else:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
