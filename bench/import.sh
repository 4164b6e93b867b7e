#!/bin/sh
# fxt-import's speed and memory on a large trace.dat (issue bar: >= 1 M
# events/s, memory bounded).  Records one with tests/data/tracecmd/record.sh
# (root, tracefs; raw syscall entries and exits of a dd copying one byte
# at a time, 64 MiB of buffer per CPU; zstd, as trace-cmd writes it), and
# a plain copy of it of about MB megabytes (trace-cmd convert
# --compression none), unless TRACE_DAT names the one file to use.  Then,
# for each file, in the same run: `trace-cmd report` of it into /dev/null
# (the baseline: the same library reading the same file, printing each
# event) and fxt-import to a plain archive, each REPS times (default 3),
# and prints events/s, MB/s of input, the peak RSS and the ratio to the
# baseline.
#
#   make bench-import [TRACE_DAT=FILE] [MB=100] [REPS=3]
set -eu
B=${abs_top_builddir:?run through make bench-import}
S=${abs_top_srcdir:?run through make bench-import}
reps=${REPS:-3}
mb=${MB:-100}
work=$(mktemp -d "${TMPDIR:-/tmp}/fxt-bench-import.XXXXXX")
trap 'rm -rf "$work"' EXIT

files=${TRACE_DAT:-}
if [ -z "$files" ]; then
  # Four events (read and write, entry and exit) of ~30 bytes a byte copied.
  count=$((mb * 8000))
  echo "recording: dd bs=1 count=$count under trace-cmd (raw_syscalls) ..."
  FXT_RECORD_EVENTS="-b 65536 -e raw_syscalls" \
  FXT_RECORD_CMD="dd if=/dev/zero of=/dev/null bs=1 count=$count 2>/dev/null" \
    "$S/tests/data/tracecmd/record.sh" "$work/zstd.dat" mono ||
    { echo "bench-import: cannot record here; give TRACE_DAT=FILE" >&2; exit 1; }
  trace-cmd convert -i "$work/zstd.dat" -o "$work/plain.dat" --compression none > /dev/null 2>&1
  files="$work/plain.dat $work/zstd.dat"
fi

# run NAME CMD...: the best of reps wall times (s) and the peak RSS (KiB).
run() {
  name=$1; shift
  best= rss=
  i=0
  while [ $i -lt "$reps" ]; do
    /usr/bin/time -f '%e %M' -o "$work/time" "$@" > /dev/null 2> "$work/err" ||
      { cat "$work/err" >&2; exit 1; }
    read -r t m < "$work/time"
    if [ -z "$best" ] || awk -v a="$t" -v b="$best" 'BEGIN { exit !(a < b) }'; then best=$t; fi
    if [ -z "$rss" ] || [ "$m" -gt "$rss" ]; then rss=$m; fi
    i=$((i + 1))
  done
  eval "${name}_t=\$best ${name}_rss=\$rss"
}

for dat in $files; do
size=$(wc -c < "$dat")
run base trace-cmd report "$dat"
run ours "$B/fxt-import" -o "$work/out.fxt" "$dat"
"$B/fxt-import" -o "$work/out.fxt" "$dat" 2> "$work/summary"
events=$(sed 's/.*: \([0-9]*\) events -> .*/\1/' "$work/summary")
out=$(wc -c < "$work/out.fxt")
echo "== $(basename "$dat")"
awk -v size="$size" -v ev="$events" -v bt="$base_t" -v brss="$base_rss" -v ot="$ours_t" \
    -v orss="$ours_rss" -v out="$out" -v reps="$reps" 'BEGIN {
  printf "input: %.1f MB trace.dat, %d events; archive %.1f MB (%.1f B/event)\n", size / 1e6, ev, out / 1e6, out / ev
  printf "%-28s %8s %12s %10s %12s\n", "best of " reps, "seconds", "events/s", "MB/s in", "peak RSS"
  printf "%-28s %8.2f %12.0f %10.1f %9d KiB\n", "trace-cmd report (baseline)", bt, ev / bt, size / 1e6 / bt, brss
  printf "%-28s %8.2f %12.0f %10.1f %9d KiB\n", "fxt-import", ot, ev / ot, size / 1e6 / ot, orss
  printf "fxt-import / trace-cmd report: %.2fx the time; goal >= 1,000,000 events/s: %s\n", ot / bt, ((ev / ot >= 1e6) ? "met" : "NOT met")
}'
done
