#!/usr/bin/env bash
# Side-by-side FIT decode benchmark: RouteKit vs fitdecode, Garmin's Python SDK and GPSBabel, same file, same run.
#
#   fit-peers.sh FILE [RUNS] [ROUTEKIT]
#
#   FILE      a FIT file (the issue's: ../shared/format-corpus/muktihari__fit__testdata__big_activity.fit)
#   RUNS      runs per tool, default 5; the median is reported
#   ROUTEKIT  the routekit binary, default .build/release/routekit (build it with `make release`)
#
# Tools (each a whole process; peak RSS from /usr/bin/time %M). Wall time: with hyperfine installed (apt-get install
# hyperfine), `hyperfine -N` runs each command RUNS times after 3 warm-up runs, without a shell, and the table gives
# its median; without it, runs are interleaved round-robin and timed by bash's clock around `bash -c` and
# /usr/bin/time, which adds the same few milliseconds of their own to every tool (so ratios come out lower).
#   routekit-inspect   routekit inspect FILE: decodes every message once (the summary and the GPX summary in one pass)
#   routekit-csv       routekit convert FILE --format csv -o /dev/null: every positioned record written as CSV
#   fitdecode          python3: for frame in fitdecode.FitReader(FILE) (every message decoded, strict CRC)
#   garmin-sdk         python3: garmin_fit_sdk Decoder(Stream.from_file(FILE)).read()
#   gpsbabel           gpsbabel -i garmin_fit -f FILE -o unicsv -F /dev/null
# Missing tools are skipped (pip install fitdecode garmin-fit-sdk; apt-get install gpsbabel).
set -euo pipefail
FILE=${1:?usage: fit-peers.sh FILE [RUNS] [ROUTEKIT]}
RUNS=${2:-5}
RK=${3:-.build/release/routekit}
[ -x "$RK" ] || { echo "fit-peers.sh: $RK not found (make release)" >&2; exit 2; }
cat "$FILE" >/dev/null

tools=(routekit-inspect routekit-csv)
python3 -c 'import fitdecode' 2>/dev/null && tools+=(fitdecode)
python3 -c 'import garmin_fit_sdk' 2>/dev/null && tools+=(garmin-sdk)
command -v gpsbabel >/dev/null && tools+=(gpsbabel)

command_for() {
    case "$1" in
    routekit-inspect) echo "$RK inspect $FILE" ;;
    routekit-csv) echo "$RK convert $FILE --format csv -o /dev/null" ;;
    fitdecode) echo "python3 -c 'import fitdecode,sys
n=0
with fitdecode.FitReader(sys.argv[1]) as f:
    for frame in f: n+=1
' $FILE" ;;
    garmin-sdk) echo "python3 -c 'import sys
from garmin_fit_sdk import Decoder, Stream
m,e=Decoder(Stream.from_file(sys.argv[1])).read()
' $FILE" ;;
    gpsbabel) echo "gpsbabel -i garmin_fit -f $FILE -o unicsv -F /dev/null" ;;
    esac
}

declare -A times rss
if command -v hyperfine >/dev/null; then
    # The Python peers as scripts, so that hyperfine runs every command without a shell.
    scripts=$(mktemp -d)
    printf 'import fitdecode,sys\nn=0\nwith fitdecode.FitReader(sys.argv[1]) as f:\n    for frame in f: n+=1\n' \
        >"$scripts/peer_fitdecode.py"
    printf 'import sys\nfrom garmin_fit_sdk import Decoder, Stream\nm,e=Decoder(Stream.from_file(sys.argv[1])).read()\n' \
        >"$scripts/peer_garmin.py"
    for t in "${tools[@]}"; do
        case "$t" in
        fitdecode) cmd="python3 $scripts/peer_fitdecode.py $FILE" ;;
        garmin-sdk) cmd="python3 $scripts/peer_garmin.py $FILE" ;;
        *) cmd=$(command_for "$t") ;;
        esac
        hyperfine -N --warmup 3 --runs "$RUNS" --export-json "$scripts/$t.json" "$cmd" >&2
        times[$t]=$(python3 -c "import json,statistics,sys; r=json.load(open(sys.argv[1]))['results'][0]
print(' '.join(str(round(x*1000,1)) for x in r['times']))" "$scripts/$t.json")
        /usr/bin/time -f '%M' -o "$scripts/rss" $cmd >/dev/null 2>&1 || true
        rss[$t]=$(tail -1 "$scripts/rss")
    done
    rm -rf "$scripts"
    RUNS=0
fi
for run in $(seq "$RUNS"); do
    for t in "${tools[@]}"; do
        cmd=$(command_for "$t")
        start=$EPOCHREALTIME
        /usr/bin/time -f '%M' -o /tmp/fit-peers-rss.$$ bash -c "$cmd" >/dev/null 2>/tmp/fit-peers-err.$$ || {
            echo "fit-peers.sh: $t failed:" >&2; cat /tmp/fit-peers-err.$$ >&2; }
        end=$EPOCHREALTIME
        ms=$(python3 -c "print(round(($end - $start) * 1000, 1))")
        times[$t]+="$ms "
        rss[$t]+="$(tail -1 /tmp/fit-peers-rss.$$) "
        echo "run $run $t ${ms} ms" >&2
    done
done
rm -f /tmp/fit-peers-rss.$$ /tmp/fit-peers-err.$$

median() { tr ' ' '\n' | grep -v '^$' | sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
base=$(echo "${times[routekit-inspect]}" | median)
printf '%-18s %12s %12s %14s\n' tool "median ms" "peak MB" "× routekit-inspect"
for t in "${tools[@]}"; do
    m=$(echo "${times[$t]}" | median)
    r=$(echo "${rss[$t]}" | median)
    printf '%-18s %12s %12.1f %14.1f\n' "$t" "$m" "$(python3 -c "print($r/1024)")" "$(python3 -c "print($m/$base)")"
done
