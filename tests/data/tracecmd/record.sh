#!/bin/sh
# Records a small trace.dat with trace-cmd: what made the files next to
# this script (README.md), and what tests/e2e/import-tracedat.sh runs when
# the kernel lets it.  Root only.
#
#   record.sh OUT.dat [CLOCK]
#
# Top buffer: the scheduler's switch, wake-up, fork and exec events, the
# write(2) syscall entries, kernel stacks of every event (-T) and one
# trace_marker line; buffer "fxtinst": sched_process_exit.  The workload
# is a shell that writes and sleeps three times, then marks; or the shell
# command in $FXT_RECORD_CMD; $FXT_RECORD_EVENTS replaces the events of
# the top buffer (trace-cmd record's options, e.g. "-b 65536 -e
# raw_syscalls", for bench/import.sh).  CLOCK defaults to mono (what
# fxt-run's archives use).
#
# Everything happens in a private mount namespace (unshare -m), where
# tracefs is mounted if it is not, and where a few files trace-cmd writes
# but containers refuse are covered with bind mounts: the function
# tracer's filters and /proc/sys/kernel/ftrace_enabled (trace-cmd writes
# them even for events only, and gives up on EPERM), and /proc/kallsyms
# (a few symbols, so the file stays small; stack frames resolve to the
# nearest of them).  The host's tracing state is put back by trace-cmd.
set -eu
out=$1
clock=${2:-mono}
if [ "${FXT_RECORD_INNER:-}" != 1 ]; then
  command -v trace-cmd >/dev/null || { echo "record.sh: trace-cmd is not installed" >&2; exit 77; }
  command -v unshare >/dev/null || { echo "record.sh: unshare is not installed" >&2; exit 77; }
  [ "$(id -u)" -eq 0 ] || { echo "record.sh: needs root" >&2; exit 77; }
  case $out in /*) ;; *) out=$PWD/$out ;; esac
  # One recording at a time: two trace-cmd sessions share the kernel's
  # buffers and would take each other's events (the tests run in parallel).
  exec 9> "${TMPDIR:-/tmp}/fxt-record-tracefs.lock"
  flock -w 120 9 || { echo "record.sh: another recording holds the lock" >&2; exit 77; }
  FXT_RECORD_INNER=1 exec unshare -m "$0" "$out" "$clock"
fi
T=/sys/kernel/tracing
[ -e $T/trace_marker ] || mount -t tracefs nodev $T 2>/dev/null ||
  { echo "record.sh: no tracefs here" >&2; exit 77; }
work=$(mktemp -d)
trap 'cleanup' EXIT
# trace-cmd record -T turns the stacktrace option on and may leave it so.
stacktrace=$(cat $T/options/stacktrace 2>/dev/null || echo 0)
rec=
cleanup() {
  echo "$stacktrace" > $T/options/stacktrace 2>/dev/null || true
  # trace-cmd's per-CPU readers outlive it when it dies: its session goes.
  [ -n "$rec" ] && kill -KILL -- "-$rec" 2>/dev/null
  for f in set_ftrace_filter set_ftrace_notrace set_ftrace_notrace_pid set_ftrace_pid; do
    umount $T/instances/fxtinst/$f 2>/dev/null || true
  done
  rmdir $T/instances/fxtinst 2>/dev/null || true
  rm -rf "$work"
}
: > "$work/empty"
echo 1 > "$work/one"
mount --bind "$work/one" /proc/sys/kernel/ftrace_enabled 2>/dev/null || true
# The instance is made here, so that its own filter files can be covered.
mkdir -p $T/instances/fxtinst
for f in set_ftrace_filter set_ftrace_notrace set_ftrace_notrace_pid set_ftrace_pid; do
  for d in $T $T/instances/fxtinst; do
    [ -e $d/$f ] && mount --bind "$work/empty" $d/$f 2>/dev/null || true
  done
done
grep -E ' [Tt] (schedule|__schedule|do_nanosleep|hrtimer_nanosleep|ksys_write|vfs_write|do_syscall_64|entry_SYSCALL_64|__x64_sys_write|__x64_sys_nanosleep)$' \
  /proc/kallsyms > "$work/kallsyms" || true
mount --bind "$work/kallsyms" /proc/kallsyms 2>/dev/null || true
cd "$work"
# shellcheck disable=SC2086
setsid trace-cmd record -C "$clock" \
  ${FXT_RECORD_EVENTS:--T -e sched_switch -e sched_wakeup -e sched_waking \
  -e sched_process_fork -e sched_process_exec -e syscalls:sys_enter_write} \
  -B fxtinst -e sched_process_exit -o "$out" > "$work/log" 2>&1 &
rec=$!
# trace-cmd is recording once its per-CPU readers have opened their files.
i=0
while [ $i -lt 50 ] && ! ls "$out".cpu* >/dev/null 2>&1; do sleep 0.1; i=$((i + 1)); done
sleep 0.5
sh -c "${FXT_RECORD_CMD:-for i in 1 2 3; do echo hi > /dev/null; sleep 0.01; done; echo fxt-mark > $T/trace_marker}"
kill -INT $rec
wait $rec || { cat "$work/log" >&2; exit 1; }
rec=
[ -s "$out" ] || { cat "$work/log" >&2; exit 1; }
