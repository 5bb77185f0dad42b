#!/usr/bin/env bash
# Runs a command and samples its anonymous memory (RssAnon: the heap, not the mapped weights'
# file pages) every 0.5 s from /proc/PID/status, as docs/performance.md quotes it for big models.
# Prints the wall time and the largest RssAnon and RssFile seen, in MiB, on stderr.
#
#   scripts/sample-rss.sh build/app/attention-explorer run DIR --ids 0,1,2 --format npy -o OUT
set -euo pipefail
start=$(date +%s.%N)
"$@" &
pid=$!
peak_anon=0 peak_file=0
while kill -0 "$pid" 2>/dev/null; do
    if [ -r "/proc/$pid/status" ]; then
        anon=$(awk '/^RssAnon:/ {print $2}' "/proc/$pid/status" 2>/dev/null || echo 0)
        file=$(awk '/^RssFile:/ {print $2}' "/proc/$pid/status" 2>/dev/null || echo 0)
        [ "${anon:-0}" -gt "$peak_anon" ] && peak_anon=$anon
        [ "${file:-0}" -gt "$peak_file" ] && peak_file=$file
    fi
    sleep 0.5
done
status=0
wait "$pid" || status=$?
end=$(date +%s.%N)
awk -v s="$start" -v e="$end" -v a="$peak_anon" -v f="$peak_file" 'BEGIN {
    printf "sample-rss: %.1f s wall, peak RssAnon %.0f MiB, peak RssFile %.0f MiB\n", e - s, a / 1024, f / 1024 }' >&2
exit "$status"
