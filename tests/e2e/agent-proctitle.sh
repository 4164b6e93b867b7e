#!/bin/sh
# Process names when a program retitles itself for ps over its argv
# (setproctitle, as nginx, PostgreSQL, redis and sshd do): each process is
# named by the program as it was executed, whether its spool is created
# before the title changes or after, in the process that retitled itself
# or in a fork child of it (tests/progs/proctitle).
. "$abs_top_srcdir/tests/e2e/agent-common.sh"

plan 6

# names ARCHIVE: the process names in ARCHIVE, one a line, sorted.
names() { "$FXT_DUMP" "$1" | sed -n 's/^kobj type=process koid=[0-9]* name="\(.*\)".*/\1/p' | sort; }

# The child's spool is created at its "fork (child)" frame, right after
# the fork: the parent's title is over argv then.
trace t.fxt "$PROGS/proctitle"
is "$rc" 0 "proc group: runs"
check_archive "proc group" t.fxt
is "$(names t.fxt)" "proctitle
proctitle" "proc group: both processes named by the program, not by their titles"

# No libc group: the child's spool is created at its first call, after
# it retitled itself too.
FXT_LIBC=none trace n.fxt "$PROGS/proctitle" "a title longer than the program's path and name"
is "$rc" 0 "no libc group: runs"
check_archive "no libc group" n.fxt
is "$(names n.fxt)" "proctitle
proctitle" "no libc group: both processes named by the program, not by their titles"
finish
