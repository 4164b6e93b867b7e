# Shared by the attach tests (attach-inject.sh, attach-agent.sh,
# attach-run.sh, attach-sample.sh): tests/progs/attach_target run as the
# process attached to, its input a FIFO the test writes lines into.
# Source it after tests/lib/test_subr.sh and scratch, in $TMPD.

CALLTREE=$HELPERS/fxt_calltree
INJECT=$HELPERS/fxt_inject
AGENT=$abs_top_builddir/.libs/libfxt-agent.so
# With --spin, attach_target spins until this file exists.
export ATTACH_TARGET_STOP=$TMPD/stop

# wait_until COMMAND...: waits (10 s at most) until COMMAND succeeds.
wait_until() {
  i=0
  while [ $i -lt 200 ] && ! "$@" 2>/dev/null; do sleep 0.05; i=$((i + 1)); done
}
ready() { grep -q ready out; }

# start ARGS...: attach_target ARGS in the background, its standard input a
# FIFO held open on fd 9, once it said "ready"; $target is its pid.
start() {
  rm -f in out stop
  mkfifo in
  "$PROGS/attach_target" "$@" <in >out 2>err &
  target=$!
  exec 9>in
  wait_until ready
}

# calls N: N calls of work() in an attach_target --serve, returned.
calls() {
  echo "call $1" >&9
  wait_until grep -q "^done $1\$" out
}

# work_calls ARCHIVE: the calls of work() it holds.
work_calls() { "$CALLTREE" --flat "$1" | awk '$2 == "work" { print $1 }'; }

# text_is_file: the target's program text, as mapped, is its file's.
text_is_file() {
  exe=$(readlink "/proc/$target/exe")
  awk -v exe="$exe" '$2 ~ /x/ && $6 == exe { print $1, $3 }' "/proc/$target/maps" >text.maps
  [ -s text.maps ] || return 1
  while read -r range off; do
    lo=$(printf '%d' "0x${range%-*}")
    hi=$(printf '%d' "0x${range#*-}")
    pages=$(((hi - lo) / 4096))
    dd if="/proc/$target/mem" bs=4096 skip=$((lo / 4096)) count=$pages 2>/dev/null >mem.bin
    dd if="$exe" bs=4096 skip=$((0x$off / 4096)) count=$pages 2>/dev/null >file.bin
    cmp -s mem.bin file.bin || return 1
  done <text.maps
}

# block FILE NAME=VALUE...: the settings block fxt-run writes.
block() {
  f=$1
  shift
  : >"$f"
  for kv in "$@"; do printf '%s\0' "$kv" >>"$f"; done
  printf '\0' >>"$f"
  chmod 600 "$f"
}

# agent [--again] FUNCTION [ARG]: the agent's FUNCTION called in the
# target through fxt_inject (as fxt-run -p does); prints what it returned.
agent() {
  again=
  [ "$1" = --again ] && { again=--again; shift; }
  "$INJECT" $again $target "$AGENT" "$1" "${2:-x}" 2>&1 | sed -n 's/^returned //p; s/^fxt_inject: //p'
}

# agent_start [--again] BLOCK: fxt_attach_start(BLOCK), as fxt-run calls
# it, then, when it returned its status's address, the status once the
# agent's thread is done: 0 when recording, else the negative errno.
agent_start() {
  r=$(agent "$@")
  case $r in
  -* | "") echo "$r" ;;
  *)
    i=0
    while s=$("$INJECT" --peek $target "$r") && [ "$s" = 1 ] && [ $i -lt 400 ]; do
      sleep 0.025
      i=$((i + 1))
    done
    [ "$s" = 2 ] && echo 0 || echo "$s"
    ;;
  esac
}
