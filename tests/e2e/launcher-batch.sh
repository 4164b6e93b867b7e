#!/bin/sh
# fxt-run's batches (convert/convert.h, struct convert_batch): the short
# processes of a run are converted into one file rather than an archive
# each (a new inode was most of a short process's cost).  A run whose
# fxt-run was killed leaves its batches and its control file; --recover
# merges each batch once, cut to what fxt-run said was whole in it, and
# converts the spools whose archive was not (no process twice, none lost).
. "$abs_top_srcdir/tests/e2e/agent-common.sh"

plan 14

# 30 x (true; sleep), spaced so that fxt-run's scans convert them while
# the loop goes on: each a fork of sh that execs (two images of a pid).
loop='i=0; while [ $i -lt 30 ]; do /bin/true; /bin/sleep 0.02; i=$((i + 1)); done'

trace b.fxt sh -c "$loop"
is "$rc" 0 "batched: exit status 0"
check_archive "batched" b.fxt
"$FXT_DUMP" --stats b.fxt >stats
is "$(sed -n 's/^processes //p' stats)" 61 "batched: every process (sh, 30 true, 30 sleep)"
ok "batched: the summary counts the images" grep -q '^fxt-run: wrote b\.fxt (.*); 61 processes, 91 images' "$TMPD/err"
is "$(ls | grep '^b\.' | tr '\n' ' ')" "b.fxt " "batched: no batch, part or spool left"

# fxt-run killed: its processes' archives are in a batch or two (a pid's
# second image goes to the next), not a file each.
rm -f ./*
# ("ready" once sleep 30 runs, seen with builtins only: said before its
# fork, a SIGKILL could come before the process was there, and it was
# missing from the count.)
kill_when_ready k.fxt sh -c "$loop"'; /bin/sleep 30 & p=$!
  until read c </proc/$p/comm && [ "$c" = sleep ]; do :; done
  echo ready; wait'
n=$(ls | grep -c '^k\.[0-9]*\(\.[0-9]*\)\?\.fxt$' || true)
ok "killed run: 60 processes converted into at most 2 files ($n)" test "$n" -ge 1 -a "$n" -le 2
mkdir torn
cp -p ./k.* torn/
# A batch written beyond what fxt-run had said was whole (killed while it
# wrote an archive, before its spool was marked): the copy's batch gets
# its own archives once more at its end.
for f in torn/k.[0-9]*.fxt; do
  case ${f#torn/} in *.*.*.fxt) continue ;; esac
  tail -c +41 "$f" >"$TMPD/again" && cat "$TMPD/again" >>"$f"
done
"$FXT_RUN" --recover . >out 2>err
is "$?" 0 "--recover: exit status 0"
check_archive "--recover" k.fxt
"$FXT_DUMP" --stats k.fxt | grep -v _ns >stats
is "$(sed -n 's/^processes //p' stats)" 62 "--recover: every process (sh, 30 true, 30 sleep, sleep 30)"
(cd torn && "$FXT_RUN" --recover . >out 2>err)
"$FXT_DUMP" --stats torn/k.fxt | grep -v _ns >stats.torn
if cmp -s stats stats.torn; then ok "--recover, a batch written past its end: the same archive" true; else
  ok "--recover, a batch written past its end: the same archive" false
  diff stats stats.torn | head -10 | sed 's/^/#   /'
fi

# The converter killed once a child's archive is in the batch and its
# spool marked, before the batch says it whole (libkillafter): --recover
# cuts the batch there and converts the spool, once.  FXT_RUN_LATE=1:
# the early converter (its first look 5 ms after the start) may take the
# child's spool first and give it an archive of its own, not the batch
# this case is about (CI: 2 runs in 3).
cd "$TMPD" && mkdir marked && cd marked || exit 1
KILLAFTER=$(cd "$PROGS/.libs" && pwd -P)/libkillafter.so
LOOP=$PROGS/loop
FXT_RUN_LATE=1 KILLAFTER_PROG=fxt-run KILLAFTER_CALL=pwrite KILLAFTER_SUFFIX=.2.spool LD_PRELOAD=$KILLAFTER \
  ASAN_OPTIONS="verify_asan_link_order=0:${ASAN_OPTIONS:-}" "$FXT_RUN" -o t.fxt -- \
  sh -c 'echo $$ >root.pid; "$0" 1000 >/dev/null; exit 0' "$LOOP" >/dev/null 2>&1
while kill -0 "$(cat root.pid)" 2>/dev/null; do sleep 0.1; done
rm root.pid
ok "killed converter: a batch and the child's spool both left" sh -c \
  'ls t.[0-9]*.fxt >/dev/null && ls t.fxt.*.2.spool >/dev/null'
rc=0
"$FXT_RUN" --recover . >"$TMPD/out" 2>"$TMPD/err" || rc=$?
is "$rc/$(ls -A | tr '\n' ' ')" "0/t.fxt " "killed converter: recovered, one archive left"
check_archive "killed converter" t.fxt
is "$(flat t.fxt | sed -n 's/^\([0-9]*\) leaf$/\1/p')" 1000 "killed converter: each call once"
finish
