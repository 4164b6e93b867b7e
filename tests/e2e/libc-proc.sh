#!/bin/sh
# The proc group on an uninstrumented program (tests/progs/libc_proc.c):
# fork and vfork with their flow into the child, the wait family, posix_spawn,
# system, exec, exit/_exit/_Exit; the program's output and exit status are
# unchanged, and the merged archive passes fxt-dump --check.
. "$abs_top_srcdir/tests/e2e/libc-proc-common.sh"

plan 83
prog=$PROGS/libc_proc

# fork_case NAME: libc_proc NAME forks (NAME = fork or vfork); the child
# _exits with 7, the parent reaps it with waitpid.
fork_case() {
  f=$1
  both "$f.fxt" --libc=proc -- "$prog" "$f"
  same "$f"
  is "$(cat "$TMPD/out")" "waitpid =pid status=1792 exit=7" "$f: what the program saw"
  check_archive "$f" "$f.fxt"
  parent=$(slice_args "$f.fxt" "$f" | sed -n 's/^pid=\([0-9]*\) .*/\1/p')
  child=$(slice_args "$f.fxt" "fork (child)" | sed -n 's/^pid=\([0-9]*\) .*/\1/p')
  ok "$f: one $f slice in the parent, one \"fork (child)\" slice in another process" \
    test -n "$parent" -a -n "$child" -a "$parent" != "$child"
  # ev_fork_flow_id(): kind 2 in bits 63..60, the parent's pid at 30, the child's.
  id=$(((2 << 60) | (parent << 30) | child))
  is "$(slice_args "$f.fxt" "$f")" "pid=$parent caller:str=\"do_fork\", result:i64=$child" \
    "$f: the parent's slice: caller and the child's pid"
  is "$(flow_ids "$f.fxt" flow_begin "$f")" "pid=$parent $id" "$f: flow begin in the parent's $f slice"
  is "$(slice_args "$f.fxt" "fork (child)")" \
    "pid=$child caller:str=\"do_fork\", parent_pid:i64=$parent" \
    "$f: the child's first slice: the parent's pid"
  is "$(flow_ids "$f.fxt" flow_end "fork (child)")" "pid=$child $id" \
    "$f: flow end, same id, in the child's \"fork (child)\" slice"
  is "$(slice_args "$f.fxt" waitpid)" \
    "pid=$parent caller:str=\"do_fork\", pid:i64=$child, options:i64=0, status:i64=1792, result:i64=$child" \
    "$f: waitpid: pid, options, the child's status (exit 7), result"
  is "$(slice_args "$f.fxt" _exit)" "pid=$child caller:str=\"do_fork\", status:i64=7" \
    "$f: the child's _exit slice"
}

fork_case fork
fork_case vfork

# The wait family; then waitpid with no child left: -1, ECHILD.
both waits.fxt --libc=proc -- "$prog" waits
same waits
is "$(cat "$TMPD/out")" "$(printf '%s\n' 'wait =pid status=256' 'wait4 =pid status=512' \
  'waitid 0 =pid status=3' 'waitpid -1 ECHILD')" "waits: what the program saw"
check_archive waits waits.fxt
kids=$(slice_args waits.fxt fork | sed -n 's/.*result:i64=\([0-9]*\)$/\1/p' | tr '\n' ' ')
set -- $kids
is "$#" 3 "waits: three forks"
is "$(slice_args waits.fxt wait | sed 's/^pid=[0-9]* //')" \
  "caller:str=\"do_waits\", status:i64=256, result:i64=$1" "waits: wait: status, result"
is "$(slice_args waits.fxt wait4 | sed 's/^pid=[0-9]* //')" \
  "caller:str=\"do_waits\", pid:i64=$2, options:i64=0, status:i64=512, result:i64=$2" \
  "waits: wait4: pid, options, status, result"
# type 1 = P_PID, options 4 = WEXITED; si_status is the exit code.
is "$(slice_args waits.fxt waitid | sed 's/^pid=[0-9]* //')" \
  "caller:str=\"do_waits\", type:i64=1, options:i64=4, pid:i64=$3, status:i64=3, result:i64=0" \
  "waits: waitid: type, options, pid, status, result"
