#!/bin/sh
# Source lines kept across runs (symbolizer/loccache.c): a run's
# conversion keeps each function's location in FXT_SRCLINE_CACHE/BUILDID.loc,
# and the next run reads them there rather than decoding the DWARF line
# program again; the archive says the same either way (and what it says
# without the cache, FXT_SRCLINE_CACHE=off).  A file that no longer
# matches the module is not served: the module touched, or rewritten in
# place with the same build ID, size and modification time (its change
# time differs); nor one cut short.  FXT_RUN_DEBUG says how many
# locations came from the kept file and how many were decoded.
. "$abs_top_srcdir/tests/lib/test_subr.sh"

plan 22
scratch
cd "$TMPD" || exit 1
C=$TMPD/cache
FXT_SRCLINE_CACHE=$C
export FXT_SRCLINE_CACHE
cp "$PROGS/srcline" prog || exit 1 # our own copy: touched below

# locs ARCHIVE: "NAME LOC" of each function record, by name.
locs() { fxt_locs "$1" | sort; }
# run NAME PROG: records PROG into NAME.fxt, fxt-run's debug lines in NAME.err.
# Without the early thread (FXT_RUN_LATE), which would decode and keep the
# lines while the program runs when it gets to it (srcline-ahead.sh): the
# counts here are the conversion's own.
run() {
  FXT_RUN_LATE=1 FXT_RUN_DEBUG=1 "$FXT_RUN" -q -o "$1.fxt" -- "$2" >/dev/null 2>"$1.err"
}
kept() { sed -n 's/^fxt-run: source lines: //p' "$1.err"; }

FXT_SRCLINE_CACHE=off "$FXT_RUN" -q -o off.fxt -- ./prog >/dev/null
want=$(locs off.fxt)
ok "without the cache: five locations" test "$(echo "$want" | grep -c ':[0-9]')" -eq 5
ok "FXT_SRCLINE_CACHE=off writes nothing" test ! -e "$C"

run first ./prog
is "$(kept first)" "0 from the files kept across runs, 5 decoded and kept" \
  "the first run decodes the five locations and keeps them"
id=$(readelf -n prog 2>/dev/null | sed -n 's/^ *Build ID: *//p')
if [ -n "$id" ]; then
  is "$(ls "$C")" "$id.loc" "one file, named by the program's build ID"
else
  skip "no readelf"
fi
is "$(locs first.fxt)" "$want" "the first run's locations are those made without the cache"

run second ./prog
is "$(kept second)" "5 from the files kept across runs, 0 decoded and kept" \
  "the second run reads them all from the kept file"
is "$(locs second.fxt)" "$want" "the second run's locations are the same"
# Each function's column; the rows' order is the time each run spent.
is "$("$abs_top_builddir/fxt-report" --srcline -F csv second.fxt | awk -F, '{ print $(NF - 1), $NF }' | sort)" \
  "$("$abs_top_builddir/fxt-report" --srcline -F csv off.fxt | awk -F, '{ print $(NF - 1), $NF }' | sort)" \
  "fxt-report --srcline: the same column"

