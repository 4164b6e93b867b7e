#!/bin/sh
# The tree's layout rules (docs/design.md), checked by grep over the
# `#include "..."` lines and the sizes of the C, C++ and assembly sources:
#
#  - outside agent/, nothing includes "agent/..." but the unit tests
#    (tests/unit/), which compile the agent's modules;
#  - the agent's core (the files at the top of agent/) includes no wing's
#    header (agent/WING/...), but features.c, whose table names the wings:
#    it reaches them through features.c, gates.h and real.h;
#  - no wing of the agent (agent/libc/, agent/patch/, agent/sample/,
#    agent/keep/: any folder under agent/) includes another wing's header;
#  - the stages include no later stage (STAGES below: the data path's
#    order, each stage a top folder: common/ at the bottom, then the FXT
#    codec, the run's contract and the spool both sides compile, the
#    agent, the symbolizer, conversion, import, the readers, fxt-run);
#  - every folder of sources (its own local.mk, or C/C++/assembly files;
#    tests/, bench/ and examples/ aside) is named, as `FOLDER/`, in
#    docs/design.md, the tree's one map;
#  - a file of more than 800 lines says why in its opening comment, with
#    the words "past 800 lines" (the marker: any case), say "One job,
#    one file past 800 lines: ...".
#
# The rules are first run on a small tree of their own that breaks each
# once, so that a rule that can no longer fail fails here.  The tree
# checked is $abs_top_srcdir: run by hand on another checkout with
#   abs_top_srcdir=/path/to/checkout abs_top_builddir=. sh tests/e2e/layout.sh
# Build directories inside it (those with a config.status) are left out.
. "$abs_top_srcdir/tests/lib/test_subr.sh"

LONG=800
MARKER='past 800 lines'
# The agent's wings, each a folder of agent/ with its own local.mk (the
# rules below take any folder of agent/ for a wing).
WINGS="libc patch sample keep"

scratch
plan 14

# The sources of tree $1, relative to it, one a line: *.c *.h *.S *.cc,
# without hidden folders and build directories.
sources() {
  (cd "$1" && find . -name config.status | sed 's,^\./,,; s,/config\.status$,,' >"$TMPD/builds"
   find . \( -name '.*' -a ! -name . -o -name autom4te.cache \) -prune -o \
     \( -name '*.c' -o -name '*.h' -o -name '*.S' -o -name '*.cc' \) -type f -print |
     sed 's,^\./,,' | sort |
     awk -v builds="$TMPD/builds" '
       BEGIN { while ((getline d < builds) > 0) if (d != ".") b[d] = 1 }
       { for (d in b) if (index($0, d "/") == 1) next; print }')
}

# "FILE INCLUDED" for every #include "INCLUDED" of the sources of tree $1.
includes() {
  sources "$1" | (cd "$1" && while read -r f; do
    sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f" |
      sed "s,^,$f ,"
  done)
}

# Each rule reads "FILE INCLUDED" lines and prints the ones that break it.

# Nothing outside agent/ includes the agent, but the unit tests.
outside_agent() {
  awk '$2 ~ /^agent\// && $1 !~ /^agent\// && $1 !~ /^tests\/unit\//'
}

# The core (agent/*) includes no wing (agent/WING/...), but features.c.
core_no_wing() {
  awk '$1 ~ /^agent\/[^\/]*$/ && $1 != "agent/features.c" && $2 ~ /^agent\/[^\/]+\//'
}

# A wing (agent/WING/...) includes no other wing's header.
wing_no_wing() {
  awk '$1 ~ /^agent\/[^\/]+\// && $2 ~ /^agent\/[^\/]+\// {
         split($1, a, "/"); split($2, b, "/"); if (a[2] != b[2]) print }'
}

# ------------------------------------------------------------ stage order
# The stages, first to last: a file of a stage (its top folder) includes
# nothing of a later one.  run/ comes before spool/: the spool's libc
# table names the libc groups the contract defines (run/recording.h).
STAGES="common fxt run spool agent symbolizer convert import tools launcher"
stage_order() {
  awk -v stages="$STAGES" '
    BEGIN { n = split(stages, s, " "); for (i = 1; i <= n; i++) rank[s[i]] = i }
    { split($1, a, "/"); split($2, b, "/")
      if ((a[1] in rank) && (b[1] in rank) && rank[b[1]] > rank[a[1]]) print }'
}

# The sources of tree $1 over LONG lines whose opening comment (up to its
# first "*/") lacks the marker: "FILE LINES".
long_unexplained() {
  sources "$1" | (cd "$1" && while read -r f; do
    n=$(wc -l <"$f")
    [ "$n" -gt "$LONG" ] || continue
    awk '{ print } /\*\// { exit }' "$f" | tr '\n' ' ' | grep -qi "$MARKER" ||
      echo "$f $n"
  done)
}

