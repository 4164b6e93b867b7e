#!/bin/sh
# The io and sleep groups of the libc wrappers (agent/libc/wrap_fd.c,
# agent/libc/wrap_stdio.c, agent/libc/wrap_net.c, agent/libc/io_fds.c, agent/libc/wrap_sleep.c)
# on tests/progs/libc_io_prog, an uninstrumented
# program: exact slices and arguments, errors passed through unchanged,
# the groups switched by FXT_LIBC, the fortified entry points, output
# byte-identical with and without the agent.
. "$abs_top_srcdir/tests/e2e/agent-common.sh"

plan 39
prog=$PROGS/libc_io_prog
fortify=$PROGS/libc_io_prog_fortify
SLICES=$HELPERS/libc_slices

# io_trace GROUPS ARCHIVE PROGRAM [ARGS...]: trace() with FXT_LIBC=GROUPS.
io_trace() {
  i_groups=$1; shift
  FXT_LIBC=$i_groups trace "$@"
}

# plain PROGRAM [ARGS...]: without the agent, into plain.out/plain.err.
plain() {
  prc=0
  "$@" >"$TMPD/plain.out" 2>"$TMPD/plain.err" || prc=$?
}

# same_run NAME: status, stdout and stderr of the traced run equal the
# plain run's (fxt-run's own summary line left out of stderr).
same_run() {
  is "$rc" "$prc" "$1: exit status unchanged"
  if cmp -s "$TMPD/out" "$TMPD/plain.out" &&
    grep -v '^fxt-run: ' "$TMPD/err" | cmp -s - "$TMPD/plain.err"; then
    ok "$1: stdout and stderr byte-identical" true
  else
    ok "$1: stdout and stderr byte-identical" false
    diff "$TMPD/plain.out" "$TMPD/out" | head -5 | sed 's/^/#   /'
  fi
}

# slices CATEGORY ARCHIVE: "T NAME key=value..." per slice, "caller=..."
# dropped (it depends on the symbolizer, not on us).
slices() { "$SLICES" --slices "$1" "$2" | sed 's/ caller=[^ ]*//'; }

# count PATTERN FILE: lines of FILE matching the extended regex.
count() { grep -Ec -- "$1" "$2" || true; }

# ---------------------------------------------------------------- writes
# 100 writes of 10 bytes: exactly 100 write slices with count and result
# 10, between one open (path, flags, mode) and one close.
plain "$prog" writes 100 "$TMPD/plain.data"
io_trace io writes.fxt "$prog" writes 100 "$TMPD/data"
same_run writes
check_archive writes writes.fxt
slices libc.io writes.fxt >writes.txt
is "$(count '^1 write fd=[0-9]+ count=10 result=10$' writes.txt)" 100 \
  "writes: 100 write slices, count=10 result=10"
is "$(count ' write ' writes.txt)" 100 "writes: no other write slice"
fd=$(sed -n 's/^1 open .* result=\([0-9]*\)$/\1/p' writes.txt)
is "$(grep -c "^1 write fd=$fd " writes.txt)" 100 "writes: on the fd open returned"
is "$(grep -E '^1 open ' writes.txt)" \
  "1 open flags=577 mode=420 path=$TMPD/data result=$fd" \
  "writes: open with flags (O_WRONLY|O_CREAT|O_TRUNC), mode 0644 and path"
is "$(grep -E '^1 close ' writes.txt)" "1 close fd=$fd result=0" "writes: close"
is "$(wc -c <"$TMPD/data" | tr -d ' ')" 1000 "writes: the file has its 1000 bytes"

# ---------------------------------------------------------------- errors
# Failures pass through: the same results and errno with and without the
# agent, and the slices say the same.
plain "$prog" errors "$TMPD"
is "$(cat "$TMPD/plain.out")" "open -1 ENOENT
read -1 EBADF
close -1 EBADF" "errors: plain run sees ENOENT, EBADF, EBADF"
io_trace io errors.fxt "$prog" errors "$TMPD"
same_run errors
check_archive errors errors.fxt
slices libc.io errors.fxt >errors.txt
is "$(grep -c "^1 open flags=0 path=$TMPD/missing errno=ENOENT result=-1\$" errors.txt)" 1 \
  "errors: open -> result -1, errno ENOENT, with its path"
is "$(count '^1 read fd=[0-9]+ count=1 errno=EBADF result=-1$' errors.txt)" 1 \
  "errors: read of a closed fd -> result -1, errno EBADF"
is "$(count '^1 close fd=[0-9]+ errno=EBADF result=-1$' errors.txt)" 1 \
  "errors: second close -> result -1, errno EBADF"

