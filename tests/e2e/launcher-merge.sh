#!/bin/sh
# fxt-run leaves one archive: every traced process's archive (the root's,
# its children's, the images after an exec, those recovered from a spool)
# merged into OUT, the root's first, one provider per process (id = pid);
# the parts removed; --keep-parts keeps the per-process archives instead.
# Each run writes into a directory of its own, to see what it left there.
. "$abs_top_srcdir/tests/e2e/agent-common.sh"

plan 41
prog=$PROGS/fork_child

# providers ARCHIVE: the provider ids, in archive order, on one line.
providers() { "$FXT_DUMP" "$1" | sed -n 's/^provider_info id=\([0-9]*\) .*/\1/p' | tr '\n' ' '; }
# others ARCHIVE ROOT: the same without provider ROOT, which must come first
# if it is there.
others() { providers "$1" | sed "s/^$2 //"; }
# count ARCHIVE ROOT N: "N processes", one more if ROOT is in ARCHIVE.
count() {
  c_n=$3
  [ "$(others "$1" "$2")" != "$(providers "$1")" ] && c_n=$((c_n + 1))
  [ "$c_n" = 1 ] && echo "1 process" || echo "$c_n processes"
}
# nprocs ARCHIVE: "N processes" as fxt-dump --stats counts them, the
# summary's definition (fxt/counts.h).
nprocs() {
  n_n=$("$FXT_DUMP" --stats "$1" | sed -n 's/^processes //p')
  [ "$n_n" = 1 ] && echo "1 process" || echo "$n_n processes"
}
# pflat ARCHIVE PID: "COUNT NAME" per function of provider PID only.
pflat() { "$CALLTREE" --pid "$2" --flat "$1" | sort; }
# report_pids ARCHIVE: the processes fxt-report --by process has rows for.
report_pids() {
  "$abs_top_builddir/fxt-report" --by process --format csv "$1" |
    awk -F, 'NR > 1 { print $9 }' | sort -un | tr '\n' ' '
}
# run DIR ARCHIVE [OPTIONS] PROGRAM [ARGS...]: trace into DIR/ARCHIVE, DIR
# new.  The libc wrappers' records are not what these tests are about:
# most runs record the program's own functions only (--libc=none).
run() { d=$1; shift; mkdir "$d"; trace "$d/$@"; }
parent_calls=$(printf '%s\n' '1 main' '2 parent_work')

# --- A fork: both processes in OUT, the child's part removed.
run fork m.fxt --libc=none "$prog"
child=$(sed -n 's/^fork_child: child //p' "$TMPD/out")
set -- $(providers fork/m.fxt)
root=${1:-none}
is "$rc/$(ls fork)" "0/m.fxt" "fork: exit 0, one archive left, no part"
is "$(providers fork/m.fxt)" "$root $child " "fork: two providers, the root's first, then the child's"
check_archive "fork" fork/m.fxt
is "$(pflat fork/m.fxt "$root")" "$parent_calls" "fork: the root's calls in its section"
is "$(pflat fork/m.fxt "$child")" "3 child_work" "fork: the child's calls in its section"
is "$(report_pids fork/m.fxt)" "$(printf '%s\n' "$root" "$child" | sort -n | tr '\n' ' ')" \
  "fork: fxt-report --by process shows both processes"
ok "fork: one summary line, counting both processes" grep -q \
  "^fxt-run: wrote fork/m.fxt ([0-9.]* [KMG]*i*B, 6 events, 2 threads, 0 dropped); 2 processes\$" \
  "$TMPD/err"
is "$(grep -c '^fxt-run: ' "$TMPD/err")" 1 "fork: nothing else said"

# --- Why one archive: a flow from one process to another (here the proc
# group's fork -> child) has both ends in it, as a viewer needs.
run flow m.fxt --libc=proc "$prog"
child=$(sed -n 's/^fork_child: child //p' "$TMPD/out")
set -- $(providers flow/m.fxt)
flow_ids() {
  "$FXT_DUMP" flow/m.fxt | sed -n "s/.* pid=$1 .* event $2 .* id=\([0-9]*\)\$/\1/p" | sort
}
begins=$(flow_ids "${1:-none}" flow_begin) ends=$(flow_ids "$child" flow_end)
ok "flow: a flow begun in the parent ends in the child (got: $begins / $ends)" \
  test -n "$begins" -a "$begins" = "$ends"
