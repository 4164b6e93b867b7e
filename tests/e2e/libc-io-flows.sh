#!/bin/sh
# Pipe and socket flows (agent/libc/io_fds.c, agent/libc/wrap_net.c, agent/session.c): each write of
# a pipe or socket pair gets a flow into the read that consumed its first
# byte, in one thread, across threads, across a fork (pipe and socket
# pair), across the two programs of a shell pipeline, and across the
# separate archives of a run without fxt-run; the session file is
# removed at the end either way.  A write nobody traced reads: no warning.
. "$abs_top_srcdir/tests/e2e/agent-common.sh"

plan 44
prog=$PROGS/libc_io_prog
SLICES=$HELPERS/libc_slices

# io_trace ARCHIVE PROGRAM [ARGS...]: trace() with the io group only.
io_trace() { FXT_LIBC=io trace "$@"; }

# flows ARCHIVE: "BEGIN_SLICE -> END_SLICE same|other" per matched flow.
flows() { "$SLICES" --flows "$1"; }

# ids PHASE ARCHIVE...: the ids of the flow events of that phase, sorted.
ids() {
  i_phase=$1; shift
  for i_a in "$@"; do "$FXT_DUMP" "$i_a"; done |
    sed -n "s/.* event flow_$i_phase .* id=\\([0-9]*\\).*/\\1/p" | sort
}

# offsets NAME ARCHIVE: the stream_offset of each NAME slice, in order.
offsets() {
  "$SLICES" --slices libc.io "$2" |
    sed -n "s/^[0-9]* $1 .* stream_offset=\\([0-9]*\\).*/\\1/p" | tr '\n' ' '
}

# no_session: no session file left in the scratch directory.
no_session() {
  ok "$1: session file removed" test -z "$(find "$TMPD" -name '*.session')"
}

# ---------------------------------------------------------------- one thread
io_trace pipe.fxt "$prog" pipe 5
is "$rc" 0 "pipe: runs"
check_archive pipe pipe.fxt
is "$(flows pipe.fxt)" "$(printf 'write -> read same\n%.0s' 1 2 3 4 5)" \
  "pipe: five flows write -> read on the thread"
is "$(offsets write pipe.fxt)" "0 5 10 15 20 " "pipe: writes at stream offsets 0, 5 ... 20"
is "$(offsets read pipe.fxt)" "0 5 10 15 20 " "pipe: reads at the same offsets"
no_session pipe

# ---------------------------------------------------------------- fd reuse
# The fd cache follows close, open and dup2: a file opened on a closed
# pipe's fd number is no pipe; a pipe dup2()ed onto it is one again.
io_trace reuse.fxt "$prog" reuse "$TMPD/reuse.data"
is "$rc" 0 "reuse: runs (the file got the pipe's fd number)"
is "$("$SLICES" --slices libc.io reuse.fxt | sed -n 's/^1 \(write\|read\) .*stream_offset=\([0-9]*\).*/\1 \2/p;
  s/^1 write .* count=4 result=4$/write file/p')" "write 0
read 0
write file
write 0
read 0" "reuse: the file's write has no stream offset, the pipes' do"
is "$(flows reuse.fxt | sort | uniq -c | sed 's/^ *//')" "2 write -> read same" \
  "reuse: a flow per pipe, none from the file"

# ---------------------------------------------------------------- threads
io_trace threads.fxt "$prog" pipe-threads 5
is "$(cat "$TMPD/out")" "main read 30" "pipe-threads: all bytes read"
check_archive pipe-threads threads.fxt
is "$(flows threads.fxt | sort | uniq -c | sed 's/^ *//')" "5 write -> read other" \
  "pipe-threads: five flows from the writer thread to the reader"
is "$(ids begin threads.fxt)" "$(ids end threads.fxt)" \
  "pipe-threads: every begin has its end, same ids"

