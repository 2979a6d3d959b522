#!/usr/bin/env bash
# Builds the fuzz targets with libFuzzer and AddressSanitizer and fuzzes the streaming GPX reader (FuzzGPXReader)
# or, with FUZZ_TARGET, the FIT decoder (FuzzFITDecoder), the zip reader (FuzzZipReader), the Apple Health scanner
# (FuzzHealthScanner) or the TCX reader (FuzzTCXDocument).
#
#   FuzzTesting/run.sh [SECONDS]          fuzz for SECONDS (default 180)
#   FuzzTesting/run.sh --regress          only replay the target's fail cases (FailCases/*, FailCases/fit-* for FIT)
#   FuzzTesting/run.sh --smoke SECONDS    build once, then fuzz every target for SECONDS each (CI runs this)
#   FuzzTesting/run.sh --build            only build the fuzz targets (without the lock; CI builds them beside other work)
#   FUZZ_TARGET=FuzzFITDecoder FuzzTesting/run.sh 300
#
# Environment:
#   FUZZ_TARGET  FuzzGPXReader (default), FuzzFITDecoder, FuzzZipReader, FuzzHealthScanner or FuzzTCXDocument.
#   GPX_CORPUS   the shared GPX corpus to seed from (default: <repo>/../shared/gpx-corpus); it is only
#                read, and copied into a temporary directory, never into the repository.
#   FORMAT_CORPUS  the shared format corpus the FIT target seeds from (default: <repo>/../shared/format-corpus).
#   FUZZ_CORPUS  a directory to keep the evolving corpus in between runs (default: a temporary directory,
#                deleted at the end). Keep it outside the repository.
#   FUZZ_GPX_MIN_CHUNK  smallest chunk size the target tries (default 1); raise it to fuzz past a bug that only
#                small chunks reach while it is being fixed.
#   ROUTEKIT_BUILD_LOCK  the lock every swift command takes (default /tmp/routekit-build.lock).
#
# Crash, timeout, out-of-memory and leak inputs are written to FuzzTesting/FailCases/ (libFuzzer's
# -artifact_prefix) as crash-<sha1>, timeout-<sha1>…; those names are git-ignored until renamed (see README.md).
set -euo pipefail
# The Swift runtime's backtracer reads the crashed stack, which AddressSanitizer reports as a stack-buffer-underflow
# of its own that hides the real message: a fuzz crash prints the fatal error alone.
export SWIFT_BACKTRACE=enable=no

HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/.." && pwd)
LOCK=${ROUTEKIT_BUILD_LOCK:-/tmp/routekit-build.lock}
GPX_CORPUS=${GPX_CORPUS:-$REPO/../shared/gpx-corpus}
TARGET=${FUZZ_TARGET:-FuzzGPXReader}
ALL_TARGETS="FuzzGPXReader FuzzFITDecoder FuzzZipReader FuzzHealthScanner FuzzTCXDocument"
case " $ALL_TARGETS " in *" $TARGET "*) ;; *) echo "FUZZ_TARGET: one of $ALL_TARGETS" >&2; exit 2 ;; esac
if [ "${1:-}" = --build ]; then
  # The fuzz targets' build alone, without the lock (CI builds it beside the other suites, see .ci/run): the same
  # command as below.
  cd "$HERE"
  exec swift build -c debug -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library
fi
if [ "${1:-}" = --smoke ]; then
  # Every target one after the other (the build is shared and done once), each for a fixed number of inputs from
  # a fixed seed, about SECONDS each on this project's 2-core machines: the same inputs on every run, so CI fails
  # only on what a change breaks, never on what a lucky run happens to find (fuzz for longer with SECONDS alone).
  seconds=${2:-20}
  case "$seconds" in ''|*[!0-9]*) echo "usage: $0 --smoke SECONDS" >&2; exit 2 ;; esac
  for t in $ALL_TARGETS; do
    case "$t" in
      FuzzGPXReader) per_second=300 ;;
      FuzzFITDecoder) per_second=40 ;;
      FuzzZipReader) per_second=6000 ;;
      FuzzHealthScanner) per_second=400 ;;
      *) per_second=400 ;;
    esac
    FUZZ_TARGET=$t FUZZ_SKIP_BUILD=${FUZZ_SKIP_BUILD:-} FUZZ_RUNS=$((per_second * seconds)) FUZZ_SEED=1 "$0" "$seconds"
    FUZZ_SKIP_BUILD=1
  done
  exit 0