# What the kept file says is what a later run shows: a location changed
# in it (same length) is served as it is.
perl -pi -e 's/srcline_other\.c/srcline_OTHER.c/' "$C"/*.loc
run forged ./prog
is "$(locs forged.fxt | grep -c '^srcline_other .*srcline_OTHER\.c:')" 1 \
  "a later run serves the kept file's locations"

# A process that converts its own spool (the agent alone, no fxt-run) reads
# the kept files but writes nothing to them: the conversion runs inside
# the traced program, which must not leave files in the user's cache.
AGENT_SO=$(cd "$abs_top_builddir/.libs" && pwd -P)/libfxt-agent.so
C2=$TMPD/cache2
cp -r "$C" "$C2" && rm -f "$C2"/*.loc
env FXT_SRCLINE_CACHE="$C2" LD_PRELOAD="$AGENT_SO" FXT_OUTPUT="$TMPD/self.fxt" ./prog >/dev/null
is "$(locs self.fxt)" "$want" "the agent's own conversion: the same locations"
is "$(ls "$C2" | wc -l)" 0 "... and no file kept by the traced program"

# fxt-run killed while it writes a kept file (libkillafter: SIGKILL
# before the rename that puts it in place): what it left of it in the
# folder is removed by the next run that writes there, whose file is right.
C3=$TMPD/cache3
KILLAFTER=$(cd "$PROGS/.libs" && pwd -P)/libkillafter.so
FXT_SRCLINE_CACHE=$C3 KILLAFTER_PROG=fxt-run KILLAFTER_CALL=rename-before KILLAFTER_SUFFIX=.loc \
  LD_PRELOAD=$KILLAFTER ASAN_OPTIONS="verify_asan_link_order=0:${ASAN_OPTIONS:-}" \
  "$FXT_RUN" -q -o killed.fxt -- ./prog >/dev/null 2>&1
is "$?" 137 "fxt-run killed before it put its kept file in place"
is "$(ls "$C3" | grep -vc '\.loc$')" 1 "... which left a temporary file"
FXT_SRCLINE_CACHE=$C3 run afterkill ./prog
is "$(ls "$C3" | grep -vc '\.loc$')" 0 "the next run removed it"
FXT_SRCLINE_CACHE=$C3 run afterkill2 ./prog
is "$(kept afterkill2)/$(locs afterkill2.fxt)" "5 from the files kept across runs, 0 decoded and kept/$want" \
  "... and kept the right file"
rm -f killed.fxt* # the spool fxt-run left

# The program touched: the file no longer serves it, and is replaced.
sleep 1
touch prog
run touched ./prog
is "$(locs touched.fxt)" "$want" "the program touched: its locations decoded again"
is "$(kept touched)" "0 from the files kept across runs, 5 decoded and kept" \
  "... none from the kept file"
run again ./prog
is "$(kept again)" "5 from the files kept across runs, 0 decoded and kept" "... which was replaced"

# A file cut short is no file.
f=$(ls "$C"/*.loc)
head -c 100 "$f" >short && cat short >"$f"
run short ./prog
is "$(locs short.fxt)" "$want" "a file cut short: the locations decoded"

# The same build ID, size and modification time, other lines: another
# build written over the program in place (cat, then touch -r).  Only its
# change time tells, and the lines must be the new ones (addr2line's).
cat >v1.c <<'EOF'
int twice(int x)
{
	return 2 * x;
}
int main(void)
{
	return twice(21) == 42 ? 0 : 1;
}
EOF
{ echo; echo; echo; cat v1.c; } >v2.c # the same code, three lines lower
B=-Wl,--build-id=0x0123456789abcdef0123456789abcdef01234567
if ${CC:-cc} -g -O0 -finstrument-functions $B -o v1 v1.c 2>/dev/null &&
  ${CC:-cc} -g -O0 -finstrument-functions $B -o v2 v2.c 2>/dev/null; then
  cp v1 same && touch -r v1 same
  run v1 ./same
  is "$(locs v1.fxt | grep '^twice ')" "twice v1.c:2" "another program: twice at v1.c:2"
  sz1=$(wc -c <v1) sz2=$(wc -c <v2)
  cat v2 >same && touch -r v1 same
  run v2 ./same
  is "$(locs v2.fxt | grep '^twice ')" "twice v2.c:5" \
    "rewritten in place, the same build ID and mtime (sizes $sz1, $sz2): the new lines"
  if command -v addr2line >/dev/null 2>&1 && command -v nm >/dev/null 2>&1; then
    a=$(nm same | awk '$3 == "twice" { print $1 }')
    is "$(addr2line -e same "0x$a" | sed 's|.*/||')" "v2.c:5" "... as addr2line says"
  else
    skip "no addr2line or nm"
  fi
else
  skip "no C compiler"
  skip "no C compiler"
  skip "no C compiler"
fi
finish
