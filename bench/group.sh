# Sourced by the bench scripts that time whole runs (run.sh, compress.sh,
# patch.sh):
# run as root where the kernel groups tasks by session (autogroup), the
# script runs itself again in a session of its own whose group is at nice
# -20, so that other sessions' work weighs less on its rounds (nice -20
# alone barely helps there: bench/README.md).  BENCH_GROUP=0 keeps it
# where it is.  Uses the caller's "$0" and "$@".  Also settle(), for the
# runs timed in that session.
if [ "${BENCH_GROUP:-1}" != 0 ] && [ -z "${FXT_BENCH_GROUPED:-}" ] && [ "$(id -u)" = 0 ] &&
  [ "$(cat /proc/sys/kernel/sched_autogroup_enabled 2>/dev/null)" = 1 ] &&
  command -v setsid >/dev/null 2>&1; then
  FXT_BENCH_GROUPED=1 exec setsid -w sh "$0" "$@"
fi
if [ -n "${FXT_BENCH_GROUPED:-}" ]; then
  echo -20 >/proc/self/autogroup 2>/dev/null || true
  renice -n -20 -p $$ >/dev/null 2>&1 || true
fi

# settle: waits (2 s at most) while a process named fxt-run is left in this
# session: the child that frees a large spool's pages after the run.
settle() {
  s_i=0
  while [ $s_i -lt 100 ] && pgrep -s 0 -x fxt-run >/dev/null 2>&1; do
    sleep 0.02
    s_i=$((s_i + 1))
  done
}