fi
# A fixed number of inputs from a fixed seed (--smoke), or a time limit.
if [ -n "${FUZZ_RUNS:-}" ]; then
  LIMIT="-runs=$FUZZ_RUNS -seed=${FUZZ_SEED:-1}"
else
  LIMIT=""
fi
FORMAT_CORPUS=${FORMAT_CORPUS:-$REPO/../shared/format-corpus}
BIN="$HERE/.build/debug/$TARGET"
# Each target's fail cases are kept with its prefix (FailCases/fit-*, zip-*, health-*, tcx-*); the GPX target
# replays the others.
case "$TARGET" in
  FuzzFITDecoder) PREFIX="fit-" ;;
  FuzzZipReader) PREFIX="zip-" ;;
  FuzzHealthScanner) PREFIX="health-" ;;
  FuzzTCXDocument) PREFIX="tcx-" ;;
  *) PREFIX="" ;;
esac

MODE=fuzz
DURATION=180
case "${1:-}" in
  --regress) MODE=regress ;;
  -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
  "") ;;
  *[!0-9]*) echo "usage: $0 [SECONDS] | --regress" >&2; exit 2 ;;
  *) DURATION=$1 ;;
esac

# 1. Build. The build lock keeps this from running alongside any other swift command on the machine.
# -parse-as-library: the target defines its own entry point (FuzzGPXReader_main, which calls libFuzzer).
cd "$HERE"
BUILD_LOG=$(mktemp)
echo "== building the fuzz targets (debug, -sanitize=fuzzer,address)"
if [ -n "${FUZZ_SKIP_BUILD:-}" ]; then
  echo "(built already)"
elif ! flock "$LOCK" swift build -c debug -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library >"$BUILD_LOG" 2>&1; then
  # ld.gold warns once per ASan helper symbol ("Cannot export local symbol"); those are noise.
  grep -v "Cannot export local symbol" "$BUILD_LOG" >&2 || true
  rm -f "$BUILD_LOG"
  echo "build failed" >&2
  exit 1
fi
grep -v "Cannot export local symbol" "$BUILD_LOG" | tail -n 1 || true
rm -f "$BUILD_LOG"

mkdir -p "$HERE/FailCases"