# ---------------------------------------------------------------- fork
for kind in pipe pair; do
  io_trace $kind-fork.fxt "$prog" $kind-fork 4
  is "$(cat "$TMPD/out")" "child read 28" "$kind-fork: the child read everything"
  check_archive $kind-fork $kind-fork.fxt
  is "$(flows $kind-fork.fxt | sort | uniq -c | sed 's/^ *//')" "4 write -> read other" \
    "$kind-fork: four flows from the parent's writes to the child's reads"
  is "$(ids begin $kind-fork.fxt | wc -l | tr -d ' ')" 4 "$kind-fork: four flow begins"
  is "$(ids begin $kind-fork.fxt)" "$(ids end $kind-fork.fxt)" \
    "$kind-fork: begin and end ids match"
done
no_session fork

# ---------------------------------------------------------------- tcp
# A loopback connection: both ends key the stream by its two addresses.
io_trace tcp.fxt "$prog" tcp 4
is "$(cat "$TMPD/out")" "received 20" "tcp: the parent received everything"
check_archive tcp tcp.fxt
is "$(flows tcp.fxt | sort | uniq -c | sed 's/^ *//')" "4 send -> recv other" \
  "tcp: four flows from the child's sends to the parent's recvs"
is "$(ids begin tcp.fxt)" "$(ids end tcp.fxt)" "tcp: begin and end ids match"

# ---------------------------------------------------------------- pipeline
# Two traced programs joined by the shell: the producer's write(1) and the
# consumer's read(0) are the two ends of one pipe.
"$prog" produce 6 | "$prog" consume >plain.out
io_trace sh.fxt sh -c "'$prog' produce 6 | '$prog' consume"
is "$(cat "$TMPD/out")" "$(cat plain.out)" "pipeline: output unchanged (consumed 48)"
check_archive pipeline sh.fxt
is "$(flows sh.fxt | sort | uniq -c | sed 's/^ *//')" "6 write -> read other" \
  "pipeline: six flows from produce's writes to consume's reads"
is "$(ids begin sh.fxt)" "$(ids end sh.fxt)" "pipeline: begin and end ids match"
is "$(offsets write sh.fxt)" "0 8 16 24 32 40 " "pipeline: write offsets"
no_session pipeline

# ---------------------------------------------------------------- recovered
# A reader killed before its flush: fxt-run recovers its archive from the
# spool, and its reads still end the writer's flows (the session is read
# before it is removed).
io_trace killed.fxt sh -c "'$prog' produce 3 | sh -c 'read line; kill -KILL \$\$'"
ok "recovered: the reader's archive recovered" grep -q "recovered from spool" "$TMPD/err"
is "$(flows killed.fxt | sort -u)" "write -> read other" \
  "recovered: the killed reader's read ends a write's flow"
no_session recovered

# ---------------------------------------------------------------- untraced reader
# Writes read by a program fxt-run does not trace (here the test's cat)
# begin flows that never end: expected, so fxt-dump --check counts them
# in a note and the archive has nothing to warn of.
FXT_LIBC=io "$FXT_RUN" -o untraced.fxt "$prog" produce 5 2>"$TMPD/err" | cat >/dev/null
"$FXT_DUMP" --check untraced.fxt >untraced.check 2>&1
is "$(sed -n 's/^untraced\.fxt: ok (.*, \([0-9]*\) errors, \([0-9]*\) warnings)$/\1\/\2/p' untraced.check)" \
  0/0 "untraced reader: --check passes without a warning"
ok "untraced reader: a note counts the 5 open flows" grep -q \
  '^untraced\.fxt: offset [0-9]*: note: 5 flow(s) begun and never ended (first: id [0-9]*): their other end was not traced' \
  untraced.check

# ---------------------------------------------------------------- no fxt-run
# Each process writes its own archive; the ids still match across them,
# and the root removes the session file at its flush.
mkdir bare
FXT_OUTPUT=$TMPD/bare/out.fxt FXT_LIBC=io LD_PRELOAD=$AGENT_SO "$prog" pipe-fork 3 >bare.out
is "$(cat bare.out)" "child read 21" "bare: runs"
is "$(ls bare | grep -c '^out\.[0-9]*\.fxt$')" 1 "bare: the child's own archive"
is "$(ids begin bare/out.fxt | wc -l | tr -d ' ')" 3 "bare: three flow begins in the parent's"
is "$(ids begin bare/out.fxt)" "$(ids end bare/out.*.fxt)" \
  "bare: the child's flow ends carry the parent's ids"
no_session bare

finish
