#!/usr/bin/env bash
# Side-by-side GPX *parse* benchmark: RouteKit vs peer tools, same file, same run.
#
#   parse-peers.sh FILE [RUNS] [-- ROUTEKIT_CMD...]
#
#   FILE          a GPX file (see README.md: make_gpx.py N 42 OUT --truth)
#   RUNS          runs per tool, default 3 (or env RUNS); the median is reported
#   ROUTEKIT_CMD  optional; run as `ROUTEKIT_CMD... FILE`,
#                 e.g.  -- .build/release/routekit inspect
#
# Environment:
#   RUNS=N           runs per tool if not given as an argument (default 3)
#   SKIP_GPXPY=1     skip gpxpy (about 55 s and 3.9 GB per run at 1M points)
#   SKIP_GPSBABEL=1  skip GPSBabel;  SKIP_XMLLINT=1  skip xmllint
#   PYTHON=python3   interpreter for gpxpy
#   POINTS=N         override the point count (default: counted in FILE)
#
# Method (matches peers/RESULTS.md "How it was measured"): the file is cat-ed
# once to warm the page cache; each tool is a whole process run under
# `/usr/bin/time -f '%e %M'` (peak RSS = max resident set size, KiB); runs are
# interleaved round-robin (run 1 of every tool, then run 2, ...) so a load
# change on the machine hits all tools alike. Wall time is taken with bash's
# microsecond clock around the process, because %e has only 10 ms resolution
# (the %e value is kept as a cross-check in the per-run log on stderr).
# MB/s uses 10^6 bytes; RSS MB is KiB/1024, like RESULTS.md.
# Tool stdout goes to a temp file (gpxpy's printed point count is checked);
# the table goes to stdout, progress and per-run lines to stderr.
set -euo pipefail

usage() {
    sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
}
die() { echo "parse-peers.sh: $*" >&2; exit 2; }

