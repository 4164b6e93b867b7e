#!/bin/sh
# fxt-run's early converter (launcher/early.c) converts a process's full
# chunks while it runs; the archive holds what the conversion at the end
# alone writes (FXT_RUN_LATE=1): the same counts, calls and nesting, from
# one thread and from several, plain, gzip and zstd, and it leaves no file
# behind.  How much it
# converts early depends on the idle CPU it gets (SCHED_IDLE): said, not
# checked (tests/unit/test_convert_early.c compares the bytes of both ways
# on the same spool).
. "$abs_top_srcdir/tests/e2e/agent-common.sh"

export FXT_LIBC=none
plan 31

# stats ARCHIVE: fxt-dump --stats but for the times, which differ from
# run to run, and the size: where the first thread's early file became
# the archive, past 8 MiB of events (convert/early.c, CONV_EARLY_COPY_MAX),
# padding records (which readers skip) fill the room before its events
# (EARLY_FRONT: under 64 KiB); a smaller one is copied, no padding.
stats() { "$FXT_DUMP" --stats "$1" | grep -v -E '^(first|last|span)_ns |^bytes '; }
bytes() { "$FXT_DUMP" --stats "$1" | sed -n 's/^bytes //p'; }

# both NAME EXT PROGRAM ARGS...: the program traced both ways, to
# early.EXT and late.EXT.  Compressed, the sizes are the uncompressed
# ones (fxt-dump --stats), the padding (empty gzip members, zstd skippable
# frames) holds nothing.
both() {
  b_name=$1 b_ext=$2; shift 2
  mkdir "$TMPD/$b_name" && cd "$TMPD/$b_name" || exit 1
  FXT_RUN_DEBUG=1 trace "early.$b_ext" "$@"
  is "$rc" 0 "$b_name: fxt-run exits 0"
  diag "$b_name: $(sed -n 's/^fxt-run: early: //p' "$TMPD/err")"
  FXT_RUN_LATE=1 trace "late.$b_ext" "$@"
  check_archive "$b_name" "early.$b_ext"
  is "$(stats "early.$b_ext")" "$(stats "late.$b_ext")" \
    "$b_name: fxt-dump --stats counts the same"
  b_early=$(bytes "early.$b_ext") b_late=$(bytes "late.$b_ext")
  if [ "$b_late" -le $((8 << 20)) ]; then
    is "$b_early" "$b_late" "$b_name: the same size, no padding ($b_late bytes)"
  else
    ok "$b_name: the same size, or more by its padding ($((b_early - b_late)) bytes)" \
      test "$b_early" -ge "$b_late" -a "$((b_early - b_late))" -lt 65536
  fi
  is "$(flat "early.$b_ext")" "$(flat "late.$b_ext")" \
    "$b_name: the same calls of the same functions"
  is "$(stat_of "early.$b_ext" overlaps)/$(stat_of "early.$b_ext" unmatched)" "0/0" \
    "$b_name: exact nesting"
  is "$(ls | tr '\n' ' ')" "early.$b_ext late.$b_ext " "$b_name: nothing else left"
  cd "$TMPD" || exit 1
}

both fib fxt "$PROGS/calls_fib" 27
both threads fxt "$PROGS/stress_threads"
# Compressed as it is converted: the threads' files hold whole members or
# frames, the archive's take them as they are.
both fib-gz fxt.gz "$PROGS/calls_fib" 27
both threads-zst fxt.zst "$PROGS/stress_threads"

# A small archive whose first thread's chunks were converted early:
# calls_fib's last write held 2 s by a full pipe (64 KiB in it before) while
# the early converter takes them.  Its file, under 8 MiB, is copied into
# the archive: no padding, the size of the archive converted at the end.
mkdir "$TMPD/held" && cd "$TMPD/held" || exit 1
{ head -c 65536 /dev/zero; FXT_RUN_DEBUG=1 "$FXT_RUN" -o early.fxt -- "$PROGS/calls_fib" 25 2>"$TMPD/err"; } |
  { sleep 2; cat >/dev/null; }
diag "held: $(sed -n 's/^fxt-run: early: //p' "$TMPD/err")"
FXT_RUN_LATE=1 trace late.fxt "$PROGS/calls_fib" 25
check_archive "held" early.fxt
is "$(stats early.fxt)" "$(stats late.fxt)" "held: fxt-dump --stats counts the same"
is "$(bytes early.fxt)" "$(bytes late.fxt)" "held: the same size, no padding"
cd "$TMPD" || exit 1
