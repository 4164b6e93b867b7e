#!/bin/sh
# The agent loaded into a process already running and started and stopped
# by calls, as fxt-run -p will do (through tests/helpers/fxt_inject): the
# agent's constructor stays dormant when dlopen()ed after the C library;
# fxt_attach_start(BLOCK) reads the settings fxt-run would have exported
# from a file and, on a thread of its own, patches FXT_PATCH's functions
# while the other threads run (its status read back as fxt-run does); fxt_attach_stop() writes the entries back and seals the spool.
# tests/progs/attach_target --serve calls work() N times for each "call N"
# line: the archive holds exactly the calls made between start and stop,
# the program's text is its file's again after the stop, and the program
# prints and exits as it would have.  The spool is sealed and left, as
# fxt-run is not there to convert it (an attached process never converts
# its own): fxt-run --recover does.  Also: the process exiting while
# recording, a stop without a start, a second start while recording, a block file others
# could have written.
. "$abs_top_srcdir/tests/lib/test_subr.sh"

plan 17
why=$(patch_unavailable)
[ -n "$why" ] && skip_rest "$why"
scratch
cd "$TMPD" || exit 1
. "$abs_top_srcdir/tests/e2e/attach-common.sh"

# 1. A window: 300 calls before, 1000 while recording, 200 after; four
# threads busy in the C library all along.
block b1 "FXT_OUTPUT=$TMPD/a.fxt" 'FXT_PATCH=^work$'
start --serve --busy 4
calls 300
is "$(agent_start fxt_attach_start "$TMPD/b1")" 0 "fxt_attach_start: recording"
ok "the agent is mapped in the process" grep -q libfxt-agent /proc/$target/maps
calls 1000
is "$(agent_start --again fxt_attach_start "$TMPD/b1")" -16 "a second start while recording: -EBUSY"
is "$(agent --again fxt_attach_stop)" 0 "fxt_attach_stop: 0"
ok "after the stop, the program's text is its file's again" text_is_file
calls 200
is "$(agent --again fxt_attach_stop)" -114 "a second stop: -EALREADY"
exec 9>&-
wait $target
is "$?:$(cat out)" "0:ready
done 300
done 1000
done 200
served: yes
busy: 4" "the program's output and exit status are its own"
is "$(cat err)" "" "nothing on its standard error"
# Without fxt-run watching, the spool is left (never converted inside the
# process): fxt-run --recover converts it.
"$FXT_RUN" -q --recover -o a.fxt a.fxt.$target.spool >/dev/null 2>&1
ok "the archive is valid" sh -c '"$1" --check "$2" >/dev/null' sh "$FXT_DUMP" a.fxt
is "$(work_calls a.fxt)" 1000 "the archive holds the 1000 calls made while recording, exactly"
is "$(ls | grep -c spool)" 0 "no spool left"

# 2. The process exits while recording: its archive is written at exit.
block b2 "FXT_OUTPUT=$TMPD/x.fxt" 'FXT_PATCH=^work$'
start --serve
is "$(agent_start fxt_attach_start "$TMPD/b2")" 0 "attached again, to another process"
calls 250
exec 9>&-
wait $target
is "$?" 0 "it exits 0 while recording"
"$FXT_RUN" -q --recover -o x.fxt x.fxt.$target.spool >/dev/null 2>&1
is "$(work_calls x.fxt)" 250 "its spool, sealed at exit, holds its 250 calls"

# 3. A stop without a start; a block file others could have written.
start --serve
is "$(agent fxt_attach_stop)" -22 "a stop without a start: -EINVAL"
block b3 "FXT_OUTPUT=$TMPD/w.fxt" 'FXT_PATCH=^work$'
chmod 620 b3
is "$(agent_start --again fxt_attach_start "$TMPD/b3")" -1 "a block file its group may write: -EPERM"
calls 10
exec 9>&-
wait $target
is "$?:$(ls | grep -c '^w\.')" "0:0" "the agent stayed dormant: the program ran on, nothing written"
finish
