#!/bin/sh
# fxt-waits on real waits: tests/progs/waits makes one per mode (a mutex
# held 50 ms, a condition signalled after 50 ms, a pipe between two
# processes written after 50 ms, a join of a thread that works 50 ms),
# traced with fxt-run --libc=all; each wait's waiter, releaser and
# duration (at least 40 ms; under 10 s on a loaded machine) are checked,
# then the outputs, the selection, an archive with the kernel's scheduling
# and bad input.
. "$abs_top_srcdir/tests/e2e/import-common.sh"
WAITS=$abs_top_builddir/fxt-waits
scratch
cd "$TMPD" || exit 1
plan 32

for m in mutex cond pipe join; do
  "$FXT_RUN" --libc=all -o "$m.fxt" "$PROGS/waits" "$m" >"$m.out" 2>"$m.err" 9>&-
  is "$?/$(cat "$m.out")" "0/$m: done" "$m: traced" || sed 's/^/# /' "$m.err"
  "$WAITS" --detail --format csv "$m.fxt" >"$m.csv" 2>"$m.werr"
done

# row CSV FUNCTION CALL: the fields of the one wait of FUNCTION in CALL,
# as "waiter=TID releaser=TID same-process|other-process RELEASE
# RELEASER_FUNCTION BUSY long|short" (long: 40 ms to 10 s).
row() {
  awk -F, -v f="$2" -v c="$3" 'NR > 1 && $6 == f && $7 == c {
    n++
    who = ($9 == $3) ? "same-process" : "other-process"
    other = ($10 != $4) ? "other-thread" : "same-thread"
    len = ($2 >= 40000000 && $2 < 10000000000) ? "long" : "short(" $2 ")"
    out = who " " other " " $12 " " $13 " " len
  } END { print (n == 1 ? out : n " rows") }' "$1"
}

is "$(row mutex.csv want pthread_mutex_lock)" \
  "same-process other-thread pthread_mutex_unlock hold long" \
  "mutex: want waited in the lock for the other thread's unlock in hold"
is "$(awk -F, '$6 == "want" { print $15 }' mutex.csv)" hold \
  "mutex: the releaser was in hold throughout the wait"
is "$(row cond.csv want_signal pthread_cond_wait)" \
  "same-process other-thread pthread_cond_signal ring long" \
  "cond: want_signal waited for the other thread's signal in ring"
is "$(row pipe.csv want_byte read)" "other-process other-thread write feed long" \
  "pipe: want_byte's read waited for the child process's write in feed"
is "$(row join.csv want_end pthread_join)" "same-process other-thread (thread end) worker long" \
  "join: want_end waited for the worker's end"
# The releaser's and the waiter's threads are the archive's.
is "$(awk -F, '$6 == "want" { print ($4 == $9) }' mutex.csv)" 1 \
  "mutex: the waiter is the main thread"

# The aggregated text: the issue's line.
"$WAITS" mutex.fxt >mutex.txt 2>&1
ok "text: one line per wait, worst first" \
  grep -Eq '^waits\[[0-9]+\]/want waited [0-9.]+ ms in pthread_mutex_lock, 1 time, for waits\[[0-9]+\] in hold$' mutex.txt
is "$(sed -n 2p mutex.txt)" \
  "# runnable time is not known: the archive has no scheduling (context switches)" \
  "text: runnable time is said to be unknown"
# The lock, and the join of the holder when it had not ended yet.
ok "text: the header counts the waits" grep -Eq \
  '^# (1 wait|2 waits) released by another thread or process, [0-9.]+ ms in all; 0 with no releaser found, 0 ns$' \
  mutex.txt
"$WAITS" pipe.fxt >pipe.txt
ok "text: a releaser in another process says so" \
  grep -Eq '/want_byte waited .* in read, 1 time, for waits\[[0-9]+\] of process [0-9]+ in feed$' pipe.txt

# --by pair, json, the front command.
"$WAITS" --by pair mutex.fxt >pair.txt
ok "--by pair: one line for the pair" \
  grep -Eq '^waits\[[0-9]+\] waited [0-9.]+ ms, (1 time|2 times \(max [0-9.]+ ms\)), for waits\[[0-9]+\]$' pair.txt