# ---------------------------------------------------------------- sleeps
plain "$prog" sleeps
io_trace sleep sleeps.fxt "$prog" sleeps
same_run sleeps
check_archive sleeps sleeps.fxt
is "$(slices libc.sleep sleeps.fxt)" "1 usleep useconds=1000 result=0
1 nanosleep ns=1000000 result=0
1 clock_nanosleep clock=1 flags=0 ns=1000000 result=0
1 sched_yield result=0
1 sleep seconds=0 result=0" "sleeps: the five calls with their durations"
dur=$("$FXT_DUMP" sleeps.fxt | sed -n 's/.*name="nanosleep" dur=\([0-9]*\)ns.*/\1/p')
ok "sleeps: nanosleep's slice lasts at least 1 ms ($dur ns)" test "${dur:-0}" -ge 1000000

# FXT_LIBC=io: no sleep slices; none: no libc slices at all.
io_trace io sleeps-io.fxt "$prog" sleeps
is "$("$FXT_DUMP" sleeps-io.fxt | grep -c 'cat="libc\.sleep"')" 0 "FXT_LIBC=io: no sleep slice"
io_trace none none.fxt "$prog" writes 10 "$TMPD/data"
check_archive none none.fxt
is "$("$FXT_DUMP" none.fxt | grep -c 'cat="libc\.')" 0 "FXT_LIBC=none: no libc slice"

# ---------------------------------------------------------------- stdio
plain "$prog" stdio "$TMPD/plain.stdio"
io_trace io stdio.fxt "$prog" stdio "$TMPD/stdio"
same_run stdio
check_archive stdio stdio.fxt
slices libc.io stdio.fxt | sed 's/0x[0-9a-f]*/P/g' >stdio.txt
is "$(grep -E ' (fopen|fwrite|fflush|fclose|fread) ' stdio.txt | sed 's/fd=[0-9]*/fd=N/g')" \
  "1 fopen path=$TMPD/stdio mode=w fd=N result=P
1 fwrite size=4 nmemb=3 stream=P fd=N result=3
1 fflush stream=P fd=N result=0
1 fclose stream=P fd=N result=0
1 fopen path=$TMPD/stdio mode=r fd=N result=P
1 fread size=1 nmemb=31 stream=P fd=N result=12
1 fclose stream=P fd=N result=0" "stdio: fopen, fwrite, fflush, fclose, fread with arguments"

# ---------------------------------------------------------------- fortify
# Built with _FORTIFY_SOURCE=2: the checked entry points are recorded
# under their own names; the plain build calls the plain ones.
printf 'abcdefghijklmnop' >"$TMPD/in"
io_trace io chk.fxt "$fortify" chk "$TMPD/in" 4
is "$rc" 0 "fortify: runs"
check_archive fortify chk.fxt
is "$(slices libc.io chk.fxt | awk '{ print $2 }' | tr '\n' ' ')" \
  "__open_2 __read_chk __pread_chk fdopen __fread_chk fclose socketpair send __recv_chk __poll_chk close close " \
  "fortify: __open_2, __read_chk, __pread_chk, __fread_chk, __recv_chk, __poll_chk"
io_trace io chk-plain.fxt "$prog" chk "$TMPD/in" 4
is "$(slices libc.io chk-plain.fxt | awk '{ print $2 }' | tr '\n' ' ')" \
  "open read pread fdopen fread fclose socketpair send recv poll close close " \
  "fortify: the plain build calls the plain functions"
is "$(slices libc.io chk.fxt | grep -E '^1 (__read_chk|__recv_chk) ' | sed 's/fd=[0-9]*/fd=N/')" \
  "1 __read_chk fd=N count=4 result=4
1 __recv_chk fd=N count=4 flags=0 stream_offset=0 result=3" \
  "fortify: checked calls carry the same arguments"

# ---------------------------------------------------------------- output
# Program output goes through unchanged with the log group on (write,
# writev to stderr, fwrite to stdout).
plain "$prog" echo 'some text'
io_trace all echo.fxt "$prog" echo 'some text'
same_run echo
check_archive echo echo.fxt
is "$(cat "$TMPD/out")" "some text
some text" "echo: both lines on stdout"
is "$("$FXT_DUMP" echo.fxt | sed -n 's/.* log msg=//p')" '"some text"
"err: some text"
"some text"' "echo: write, writev and fwrite on fd 1 and 2 are log records"
io_trace io echo-io.fxt "$prog" echo 'some text'
is "$("$FXT_DUMP" echo-io.fxt | grep -c ' log msg=')" 0 "echo: FXT_LIBC=io: no log record"

finish
