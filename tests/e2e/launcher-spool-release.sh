#!/bin/sh
# A large spool (16 MiB or more) is removed when its archive is written,
# but its pages are freed by a child of fxt-run that closes it after the
# run (launcher/removed.c): nothing of it is left when
# fxt-run exits, the archive is whole, and a command substitution around
# fxt-run does not wait for that child (it closed the output first).
. "$abs_top_srcdir/tests/e2e/agent-common.sh"

export FXT_LIBC=none
plan 6

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
finish
