#!/bin/sh
# The log group on an uninstrumented program (tests/progs/libc_log.c, built
# plainly and with _FORTIFY_SOURCE=2): what it prints to stdout and stderr
# becomes log records and "log" instants, one per line, with the text it
# printed; its output and exit status are unchanged byte for byte.
. "$abs_top_srcdir/tests/e2e/libc-proc-common.sh"

plan 73
log=$PROGS/libc_log

# 50 printf calls -> the same 50 lines, as log records and as instants.
both lines.fxt --libc=log -- "$log" lines 50
same lines
check_archive lines lines.fxt
want=$(seq 1 50 | sed 's/^/line /')
is "$(log_records lines.fxt)" "$want" "lines: 50 log records, the printed lines"
is "$(log_lines lines.fxt stdout)" "$want" "lines: 50 log instants, stream stdout"
is "$(events lines.fxt | grep -c 'event instant cat="log" name="line [0-9]*" args=')" 50 \
  "lines: the instants are named after their line"

# log_dump ARCHIVE STREAM: the lines that stream's instants carry, in order.
log_dump() { log_lines "$1" "$2"; }

# printed FILE: the lines of FILE, without the program's one line of binary
# data (bin\0ary), which is not logged (and the last line, which has no
# newline, as it is).
printed() { grep -a -v '^bin' "$1"; }

for v in libc_log libc_log_fortify; do
  both "$v.fxt" --libc=all -- "$PROGS/$v" mixed
  same "$v mixed"
  check_archive "$v mixed" "$v.fxt"
  is "$(log_dump "$v.fxt" stdout)" "$(printed "$TMPD/plain.out")" \
    "$v mixed: stdout lines as logged (printf, puts, fputs, fputc/putc/putchar, %m, %n, dprintf, 3000 bytes, partial lines)"
  is "$(log_dump "$v.fxt" stderr)" "$(printed "$TMPD/plain.err")" \
    "$v mixed: stderr lines as logged (fprintf, perror, warn, warnx, error, error_at_line)"
  is "$(log_lines "$v.fxt" stdout | grep -c 'bin\\x00ary')" 0 \
    "$v mixed: binary data (a NUL, with fwrite) not logged"
  is "$(events "$v.fxt" | sed -n 's/.* name="\(.*\)" args={stream:str="syslog", priority:i64=\([0-9]*\)}$/\1 \2/p')" \
    "syslog 7 4" "$v mixed: syslog message, with its priority (LOG_WARNING)"
  is "$(log_lines "$v.fxt" stdout | awk '{ print length($0) }' | sort -n | tail -n 1)" 3000 \
    "$v mixed: a 3000-byte line is one line (records of 1 KiB joined)"
  is "$(log_records "$v.fxt" | wc -l)" "$(($(wc -l <"$TMPD/plain.out") + $(wc -l <"$TMPD/plain.err") + 1))" \
    "$v mixed: one log record per line (the binary one: none; the unterminated last line and syslog's: one)"
done

# err/errx/error: the message is logged before they exit; status unchanged.
for e in err:5 errx:6 error:7; do
  fn=${e%:*} code=${e#*:}
  both "$fn.fxt" --libc=log -- "$log" "$fn" "$code"
  same "$fn $code"
  is "$rc" "$code" "$fn: exits with $code"
  check_archive "$fn" "$fn.fxt"
  is "$(log_lines "$fn.fxt" stderr)" "$(cat "$TMPD/plain.err")" "$fn: the message as printed"
done

# One call records at most 64 KiB; the rest is counted (FXT_DEBUG).
export FXT_DEBUG=1
both big.fxt --libc=log -- "$log" big 70001
unset FXT_DEBUG
ok "big: stdout unchanged" cmp -s "$TMPD/plain.out" "$TMPD/out"
is "$(log_lines big.fxt stdout | tr -d '\n' | wc -c)" 65536 "big: the first 64 KiB logged"
is "$(log_lines big.fxt stderr)" "" "big: the agent's own messages are not logged"
is "$(sed -n 's/^fxtrace\[[0-9]*\]: \(log: [0-9]* bytes of output not recorded\)$/\1/p' "$TMPD/err")" \
  "log: 4465 bytes of output not recorded" "big: the rest counted"

# Two threads print lines in pieces at the same time: each thread's lines
# are assembled on their own, in order, on its own track.
# (The threads' pieces interleave at random in the output itself: only
# its size is compared.)
both threads.fxt --libc=log -- "$log" threads
is "$rc" "$prc" "threads: exit status unchanged"
is "$(wc -c <"$TMPD/out")" "$(wc -c <"$TMPD/plain.out")" "threads: as many bytes printed"
check_archive threads threads.fxt
tids=$(events threads.fxt | sed -n 's/^ts=[^ ]* pid=[0-9]* tid=\([0-9]*\) log msg="t[AB] 1"$/\1/p' | sort -u)
is "$(echo "$tids" | wc -l)" 2 "threads: two threads logged"
for tid in $tids; do
  lines=$(events threads.fxt | sed -n "s/^ts=[^ ]* pid=[0-9]* tid=$tid log msg=\"\(.*\)\"\$/\1/p")
  who=$(echo "$lines" | sed -n '1s/ .*//p')
  is "$lines" "$(seq 1 20 | sed "s/^/$who /")" "threads: thread $who's 20 lines, whole, in order"
done

# Newlines stored by putc_unlocked/putchar_unlocked (inline code, no
# call) are found in stdout's buffer at the next call: one line per name.
both unlocked.fxt --libc=log -- "$log" unlocked
same unlocked
is "$(log_lines unlocked.fxt stdout)" "$(printf '%s\n' dir/ dir/a.txt dir/b.txt end)" \
  "unlocked: the lines as printed"

# Only inline code, and a return from main: found at exit, before the
# flush (stdout is written out after it).
both macros.fxt --libc=log -- "$log" macros
same macros
is "$(log_lines macros.fxt stdout)" "$(printf '%s\n' m1 m2 m3)" "macros: the lines as printed"

# printf is not formatted a second time for the log (its text is taken
# from stdout's buffer, a file's: fully buffered): a conversion of the
# program's own whose handler counts its calls prints the same numbers.
both specifier.fxt --libc=log -- "$log" specifier 20
same specifier
is "$(log_lines specifier.fxt stdout)" "$(cat "$TMPD/plain.out")" "specifier: the lines as printed"

# Binary output (gzip -c to stdout, through write) is not logged.
if command -v gzip >/dev/null 2>&1; then
  seq 1 20000 >nums
  both gzip.fxt --libc=all -- gzip -c nums
  ok "gzip -c: the same compressed bytes" cmp -s "$TMPD/plain.out" "$TMPD/out"
  is "$(events gzip.fxt | grep -c -e ' log msg=' -e 'cat="log"')" 0 "gzip -c: nothing logged"
else
  skip "gzip not installed"
  skip "gzip not installed"
fi

# Without the log group: no log records, no log instants.
both nolog.fxt --libc=io,proc -- "$log" mixed
same nolog
is "$(events nolog.fxt | grep -c -e ' log msg=' -e 'cat="log"')" 0 "nolog: nothing logged"
finish
