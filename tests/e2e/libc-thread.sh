#!/bin/sh
# The thread group: pthread_create's flow into the new thread's "thread"
# slice, join/detach/exit, threads ending in pthread_exit or detached, a
# thread started before the agent was initialised, and 1000 short threads.
. "$abs_top_srcdir/tests/e2e/libc-threads-common.sh"

plan 15
prog=$PROGS/libc_threads

plain "$prog" create
ltrace all create.fxt "$prog" create
same_run create
check_archive create create.fxt
if has_libc create.fxt; then
  "$SLICES" --flows create.fxt >create.flows
  slices libc.thread create.fxt >create.txt
  is "$(count_of '^pthread_create -> thread other$' <create.flows)" 4 \
    "create: a flow from each pthread_create into its thread's slice"
  is "$(awk '$2 == "thread" { print $1 }' create.txt | sort -u | wc -l | tr -d ' ')" 4 \
    "create: four thread slices, one per thread"
  main=$(awk '$2 == "pthread_create" { print $1; exit }' create.txt)
  is "$(awk -v m="$main" '$1 == m && $2 != "pthread_tryjoin_np" { print $2 }' create.txt |
    sort | uniq -c |
    awk '{ printf "%s %s;", $1, $2 }')" "4 pthread_create;1 pthread_detach;3 pthread_join;" \
    "create: the main thread's calls"
  is "$(count_of ' pthread_exit( |$)' <create.txt)" 2 "create: both pthread_exit calls recorded"
  is "$(slices libc.mem create.fxt | count_of '^[0-9]+ malloc .*size=100( |$)')" 1 \
    "create: the calls of a thread started before the agent are recorded"
  is "$("$CALLTREE" --stats create.fxt | sed -n 's/^unmatched //p')" 0 "create: no unmatched end"
else
  for i in 1 2 3 4 5 6; do skip "create: the flusher writes no libc slices yet"; done
fi

plain "$prog" many
ltrace all many.fxt "$prog" many
same_run many
check_archive many many.fxt
if has_libc many.fxt; then
  is "$(slices libc.thread many.fxt | count_of ' thread( |$)')" 1000 "many: 1000 thread slices"
  is "$("$SLICES" --flows many.fxt | count_of '^pthread_create -> thread other$')" 1000 \
    "many: 1000 create flows"
else
  for i in 1 2; do skip "many: the flusher writes no libc slices yet"; done
fi

# Sampling alone still starts threads through the trampoline.
FXT_LIBC=none FXT_SAMPLE=1000; export FXT_LIBC FXT_SAMPLE
trace nolibc.fxt "$prog" many
unset FXT_LIBC FXT_SAMPLE
is "$rc/$(cat "$TMPD/out")" "3/many: 1000 threads, 10 detached" "sampling only: same run"
finish
