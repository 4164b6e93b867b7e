#!/bin/sh
# The mem group: malloc/free slices with their arguments, the heap
# counter, allocation functions under the agent (blocks allocated before
# it started included), the group switched off, and a program whose first
# free() comes inside a failed dlsym().
. "$abs_top_srcdir/tests/e2e/libc-threads-common.sh"

plan 19
prog=$PROGS/libc_mem

# 100 mallocs of 1234 bytes, then 100 frees.
plain "$prog" count 100 1234
ltrace mem count.fxt "$prog" count 100 1234
same_run count
check_archive count count.fxt
usable=$(sed -n 's/.*usable \([0-9]*\)$/\1/p' "$TMPD/out")
if has_libc count.fxt; then
  slices libc.mem count.fxt >mem.txt
  grep -E '^[0-9]+ malloc .* size=1234( |$)' mem.txt | arg result | sort >mallocs
  grep -E '^[0-9]+ free ' mem.txt | arg ptr | sort >frees
  is "$(wc -l <mallocs | tr -d ' ')/$(sort -u mallocs | wc -l | tr -d ' ')" 100/100 \
    "count: 100 malloc slices of size 1234, 100 distinct results"
  is "$(comm -23 mallocs frees)" "" "count: each of them freed by a free slice"
  is "$(count_of '^1 malloc ' <mem.txt)" "$(count_of ' malloc ' <mem.txt)" \
    "count: all on the main thread"
  "$SLICES" --counter heap count.fxt >heap.txt
  if [ -s heap.txt ]; then
    is "$(sort -n heap.txt | tail -n 1)" "$usable" "count: heap counter peaks at the usable total"
    is "$(tail -n 1 heap.txt)" 0 "count: heap counter back to its start"
  else
    skip "count: no heap counter in the archive (flusher)"
    skip "count: no heap counter in the archive (flusher)"
  fi
else
  for i in 1 2 3 4 5; do skip "count: the flusher writes no libc slices yet"; done
fi

# The group off: no mem slices.
ltrace io,thread,sync,proc,sleep,log nomem.fxt "$prog" count 100 1234
same_run nomem
is "$(slices libc.mem nomem.fxt)" "" "nomem: no libc.mem slice"

# Every allocation function, blocks from before the agent's constructor.
plain "$prog" compat
ltrace all compat.fxt "$prog" compat
same_run compat
check_archive compat compat.fxt
if has_libc compat.fxt; then
  slices libc.mem compat.fxt >compat.txt
  names=$(awk '{ print $2 }' compat.txt | sort -u | tr '\n' ' ')
  is "$names" "aligned_alloc calloc free malloc memalign mmap mremap munmap posix_memalign \
pvalloc realloc reallocarray valloc " "compat: the functions called, each recorded"
  is "$(count_of '^1 posix_memalign .*alignment=64 .*size=100' <compat.txt)" 1 \
    "compat: posix_memalign with its arguments"
  is "$(count_of '^1 mmap .*errno=EBADF' <compat.txt)" 1 "compat: failed mmap with its errno"
else
  for i in 1 2 3; do skip "compat: the flusher writes no libc slices yet"; done
fi
# Two failed dlsym() before any free(): the C library frees the first
# error string inside the second look-up, through the agent's free().
"$FXT_RUN" -q -f --libc=all -o dlsym.fxt -- "$PROGS/dlsym_first" >dlsym.out 2>dlsym.err
is "$?/$(cat dlsym.out)" "0/dlsym_first: missing missing" "dlsym first: the program runs as without the agent"
ok "dlsym first: valid archive" sh -c '"$1" --check dlsym.fxt >/dev/null' sh "$FXT_DUMP"
finish