# The folders of tree $1 that the map must name: "FOLDER/", one a line.
source_folders() {
  { sources "$1"; (cd "$1" && find . -name local.mk -type f | sed 's,^\./,,'); } |
    sed -n 's,/[^/]*$,/,p' | grep -v '^\(tests\|bench\|examples\|build\)/' |
    sort -u | (cd "$1" && while read -r d; do
      # a build directory inside the tree is not ours
      grep -qx "${d%/}" "$TMPD/builds" 2>/dev/null || echo "$d"
    done)
}

# The folders of tree $1 that $1/docs/design.md does not name.
unmapped() {
  source_folders "$1" | while read -r d; do
    grep -qF "\`$d\`" "$1/docs/design.md" || echo "$d"
  done
}

# rule NAME FUNCTION LIST: passes when FUNCTION prints nothing for LIST
# (a file), and says what it printed.
rule() {
  "$2" <"$3" >"$TMPD/broken"
  ok "$1" test ! -s "$TMPD/broken"
  [ -s "$TMPD/broken" ] && sed 's/^/#   /' "$TMPD/broken"
  return 0
}

# ------------------------------------------------------------ the rules can fail
fake=$TMPD/fake
mkdir -p "$fake/agent/libc" "$fake/agent/keep" "$fake/convert" "$fake/tests/unit" \
  "$fake/build"
printf '/* core */\n#include "agent/libc/libc.h"\n' >"$fake/agent/hooks.c"
printf '/* table */\n#include "agent/libc/libc.h"\n' >"$fake/agent/features.c"
printf '/* a wing */\n#include "agent/keep/filter.h"\n#include "agent/tbuf.h"\n' \
  >"$fake/agent/libc/wrap_fd.c"
printf '/* its own */\n#include "agent/keep/filter.h"\n' >"$fake/agent/keep/filter.c"
printf '/* outside */\n#include "agent/tbuf.h"\n#include "spool/format.h"\n#include "tools/x.h"\n' \
  >"$fake/convert/emit.c"
printf '/* a test */\n#include "agent/tbuf.h"\n' >"$fake/tests/unit/test_agent_tbuf.c"
: >"$fake/build/config.status"
printf '/* built */\n#include "agent/tbuf.h"\n' >"$fake/build/gen.c"
{ echo '/* Long, and says nothing of it. */'; seq 1 $LONG; } >"$fake/agent/long.c"
{ echo '/* Long: one job, past 800 LINES because ... */'; seq 1 $LONG; } >"$fake/agent/ok.c"
mkdir -p "$fake/docs" "$fake/newstage"
printf '# map\n`agent/`, `agent/libc/`, `agent/keep/`, `convert/`\n' >"$fake/docs/design.md"
: >"$fake/newstage/local.mk"
includes "$fake" >"$TMPD/fake.inc"
is "$(outside_agent <"$TMPD/fake.inc")" "convert/emit.c agent/tbuf.h" \
  "the rule 'outside agent/' finds convert/emit.c (not the unit test, not a build)"
is "$(core_no_wing <"$TMPD/fake.inc")" "agent/hooks.c agent/libc/libc.h" \
  "the rule 'core' finds hooks.c (not features.c)"
is "$(wing_no_wing <"$TMPD/fake.inc")" "agent/libc/wrap_fd.c agent/keep/filter.h" \
  "the rule 'wings' finds wrap_fd.c (not a wing's own header)"
is "$(long_unexplained "$fake")" "agent/long.c $((LONG + 1))" \
  "the rule 'long files' finds long.c (not ok.c)"
is "$(unmapped "$fake")" "newstage/" \
  "the rule 'the map names every folder' finds newstage/ (not tests/unit/, not a build)"
is "$(stage_order <"$TMPD/fake.inc")" "convert/emit.c tools/x.h" \
  "the rule 'stage order' finds convert/ including tools/ (not the earlier spool/ or agent/)"

# ------------------------------------------------------------ the tree
top=$abs_top_srcdir
includes "$top" >"$TMPD/inc"
ok "the tree has sources and includes" test -s "$TMPD/inc"
missing=
for w in $WINGS; do test -f "$top/agent/$w/local.mk" || missing="$missing agent/$w/"; done
test -f "$top/agent/hooks.c" || missing="$missing agent/hooks.c"
is "${missing:-none}" none "the core at the top of agent/, each wing in its folder ($WINGS)"
rule 'outside agent/, only the unit tests include "agent/..."' outside_agent "$TMPD/inc"
rule "the agent's core includes no wing, but features.c" core_no_wing "$TMPD/inc"
rule "no wing includes another wing's header" wing_no_wing "$TMPD/inc"
rule "no stage includes a later one ($STAGES)" stage_order "$TMPD/inc"
unmapped "$top" >"$TMPD/unmapped"
ok "docs/design.md names every folder of sources" test ! -s "$TMPD/unmapped"
sed 's/^/#   /' "$TMPD/unmapped"
long_unexplained "$top" >"$TMPD/long"
ok "every source over $LONG lines says why ('$MARKER') in its opening comment" \
  test ! -s "$TMPD/long"
sed 's/^/#   /' "$TMPD/long"

finish