check_archive "flow" flow/m.fxt

# --- --keep-parts: the archives as the processes wrote them.
run keep m.fxt --libc=none --keep-parts "$prog"
child=$(sed -n 's/^fork_child: child //p' "$TMPD/out")
is "$(ls keep | tr '\n' ' ')" "m.$child.fxt m.fxt " "--keep-parts: the root's and the child's archives"
set -- $(providers keep/m.fxt)
is "$#/$(flat keep/m.fxt)" "1/$parent_calls" "--keep-parts: the root's archive holds the root's calls only"
is "$(flat "keep/m.$child.fxt")/$(providers "keep/m.$child.fxt")" "3 child_work/$child " \
  "--keep-parts: the child's archive, its calls"
ok "--keep-parts: a summary line per archive" sh -c \
  'grep -q "^fxt-run: wrote keep/m.fxt (" "$1" && grep -q "^fxt-run: wrote child archive keep/m.$2.fxt (" "$1"' \
  sh "$TMPD/err" "$child"

# --- A part an earlier --keep-parts run left is not this run's: the next
# run, started at once (often in the same second, which the files' times
# cannot tell apart), merges its own processes only.
old=$child
trace keep/m.fxt -f --libc=none "$prog"
child=$(sed -n 's/^fork_child: child //p' "$TMPD/out")
set -- $(providers keep/m.fxt)
is "$#/${2:-none}/$(ls keep | tr '\n' ' ')" "2/$child/m.$old.fxt m.fxt " \
  "the next run: its own two processes merged, the old part left alone"

# --- Compressed: OUT.gz holds both, and the parts (.PID.fxt.gz) go.
run gz m.fxt.gz --libc=none "$prog"
child=$(sed -n 's/^fork_child: child //p' "$TMPD/out")
is "$rc/$(ls gz)" "0/m.fxt.gz" "gzip: one archive left"
ok "gzip: a gzip file" gzip -t gz/m.fxt.gz
check_archive "gzip" gz/m.fxt.gz
set -- $(providers gz/m.fxt.gz)
is "${2:-none}/$(pflat gz/m.fxt.gz "${1:-0}")/$(pflat gz/m.fxt.gz "$child")" \
  "$child/$parent_calls/3 child_work" "gzip: both processes' calls"

# --- -q: merged all the same, silently.
mkdir quiet
rc=0
"$FXT_RUN" -q -o quiet/m.fxt --libc=none "$prog" >"$TMPD/out" 2>"$TMPD/err" || rc=$?
child=$(sed -n 's/^fork_child: child //p' "$TMPD/out")
is "$rc/$(cat "$TMPD/err")/$(ls quiet)" "0//m.fxt" "-q: one archive, nothing said"
set -- $(providers quiet/m.fxt)
is "${2:-none}/$(pflat quiet/m.fxt "$child")" "$child/3 child_work" "-q: the child's part merged"

# --- A child killed before its flush: its spool is recovered, then merged.
# (The root, sh, is no instrumented program: whether it writes an archive
# depends on the libc calls it makes; the tests below count it either way.
# The kill waits a moment after the spool appears: its header is written
# just after the file is sized.)
run killed m.fxt --libc=none sh -c '"$0" 1000000000 & p=$! n=0
  while [ ! -s "killed/m.fxt.$p.2.spool" ] && [ $n -lt 200 ]; do sleep 0.05; n=$((n + 1)); done
  sleep 0.2; kill -KILL $p; echo "pid $p root $$"; wait' "$PROGS/loop"
pid=$(sed -n 's/^pid \([0-9]*\) .*/\1/p' "$TMPD/out")
sh_pid=$(sed -n 's/^pid .* root //p' "$TMPD/out")
is "$(ls killed)/$(others killed/m.fxt "$sh_pid")" "m.fxt/${pid:-?} " \
  "killed: one archive left, with the child's provider: no spool, no part"
check_archive "killed" killed/m.fxt
ok "killed: its calls, recovered" sh -c '"$1" --pid "$2" --flat "$3" | grep -q "^[1-9][0-9]* leaf$"' \
  sh "$CALLTREE" "$pid" killed/m.fxt
