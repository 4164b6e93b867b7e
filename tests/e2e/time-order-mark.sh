#!/bin/sh
# fxt-run's archives start with fxtrace's mark that each thread's events
# are in time order (FXT_TIME_ORDERED_MARK: a plain string record right
# after the magic record, which other readers just register), so the tools
# skip the pass that looks for late events; an archive with another
# appended (cat: a second magic record) is still read, the late events
# paired in file order and said; fxt-merge of marked archives is marked,
# when each thread's events stay in time order in it.
. "$abs_top_srcdir/tests/e2e/agent-common.sh"

plan 12
prog=$EXAMPLES/calltree
MARK=fxtrace.time-ordered.v1

trace a.fxt "$prog"
is "$rc" 0 "traced"
is "$("$FXT_DUMP" a.fxt | sed -n 2p | sed 's/index=[0-9]*/index=N/')" \
  "string index=N str=\"$MARK\"" "the mark is the record after the magic record"
check_archive "marked" a.fxt
is "$("$FXT_DUMP" --check a.fxt | grep -c 'out of time order')" 0 "in time order: no note"

# An archive with late begins appended: its own are paired in file order.
"$HELPERS/mkarchives" "$TMPD/m" >/dev/null 2>&1 || mkdir -p m
cat a.fxt m/late-begins.fxt > cat.fxt
is "$("$FXT_DUMP" --check cat.fxt 2>&1 | grep -c 'paired in file order')" 2 \
  "appended, out of order: the reader's note and fxt-dump's count say file order"

trace b.fxt "$prog"
"$abs_top_builddir/fxt-merge" -o merged.fxt a.fxt b.fxt >/dev/null 2>&1
is "$("$FXT_DUMP" merged.fxt | sed -n 2p | sed 's/index=[0-9]*/index=N/')" \
  "string index=N str=\"$MARK\"" "fxt-merge of marked archives: marked"
"$abs_top_builddir/fxt-merge" -o twice.fxt a.fxt a.fxt >/dev/null 2>&1
is "$("$FXT_DUMP" twice.fxt | sed -n 2p | grep -c "$MARK")" 0 \
  "fxt-merge of one process twice: not marked (its second part is late)"
"$abs_top_builddir/fxt-merge" -o merged2.fxt a.fxt m/late-begins.fxt >/dev/null 2>&1
is "$("$FXT_DUMP" merged2.fxt | sed -n 2p | grep -c "$MARK")" 0 \
  "fxt-merge with an unmarked archive: not marked"

# A run whose processes exec'd (a pid's two images, each an archive under
# its pid, the second's events after the first's): fxt-run's merge and
# fxt-merge's of it are marked, and the readers find them in time order;
# the same run twice is not (its second part's events are late).
trace e.fxt sh -c '"$0"; "$0"' "$prog"
is "$("$FXT_DUMP" e.fxt | sed -n 2p | grep -c "$MARK")" 1 \
  "a run whose processes exec'd: marked"
"$abs_top_builddir/fxt-merge" -o merged3.fxt a.fxt e.fxt >/dev/null 2>&1
is "$("$FXT_DUMP" merged3.fxt | sed -n 2p | grep -c "$MARK")" 1 \
  "fxt-merge of it and another: marked"
is "$("$FXT_DUMP" --check e.fxt merged3.fxt 2>&1 | grep -c 'out of time order')" 0 \
  "... and in time order as the readers check it"
"$abs_top_builddir/fxt-merge" -o twice2.fxt e.fxt e.fxt >/dev/null 2>&1
is "$("$FXT_DUMP" twice2.fxt | sed -n 2p | grep -c "$MARK")" 0 \
  "fxt-merge of that run twice: not marked"