if [ "$MODE" = regress ]; then
  shopt -s nullglob
  cases=()
  for c in "$HERE"/FailCases/*; do
    name=$(basename "$c")
    if [ -n "$PREFIX" ]; then [[ $name == "$PREFIX"* ]] && cases+=("$c")
    else [[ $name == fit-* || $name == zip-* || $name == health-* || $name == tcx-* ]] || cases+=("$c"); fi
  done
  if [ ${#cases[@]} -eq 0 ]; then echo "no fail cases"; exit 0; fi
  echo "== replaying ${#cases[@]} fail case(s)"
  exec "$BIN" -rss_limit_mb=2048 -timeout=10 "${cases[@]}"
fi

# 2. Seed corpus, made at run time outside the repository.
if [ -n "${FUZZ_CORPUS:-}" ]; then
  CORPUS=$FUZZ_CORPUS
  mkdir -p "$CORPUS"
else
  CORPUS=$(mktemp -d -t gpx-fuzz-corpus.XXXXXX)
  trap 'rm -rf "$CORPUS"' EXIT
fi
seeds=0
if [ -n "$PREFIX" ] && [ "$TARGET" != FuzzFITDecoder ]; then
  case "$TARGET" in
    FuzzZipReader) pattern='*.zip'; ext=zip ;;
    FuzzHealthScanner) pattern='*.xml'; ext=xml ;;
    *) pattern='*.tcx'; ext=tcx ;;
  esac
  while IFS= read -r -d '' f; do
    cp "$f" "$CORPUS/seed-$(basename "$f")"
    seeds=$((seeds + 1))
  done < <(find "$FORMAT_CORPUS" -maxdepth 1 -type f -iname "$pattern" -size -256k -print0 2>/dev/null)
  if [ "$TARGET" = FuzzZipReader ]; then
    # Small archives made here: stored and deflated entries, a folder, zip64 records.
    python3 - "$CORPUS" <<'PY'
import io, sys, zipfile
for name, method, z64 in [("stored", zipfile.ZIP_STORED, False), ("deflated", zipfile.ZIP_DEFLATED, False),
                          ("zip64", zipfile.ZIP_DEFLATED, True)]:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", method) as z:
        z.writestr("dir/", b"")
        with z.open("a.gpx", "w", force_zip64=z64) as f:
            f.write(b'<gpx version="1.1" xmlns="http://www.topografix.com/GPX/1/1"><trk><trkseg>'
                    b'<trkpt lat="1" lon="2"/></trkseg></trk></gpx>')
        z.writestr("b.txt", b"x" * 300)
    open(f"{sys.argv[1]}/hand-{name}.zip", "wb").write(buf.getvalue())
PY
    seeds=$((seeds + 3))
  fi
  if [ "$TARGET" = FuzzHealthScanner ]; then
    printf '%s' '<?xml version="1.0"?><!DOCTYPE HealthData [<!ELEMENT HealthData ANY>]><HealthData locale="en"><ExportDate value="2024"/><Record type="HKQuantityTypeIdentifierHeartRate" value="70" startDate="2024-01-01 00:00:00 +0100"/><Workout workoutActivityType="HKWorkoutActivityTypeRunning" duration="1" durationUnit="min"><WorkoutEvent type="HKWorkoutEventTypeSegment" duration="1e300" durationUnit="min"/><MetadataEntry key="k" value="a &amp; b"/></Workout></HealthData>' >"$CORPUS/hand-export.xml"
    seeds=$((seeds + 1))
  fi
  echo "== seed corpus: $seeds $ext file(s) in $CORPUS"
  echo "== fuzzing $TARGET for ${DURATION}s; crash inputs go to $HERE/FailCases/$PREFIX*"
  # FoundationXML leaks a CFString for every XML error it reports (_CFErrorCreateFromXMLInterface, in the toolchain's
  # Foundation, not RouteKit): LeakSanitizer would stop the TCX target at its first malformed input.
  leaks=1; [ "$TARGET" = FuzzTCXDocument ] && leaks=0
  status=0
  ASAN_OPTIONS=detect_leaks=$leaks "$BIN" "$CORPUS" -max_len=65536 -timeout=10 -rss_limit_mb=2048 -max_total_time="$DURATION" $LIMIT -detect_leaks=$leaks \
    -print_final_stats=1 -artifact_prefix="$HERE/FailCases/$PREFIX" || status=$?
  exit $status
fi
if [ "$TARGET" = FuzzFITDecoder ]; then
  while IFS= read -r -d '' f; do
    cp "$f" "$CORPUS/seed-$(basename "$f")"
    seeds=$((seeds + 1))
  done < <(find "$FORMAT_CORPUS" -maxdepth 1 -type f -iname '*.fit' -size -64k -print0 2>/dev/null)
  echo "== seed corpus: $seeds FIT file(s) in $CORPUS"
  echo "== fuzzing $TARGET for ${DURATION}s; crash inputs go to $HERE/FailCases/fit-*"
  status=0
  "$BIN" "$CORPUS" -max_len=65536 -timeout=10 -rss_limit_mb=2048 -max_total_time="$DURATION" $LIMIT \
    -print_final_stats=1 -artifact_prefix="$HERE/FailCases/fit-" || status=$?
  exit $status
fi
for dir in valid quirks malformed; do
  [ -d "$GPX_CORPUS/$dir" ] || continue
  while IFS= read -r -d '' f; do
    cp "$f" "$CORPUS/seed-$dir-$(basename "$f")"
    seeds=$((seeds + 1))
  done < <(find "$GPX_CORPUS/$dir" -type f -size -64k -print0)
done
[ -d "$GPX_CORPUS" ] || echo "note: $GPX_CORPUS not found; seeding from the hand-written snippets only"

snippet() { printf '%s' "$2" >"$CORPUS/hand-$1.gpx"; seeds=$((seeds + 1)); }
snippet minimal '<?xml version="1.0" encoding="UTF-8"?><gpx version="1.1" creator="t" xmlns="http://www.topografix.com/GPX/1/1"/>'
snippet track '<gpx version="1.1" creator="t" xmlns="http://www.topografix.com/GPX/1/1" xmlns:gpxtpx="http://www.garmin.com/xmlschemas/TrackPointExtension/v2"><trk><name>a &amp; b</name><trkseg><trkpt lat="1.5" lon="-2.25"><ele>10</ele><time>2024-03-01T07:30:00Z</time><extensions><gpxtpx:TrackPointExtension><gpxtpx:hr>120</gpxtpx:hr><gpxtpx:cad>80</gpxtpx:cad></gpxtpx:TrackPointExtension></extensions></trkpt><trkpt lat="1.6" lon="-2.2"><time>2024-03-01T07:30:01.5+01:00</time></trkpt></trkseg></trk></gpx>'
snippet route-wpt '<gpx version="1.1" creator="t" xmlns="http://www.topografix.com/GPX/1/1"><metadata><name><![CDATA[x<y]]></name><author><name>n</name><email id="a" domain="b"/></author><link href="h"><text>t</text></link><bounds minlat="0" minlon="0" maxlat="1" maxlon="1"/></metadata><wpt lat="0" lon="0"><name>w</name><sat>4</sat><fix>3d</fix></wpt><rte><name>r</name><rtept lat="1" lon="1"/></rte></gpx>'
snippet gpx10 '<?xml version="1.0" encoding="ISO-8859-1"?><gpx version="1.0" xmlns="http://www.topografix.com/GPX/1/0"><name>caf'$'\xe9''</name><trk><trkseg><trkpt lat="1" lon="2"><speed>3</speed><course>90</course></trkpt></trkseg></trk></gpx>'
snippet pauses '<gpx version="1.1" creator="OpenTracks" xmlns="http://www.topografix.com/GPX/1/1"><trk><trkseg><trkpt lat="1" lon="2"/><trkpt lat="100" lon="0"><time>2024-01-01T00:00:00Z</time></trkpt><trkpt lat="200" lon="0"/><trkpt lat="1" lon="2"/></trkseg></trk></gpx>'
snippet unknown-ext '<!-- c --><?pi x?><gpx version="1.1" creator="t" xmlns="http://www.topografix.com/GPX/1/1"><trk><trkseg><extensions><x:a xmlns:x="urn:x" x:k="v"><x:b>t&#x41;</x:b></x:a></extensions></trkseg></trk><extensions><y xmlns="urn:y"/></extensions></gpx>'
echo "== seed corpus: $seeds file(s) in $CORPUS"

# 3. Fuzz.
echo "== fuzzing for ${DURATION}s; crash inputs go to $HERE/FailCases/"
status=0
"$BIN" "$CORPUS" \
  -dict="$HERE/gpx.dict" \
  -max_len=65536 -timeout=10 -rss_limit_mb=2048 \
  -max_total_time="$DURATION" $LIMIT -print_final_stats=1 \
  -artifact_prefix="$HERE/FailCases/" || status=$?
if [ $status -ne 0 ]; then
  echo "== the fuzzer stopped with status $status: see the report above and the new file(s) in $HERE/FailCases/" >&2
fi
exit $status