ok "killed: the summary counts it as recovered" grep -q \
  "^fxt-run: wrote killed/m.fxt (.*); $(count killed/m.fxt "$sh_pid" 1), [12] recovered from spool\$" \
  "$TMPD/err"

# --- A child that left through _exit(): recovered and merged.
run exit m.fxt --libc=none "$prog" _exit
child=$(sed -n 's/^fork_child: child //p' "$TMPD/out")
is "$(ls exit)" "m.fxt" "_exit: one archive left"
is "$(pflat exit/m.fxt "$child")" "3 child_work" "_exit: the child's recovered calls"
is "$(stat_of exit/m.fxt threads)/$(stat_of exit/m.fxt unmatched)" "2/0" "_exit: two threads, nothing unmatched"

# --- exec: one process, two images, two sections of the same provider.
run exec m.fxt --libc=none "$PROGS/exec_list" l
set -- $(providers exec/m.fxt)
is "$rc/$(ls exec)/$#" "0/m.fxt/2" "exec: one archive, two sections"
is "${1:-a}" "${2:-b}" "exec: both sections are the one process's"
check_archive "exec" exec/m.fxt
is "$(flat exec/m.fxt)" "$(printf '%s\n' '1 after' '1 before' '2 main')" "exec: both images' calls"
ok "exec: the summary counts one process, two images" grep -q \
  "^fxt-run: wrote exec/m.fxt (.*); 1 process, 2 images\$" "$TMPD/err"

# --- A part cut short (its process died writing it): the merge copies its
# whole records only, so that OUT stays readable after it.  The part is made
# by hand, as the agent names a process's archive (its pid is one no
# process can have): the magic record, provider info (id 4194305, name
# "t"), then the first 2 words of a 3-word event record.
run cut m.fxt sh -c 'printf "\020\000\004\106\170\124\026\000\040\000\021\000\000\004\020\000t\000\000\000\000\000\000\000\064\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000" >"${FXT_OUTPUT%.fxt}.4194305.fxt"; echo "root $$"'
sh_pid=$(sed -n 's/^root //p' "$TMPD/out")
is "$rc/$(ls cut)/$(others cut/m.fxt "$sh_pid")" "0/m.fxt/4194305 " "cut: merged into OUT"
check_archive "cut" cut/m.fxt
# (The cut part holds neither a process's kernel object nor an event: no
# process of the archive's, one image of the merge's.)
ok "cut: the summary says a part was truncated, not that OUT is damaged" grep -Eq \
  "^fxt-run: wrote cut/m.fxt \(.* dropped\); $(nprocs cut/m.fxt)(, [0-9]+ images)?(, 1 exited without sealing their spool \(converted from it\))?, 1 truncated \(their last records are lost\)\$" \
  "$TMPD/err"

# --- The session file of the run goes (agent/session.h); another run's stays.
mkdir session
: >session/m.fxt.1.session
: >"session/m.fxt.$$.session"
trace session/m.fxt --libc=none sh -c ': >"$FXT_OUTPUT.$$.session"; "$0" 1' "$PROGS/loop"
is "$rc/$(ls session | grep session | tr '\n' ' ')" \
  "0/$(printf '%s\n' "m.fxt.$$.session" m.fxt.1.session | sort | tr '\n' ' ')" \
  "session: the run's session file removed, others kept"

# --- Many children: all of them in OUT, by pid.
run many m.fxt --libc=none sh -c 'for i in 1 2 3 4 5 6 7 8 9 10; do "$0" 1; done; echo "root $$"' \
  "$PROGS/loop"
sh_pid=$(sed -n 's/^root //p' "$TMPD/out")
set -- $(others many/m.fxt "$sh_pid")
is "$rc/$(ls many)/$#" "0/m.fxt/10" "10 children: one archive, 10 providers"
is "$*" "$(printf '%s\n' "$@" | sort -n | tr '\n' ' ' | sed 's/ $//')" "10 children: by pid"
check_archive "10 children" many/m.fxt
ok "10 children: one summary line" grep -q \
  "^fxt-run: wrote many/m.fxt (.*); $(count many/m.fxt "$sh_pid" 10)\$" "$TMPD/err"
finish