is "$(slice_args waits.fxt waitpid | sed 's/^pid=[0-9]* //')" \
  "caller:str=\"do_waits\", pid:i64=-1, options:i64=0, errno:str=\"ECHILD\", result:i64=-1" \
  "waits: waitpid failing: errno ECHILD, result -1"

# posix_spawnp: the file and the child's pid.
both spawn.fxt --libc=proc -- "$prog" spawn
same spawn
is "$(cat "$TMPD/out")" "posix_spawnp 0 waitpid =pid exit=6" "spawn: what the program saw"
check_archive spawn spawn.fxt
spawned=$(slice_args spawn.fxt waitpid | sed -n 's/.*result:i64=\([0-9]*\)$/\1/p')
is "$(slice_args spawn.fxt posix_spawnp | sed 's/^pid=[0-9]* //')" \
  "caller:str=\"do_spawn\", file:str=\"sh\", pid:i64=$spawned, result:i64=0" \
  "spawn: posix_spawnp: file, the child's pid, result 0"

# system: the shell's output goes through unchanged; command and status.
both system.fxt --libc=all -- "$prog" system
same system
is "$(cat "$TMPD/out")" "$(printf '%s\n' from-system 'system status=1280 exit=5')" \
  "system: the command's output and status"
check_archive system system.fxt
is "$(slice_args system.fxt system | sed 's/^pid=[0-9]* //')" \
  "caller:str=\"do_system\", command:str=\"echo from-system; exit 5\", result:i64=1280" \
  "system: command and result"

# A failed exec returns -1 with ENOENT, as without the agent; its slice
# (closed at the flush that preceded it) has the path and the arguments.
both execfail.fxt --libc=proc -- "$prog" execfail
same execfail
is "$(cat "$TMPD/out")" "execv -1 ENOENT" "execfail: -1 and ENOENT"
check_archive execfail execfail.fxt
is "$(slice_args execfail.fxt execv | sed 's/^pid=[0-9]* //')" \
  "caller:str=\"do_execfail\", path:str=\"/nonexistent/libc_proc\", argv:str=\"missing\"" \
  "execfail: execv slice: path and argv"

# A successful exec: the first image's archive shows the exec (one frame:
# execl -> execv -> execve is one call of the program's), the new image's
# its exit.
both exec.fxt --libc=proc -- "$prog" exec
same exec
is "$(cat "$TMPD/out")" "exit 0" "exec: the new image ran"
check_archive exec exec.fxt
is "$(slice_args exec.fxt 'exec[a-z]*' | sed 's/^pid=[0-9]* //')" \
  "caller:str=\"main\", path:str=\"$prog\", argv:str=\"libc_proc exit 0\"" \
  "exec: one execl slice: path and argv"
is "$(events exec.fxt | grep -c 'name="exec')" 1 "exec: execl only, not execv/execve inside it"
is "$(slice_args exec.fxt exit | sed 's/^pid=[0-9]* //')" \
  "caller:str=\"main\", status:i64=0" "exec: the new image's exit"

# exit(3): the status goes through; the frame, open while the atexit
# handlers run, is closed by the flush.  _exit(4), _Exit(5): closed at
# once (the spool is recovered by fxt-run).
for e in exit:3 _exit:4 _Exit:5; do
  fn=${e%:*} code=${e#*:}
  both "$fn.fxt" --libc=proc -- "$prog" "$fn" "$code"
  same "$fn $code"
  check_archive "$fn" "$fn.fxt"
  is "$(slice_args "$fn.fxt" "$fn" | sed 's/^pid=[0-9]* //')" \
    "caller:str=\"main\", status:i64=$code" "$fn: the slice and its status"
done
# exit's frame stays open while the atexit handlers run: their calls nest
# inside it.
both atexit.fxt --libc=proc -- "$prog" atexit
same atexit
is "$("$CALLTREE" --tree atexit.fxt)" "$(printf '%s\n' 'thread libc_proc' '  exit 1' '    waitpid 1')" \
  "atexit: the handler's waitpid inside exit"

# Without the proc group, nothing is recorded (the program calls nothing
# else the agent records) and nothing changes.
both none.fxt --libc=none -- "$prog" fork
same "fork, --libc=none"
is "$(events none.fxt | grep -c .)" 0 "fork, --libc=none: no events"
finish
