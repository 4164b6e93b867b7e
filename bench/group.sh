# Sourced by the bench scripts that time whole runs (run.sh, compress.sh):
# run as root where the kernel groups tasks by session (autogroup), the
# script runs itself again in a session of its own whose group is at nice
# -20, so that other sessions' work weighs less on its rounds (nice -20
# alone barely helps there: bench/README.md).  BENCH_GROUP=0 keeps it
# where it is.  Uses the caller's "$0" and "$@".
if [ "${BENCH_GROUP:-1}" != 0 ] && [ -z "${FXT_BENCH_GROUPED:-}" ] && [ "$(id -u)" = 0 ] &&
  [ "$(cat /proc/sys/kernel/sched_autogroup_enabled 2>/dev/null)" = 1 ] &&
  command -v setsid >/dev/null 2>&1; then
  FXT_BENCH_GROUPED=1 exec setsid -w sh "$0" "$@"
fi
if [ -n "${FXT_BENCH_GROUPED:-}" ]; then
  echo -20 >/proc/self/autogroup 2>/dev/null || true
  renice -n -20 -p $$ >/dev/null 2>&1 || true
fi