"$WAITS" --format json mutex.fxt >mutex.json
ok "json: valid, rows and unreleased" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["runnable_known"] is False and d["unreleased"] == []
assert [r["function"] for r in d["rows"]][0] == "want", d
assert d["rows"][0]["releaser_function"] == "hold" and d["rows"][0]["count"] == 1
' mutex.json
"$abs_top_builddir/tools/fxt" waits mutex.fxt >front.txt
ok "fxt waits: fxt-waits" cmp -s front.txt mutex.txt

# Selection: the holder's tid has no waits; the main thread's has them.
holder=$(awk -F, '$6 == "want" { print $10 }' mutex.csv)
main=$(awk -F, '$6 == "want" { print $4 }' mutex.csv)
is "$("$WAITS" --detail --format csv --tid "$holder" mutex.fxt | wc -l)" 1 "--tid: only that thread's waits"
is "$("$WAITS" --detail --format csv --tid "$holder,$main" mutex.fxt | wc -l)" \
  "$("$WAITS" --detail --format csv mutex.fxt | wc -l)" "--tid LIST"
is "$("$WAITS" --detail --format csv --pid 1 mutex.fxt | wc -l)" 1 "--pid: only that process's waits"

# With the kernel's context switches merged in (tests/data/tracecmd, from
# another run: none of them is this program's), runnable time is known to
# be known for none of the waits.
if have_tracecmd; then
  "$FXT_IMPORT" -q "$abs_top_srcdir/tests/data/tracecmd/v6.dat" -o kernel.fxt &&
    "$FXT_MERGE" -q --no-align kernel.fxt mutex.fxt -o both.fxt
  n=$(grep -c '^waits' mutex.txt)
  is "$("$WAITS" both.fxt | sed -n 2p)" \
    "# runnable time (from the release to the waiter's next switch-in) known for 0 of $n released waits" \
    "scheduling merged in: the header says for how many waits runnable time is known"
  is "$("$WAITS" -F json both.fxt | sed 's/,.*//')" '{"runnable_known":true' \
    "scheduling merged in: json says runnable time is known"
else
  skip "built without libtracecmd"
  skip "built without libtracecmd"
fi

# Bad input: one line naming the problem, exit 2.
: >empty.fxt
echo "not a trace" >text.fxt
head -c 300 mutex.fxt >cut.fxt
# bad NAME WANT COMMAND...
bad() {
  name=$1 want=$2; shift 2
  "$@" >bad.out 2>bad.err
  rc=$?
  is "$rc:$(head -n 1 bad.err | grep -c -- "$want")" "2:1" "$name: exit 2, '$want'" ||
    sed 's/^/# /' bad.err
}
bad "missing archive" "No such file" "$WAITS" missing.fxt
bad "empty archive" "empty file" "$WAITS" empty.fxt
bad "not an archive" "not an FXT archive" "$WAITS" text.fxt
bad "truncated archive" "cut.fxt: .* at byte" "$WAITS" cut.fxt
bad "--by unknown" "unknown key 'bogus'" "$WAITS" --by bogus mutex.fxt
bad "--detail --by pair" "no --by with it" "$WAITS" --detail --by pair mutex.fxt
bad "--tid not ids" "not a list of ids" "$WAITS" --tid 1,x mutex.fxt
bad "no archive" "no ARCHIVE" "$WAITS"
# mkarchives' valid.fxt: "fxt: 12 records dropped" and another writer's
# "buffer full" provider event: said in the header (csv: on standard error).
"$HELPERS/mkarchives" "$TMPD/mk" >/dev/null
is "$("$WAITS" "$TMPD/mk/valid.fxt" | grep -E 'calls dropped|buffer filled')" \
  "# 12 calls dropped: the waits are partial
# a trace buffer filled up 1 time: records were likely dropped, the waits may be partial" "drops and full buffers in the header"
is "$("$WAITS" -F csv "$TMPD/mk/valid.fxt" 2>&1 >/dev/null)" \
  "fxt-waits: $TMPD/mk/valid.fxt: 12 calls dropped: the waits are partial
fxt-waits: $TMPD/mk/valid.fxt: a trace buffer filled up 1 time: records were likely dropped, the waits may be partial" "csv: on standard error"
finish
