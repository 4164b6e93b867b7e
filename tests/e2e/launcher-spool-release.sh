#!/bin/sh
# A large spool (16 MiB or more) is removed when its archive is written,
# but its pages are freed by a child of fxt-run that closes it after the
# run (launcher/removed.c): nothing of it is left when
# fxt-run exits, the archive is whole, and a command substitution around
# fxt-run does not wait for that child (it closed the output first).
. "$abs_top_srcdir/tests/e2e/agent-common.sh"

export FXT_LIBC=none
plan 7

mkdir "$TMPD/big" && cd "$TMPD/big" || exit 1
# 1.5 M calls: 3 M records of 16 bytes, some 46 MiB of spool.
out=$(FXT_RUN_DEBUG=1 "$FXT_RUN" --max-size 0 -o big.fxt "$PROGS/loop" 1500000 2>err)
is "$?" 0 "fxt-run exits 0"
is "$out" "loop: 1500000 calls" "the program's output"
check_archive big big.fxt
is "$(grep -c 'removed spools closed after the run' err)" 1 "the spool closed after the run"
is "$(ls)" "big.fxt
err" "nothing else left"

# A small one is closed at once.
mkdir "$TMPD/small" && cd "$TMPD/small" || exit 1
FXT_RUN_DEBUG=1 "$FXT_RUN" -o small.fxt "$PROGS/loop" 1000 >/dev/null 2>err
is "$(grep -c 'removed spools closed after the run' err)" 0 "a small spool: closed at once"
# A sealed spool is converted through a mapping: each chunk's pages leave
# fxt-run once converted (conv_chunk_done()), so its peak memory does not
# grow with the spool (fib(37)'s 1.8 GB spool took it to 1.5 GB).
if [ -x /usr/bin/time ]; then
  mkdir "$TMPD/rss" && cd "$TMPD/rss" || exit 1
  /usr/bin/time -f %M -o small.kib "$FXT_RUN" -q -o small.fxt "$PROGS/loop" 1000 >/dev/null 2>&1
  /usr/bin/time -f %M -o big.kib "$FXT_RUN" -q --max-size 0 -o big.fxt "$PROGS/loop" 1500000 \
    >/dev/null 2>&1
  s=$(tail -n 1 small.kib) b=$(tail -n 1 big.kib)
  ok "a 46 MiB spool: fxt-run's peak memory $b KiB, $s KiB for a small one (< 16 MiB more)" \
    test $((b - s)) -lt 16384
else
  skip "no /usr/bin/time"
fi
finish