# ---- arguments ---------------------------------------------------------------
[[ $# -ge 1 ]] || usage
case "$1" in -h|--help) usage ;; esac
FILE=$1; shift
RUNS=${RUNS:-3}
if [[ $# -gt 0 && $1 != -- ]]; then RUNS=$1; shift; fi
RK_CMD=()
if [[ $# -gt 0 ]]; then
    [[ $1 == -- ]] || die "unexpected argument '$1' (usage: parse-peers.sh FILE [RUNS] [-- ROUTEKIT_CMD...])"
    shift
    [[ $# -gt 0 ]] || die "'--' given but no RouteKit command after it"
    RK_CMD=("$@")
fi
[[ $RUNS =~ ^[1-9][0-9]*$ ]] || die "RUNS must be a positive integer, got '$RUNS'"
[[ -f $FILE && -r $FILE ]] || die "no readable file '$FILE' (generate one: see Benchmarks/peers/README.md)"
SKIP_GPXPY=${SKIP_GPXPY:-0}
SKIP_GPSBABEL=${SKIP_GPSBABEL:-0}
SKIP_XMLLINT=${SKIP_XMLLINT:-0}
PYTHON=${PYTHON:-python3}
[[ -n ${EPOCHREALTIME:-} ]] || die "needs bash >= 5 (EPOCHREALTIME); this is bash $BASH_VERSION"

# ---- tools present? ------------------------------------------------------------
missing=()
[[ -x /usr/bin/time ]] || missing+=("/usr/bin/time (GNU time):  apt-get install -y time")
if [[ $SKIP_XMLLINT != 1 ]] && ! command -v xmllint >/dev/null; then
    missing+=("xmllint:  apt-get install -y libxml2-utils   (or SKIP_XMLLINT=1)")
fi
if [[ $SKIP_GPSBABEL != 1 ]] && ! command -v gpsbabel >/dev/null; then
    missing+=("gpsbabel:  apt-get install -y gpsbabel   (or SKIP_GPSBABEL=1)")
fi
if [[ $SKIP_GPXPY != 1 ]]; then
    if ! command -v "$PYTHON" >/dev/null; then
        missing+=("$PYTHON (for gpxpy):  install Python 3, or set PYTHON=..., or SKIP_GPXPY=1")
    elif ! "$PYTHON" -c 'import gpxpy' 2>/dev/null; then
        missing+=("gpxpy for $PYTHON:  $PYTHON -m pip install gpxpy   (or SKIP_GPXPY=1)")
    fi
fi
if [[ ${#RK_CMD[@]} -gt 0 ]] && ! command -v "${RK_CMD[0]}" >/dev/null; then
    missing+=("RouteKit command '${RK_CMD[0]}' not found or not executable (build it first, e.g. swift build -c release)")
fi
if [[ ${#missing[@]} -gt 0 ]]; then
    echo "parse-peers.sh: missing tools:" >&2
    printf '  - %s\n' "${missing[@]}" >&2
    exit 2
fi

# ---- the tools -----------------------------------------------------------------
# Each tool: a label and a command line (FILE included). Stored as NUL-free
# strings of shell-quoted words, expanded with eval into an array at run time.
LABELS=(); CMDS=()
add_tool() { local label=$1; shift; LABELS+=("$label"); CMDS+=("$(printf '%q ' "$@")"); }
GPXPY_CODE='import gpxpy,sys; g=gpxpy.parse(open(sys.argv[1])); print(sum(len(s.points) for t in g.tracks for s in t.segments))'
[[ $SKIP_XMLLINT == 1 ]]  || add_tool "xmllint --stream --noout (libxml2 reader)" xmllint --stream --noout "$FILE"
[[ $SKIP_GPSBABEL == 1 ]] || add_tool "GPSBabel read only (-x nuketypes)" \
    gpsbabel -i gpx -f "$FILE" -x nuketypes,tracks,waypoints,routes -o gpx -F /dev/null
[[ $SKIP_GPXPY == 1 ]]    || add_tool "gpxpy.parse" "$PYTHON" -c "$GPXPY_CODE" "$FILE"
RK_IDX=-1
if [[ ${#RK_CMD[@]} -gt 0 ]]; then
    RK_IDX=${#LABELS[@]}
    add_tool "RouteKit: ${RK_CMD[*]}" "${RK_CMD[@]}" "$FILE"
fi
NT=${#LABELS[@]}
[[ $NT -gt 0 ]] || die "nothing to run (every peer skipped and no RouteKit command)"

# ---- the file ------------------------------------------------------------------
BYTES=$(stat -c %s -- "$FILE")
if [[ -n ${POINTS:-} ]]; then
    [[ $POINTS =~ ^[1-9][0-9]*$ ]] || die "POINTS must be a positive integer"
    NPTS=$POINTS
else
    NPTS=$(grep -c '<trkpt' -- "$FILE" || true)   # one <trkpt per line in pretty-printed GPX
    # minified GPX (many points per line) would be undercounted: count matches instead
    if [[ $NPTS -eq 0 || $(( BYTES / NPTS )) -gt 4000 ]]; then
        NPTS=$(grep -o '<trkpt[[:space:]>]' -- "$FILE" | wc -l || true)
    fi
    [[ $NPTS -gt 0 ]] || die "no <trkpt> in '$FILE' (or set POINTS=N)"
fi

TMP=$(mktemp -d "${TMPDIR:-/tmp}/parse-peers.XXXXXX")
trap 'rm -rf -- "$TMP"' EXIT

cat -- "$FILE" > /dev/null   # warm the page cache once

LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
START_DATE=$(date -u '+%Y-%m-%d %H:%M:%SZ')

# ---- runs (round-robin) ---------------------------------------------------------
declare -A WALL RSS RC   # key "tool,run"
for ((r = 1; r <= RUNS; r++)); do
    for ((t = 0; t < NT; t++)); do
        eval "cmd=(${CMDS[t]})"
        tf=$TMP/time.$t.$r
        t0=${EPOCHREALTIME/,/.}
        rc=0; e_s=; rss_k=
        /usr/bin/time -f '%e %M' -o "$tf" "${cmd[@]}" > "$TMP/out.$t" 2> "$TMP/err.$t" || rc=$?
        t1=${EPOCHREALTIME/,/.}
        wall=$(LC_ALL=C awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.6f", b - a }')
        # the last line of the -o file is "%e %M" (GNU time may put
        # "Command exited with non-zero status N" before it)
        read -r e_s rss_k < <(tail -n 1 "$tf") || true
        WALL[$t,$r]=$wall; RSS[$t,$r]=${rss_k:-0}; RC[$t,$r]=$rc
        printf '[%s] run %d/%d  %-45s wall %8.3f s  (%%e %s)  rss %7.1f MB  rc %d\n' \
            "$(date -u +%H:%M:%S)" "$r" "$RUNS" "${LABELS[t]}" "$wall" "${e_s:-?}" \
            "$(LC_ALL=C awk -v k="${rss_k:-0}" 'BEGIN { print k / 1024 }')" "$rc" >&2
        if [[ $rc -ne 0 ]]; then
            echo "  !! ${LABELS[t]} exited with status $rc; last lines of its stderr:" >&2
            tail -n 5 "$TMP/err.$t" | sed 's/^/     /' >&2
        fi
        if [[ $r -eq 1 ]]; then
            if [[ ${LABELS[t]} == gpxpy.parse && $rc -eq 0 ]]; then
                got=$(tail -n 1 "$TMP/out.$t")
                [[ $got == "$NPTS" ]] || echo "  !! gpxpy reports $got points, the file has $NPTS" >&2
            fi
            if [[ $t -eq $RK_IDX ]]; then
                if [[ -s $TMP/out.$t ]]; then
                    echo "  RouteKit stdout (last 5 lines of run 1):" >&2
                    tail -n 5 "$TMP/out.$t" | sed 's/^/     /' >&2
                else
                    echo "  RouteKit printed nothing on stdout (run 1)" >&2
                fi
            fi
        fi
    done
done

LOAD_AFTER=$(cut -d' ' -f1-3 /proc/loadavg)

# ---- statistics ------------------------------------------------------------------
# per tool: median wall, min, max, max RSS (KiB), failures
declare -a MED MINW MAXW MAXRSS FAILS
for ((t = 0; t < NT; t++)); do
    walls=(); rsss=(); fails=0
    for ((r = 1; r <= RUNS; r++)); do
        if [[ ${RC[$t,$r]} -eq 0 ]]; then
            walls+=("${WALL[$t,$r]}"); rsss+=("${RSS[$t,$r]}")
        else
            fails=$((fails + 1))
        fi
    done
    FAILS[t]=$fails
    if [[ ${#walls[@]} -eq 0 ]]; then MED[t]=; continue; fi
    read -r MED[t] MINW[t] MAXW[t] < <(printf '%s\n' "${walls[@]}" | sort -g | LC_ALL=C awk '
        { v[NR] = $1 }
        END { m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
              printf "%.6f %.6f %.6f\n", m, v[1], v[NR] }')
    MAXRSS[t]=$(printf '%s\n' "${rsss[@]}" | sort -g | tail -n 1)
done

fmt_rate() {  # points/s with k / M suffix, like RESULTS.md
    LC_ALL=C awk -v x="$1" 'BEGIN {
        if (x >= 1e6) printf "%.2f M", x / 1e6; else if (x >= 1e3) printf "%.0f k", x / 1e3; else printf "%.0f", x }'
}
fmt_s() { LC_ALL=C awk -v x="$1" 'BEGIN { if (x >= 10) printf "%.1f", x; else if (x >= 1) printf "%.2f", x; else printf "%.3f", x }'; }

# ---- report ------------------------------------------------------------------------
MB=$(LC_ALL=C awk -v b="$BYTES" 'BEGIN { printf "%.1f", b / 1e6 }')
versions=()
[[ $SKIP_XMLLINT == 1 ]]  || versions+=("libxml2 $(xmllint --version 2>&1 | sed -n '1s/.*libxml version //p')")
[[ $SKIP_GPSBABEL == 1 ]] || versions+=("$(gpsbabel -V 2>&1 | grep -m1 -o 'Version.*' | sed 's/^/GPSBabel /')")
[[ $SKIP_GPXPY == 1 ]]    || versions+=("gpxpy $("$PYTHON" -c 'import gpxpy; print(gpxpy.__version__)' 2>/dev/null) on $("$PYTHON" -V 2>&1)")

echo
echo "### GPX parse: $(basename -- "$FILE") ($NPTS points, $MB MB), median of $RUNS run(s)"
echo
vline=""
for v in "${versions[@]}"; do vline+="; $v"; done
echo "$START_DATE, $(hostname), nproc $(nproc), load average before $LOAD_BEFORE / after $LOAD_AFTER; warm page cache$vline"
echo
echo "| tool | median wall s | MB/s | points/s | peak RSS MB | wall min–max s | runs |"
echo "|---|---|---|---|---|---|---|"
any_fail=0
for ((t = 0; t < NT; t++)); do
    label=${LABELS[t]}
    [[ $t -eq $RK_IDX ]] && label="**$label**"
    if [[ -z ${MED[t]} ]]; then
        echo "| $label | FAILED (all $RUNS runs) | | | | | $RUNS |"
        any_fail=1; continue
    fi
    [[ ${FAILS[t]} -eq 0 ]] || any_fail=1
    mbs=$(LC_ALL=C awk -v b="$BYTES" -v s="${MED[t]}" 'BEGIN { printf "%.1f", b / 1e6 / s }')
    pps=$(fmt_rate "$(LC_ALL=C awk -v n="$NPTS" -v s="${MED[t]}" 'BEGIN { print n / s }')")
    rss=$(LC_ALL=C awk -v k="${MAXRSS[t]}" 'BEGIN { m = k / 1024; if (m >= 100) printf "%.0f", m; else printf "%.1f", m }')
    runs_note=$RUNS; [[ ${FAILS[t]} -eq 0 ]] || runs_note="$RUNS (${FAILS[t]} failed)"
    echo "| $label | $(fmt_s "${MED[t]}") | $mbs | $pps | $rss | $(fmt_s "${MINW[t]}")–$(fmt_s "${MAXW[t]}") | $runs_note |"
done

if [[ $RK_IDX -ge 0 && -n ${MED[RK_IDX]} ]]; then
    rk=${MED[RK_IDX]}
    echo
    echo "RouteKit: $(LC_ALL=C awk -v b="$BYTES" -v s="$rk" 'BEGIN { printf "%.1f", b / 1e6 / s }') MB/s, $(fmt_rate "$(LC_ALL=C awk -v n="$NPTS" -v s="$rk" 'BEGIN { print n / s }')") points/s, median $(fmt_s "$rk") s"
    echo
    echo "| peer | RouteKit speed ÷ peer speed | peer peak RSS ÷ RouteKit peak RSS |"
    echo "|---|---|---|"
    for ((t = 0; t < NT; t++)); do
        [[ $t -ne $RK_IDX ]] || continue
        if [[ -z ${MED[t]} ]]; then echo "| ${LABELS[t]} | (peer failed) | |"; continue; fi
        LC_ALL=C awk -v l="${LABELS[t]}" -v p="${MED[t]}" -v r="$rk" -v pm="${MAXRSS[t]}" -v rm="${MAXRSS[RK_IDX]}" \
            'BEGIN { printf "| %s | %.2f× %s | %.2f× |\n", l, p / r, (p >= r ? "(RouteKit faster)" : "(RouteKit slower)"), (rm > 0 ? pm / rm : 0) }'
    done
elif [[ $RK_IDX -ge 0 ]]; then
    echo
    echo "RouteKit failed on every run: no ratios."
fi

exit $any_fail
