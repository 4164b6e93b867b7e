#!/bin/sh
# Run-time patching against uftrace's, function by function: unmodified
# builds (-O2 -g, no -finstrument-functions) of the examples, of Lua 5.4
# (bench/lua-bench.lua) and of SQLite's shell (bench/sqlite-bench.sql),
# each run plainly, under `fxt-run --patch=.` and under `uftrace record
# -P. --no-libcall`.  For each program: whether the exit status and the
# output are the plain run's under both, how many functions fxt-run
# patched, how many functions both recorded and whether their call counts
# are equal; then each function only one of them recorded, with the reason
# fxt-run gives for those it left alone, and each count that differs.
#
#   make bench-patch-compare
#
# Lua's and SQLite's sources are Debian's (bench/src-setup.sh fetches them
# into ${XDG_CACHE_HOME:-~/.cache}/fxt-bench, where their builds are kept);
# SQLite's build makes its amalgamation with tclsh (apt-get install tcl).
# uftrace's kernel events (linux:schedule) are not counted.  C++ names are compared
# without their parameter lists and template arguments, which uftrace drops
# (overloads and instances are then summed on both sides).  Needs uftrace
# and python3.  Exits 1 if an output or exit status changed under fxt-run;
# counts that differ are listed, for the reader to judge (uftrace counts
# gcc's NAME.cold parts as calls of NAME, for one).
set -eu
B=${abs_top_builddir:?run through make bench-patch-compare}
S=${abs_top_srcdir:?run through make bench-patch-compare}
UFTRACE=${UFTRACE:-uftrace}
CC=${CC:-cc}
CXX=${CXX:-c++}
CACHE=${XDG_CACHE_HOME:-${HOME:?}/.cache}/fxt-bench
command -v "$UFTRACE" > /dev/null || { echo "patch-compare: uftrace is not installed" >&2; exit 1; }
command -v python3 > /dev/null || { echo "patch-compare: python3 is not installed" >&2; exit 1; }
W=$(mktemp -d "${TMPDIR:-/tmp}/fxt-patch-compare.XXXXXX")
trap 'rm -rf "$W"' EXIT
bad=0

# ------------------------------------------------------------ the programs
mkdir -p "$W/ex"
for p in calltree threads hotspot deep_exit; do
  "$CC" -O2 -g -I"$S" -o "$W/ex/$p" "$S/examples/$p.c" -lpthread
done
"$CXX" -O2 -g -I"$S" -o "$W/ex/cxx_demo" "$S/examples/cxx_demo.cc"
"$CC" -O2 -g -fPIC -shared -I"$S" -o "$W/ex/libplugin_lib.so" "$S/examples/plugin_lib.c"
"$CC" -O2 -g -I"$S" -DPLUGIN_PATH="\"$W/ex/libplugin_lib.so\"" -o "$W/ex/plugin" \
  "$S/examples/plugin.c" -ldl

# lua: Debian's source, built -O2 -g (kept in the cache), its strings'
# hash seed fixed (it mixes the time and ASLR's addresses): the number of
# calls of its string and table functions would change from run to run.
lua=
if tree=$(sh "$S/bench/src-setup.sh" lua5.4 "$CACHE" 2> "$W/setup.err"); then
  lua=$CACHE/plain-lua/lua-seed0
  if [ ! -x "$lua" ]; then
    mkdir -p "$CACHE/plain-lua"
    echo '#define DEB_HOST_MULTIARCH "x86_64-linux-gnu"' > "$CACHE/plain-lua/lua5.4-deb-multiarch.h"
    (cd "$tree/src" && ls ./*.c | grep -v luac.c |
      xargs -P 2 -I{} sh -c '"$1" -O2 -g -DLUA_USE_LINUX "-Dluai_makeseed(L)=0u" -I"$2" -c -o "$2/$(basename "$3" .c).o" "$3"' \
        - "$CC" "$CACHE/plain-lua" {}) &&
      "$CC" -o "$lua" "$CACHE"/plain-lua/*.o -lm -ldl || lua=
  fi
else
  echo "Lua: no source ($(tail -n 1 "$W/setup.err"))"
fi

# sqlite3: Debian's source, its shell built -O2 -g (kept in the cache).
sqlite=
if ! command -v tclsh > /dev/null; then
  echo "SQLite: skipped, tclsh is missing (apt-get install tcl)"
elif tree=$(sh "$S/bench/src-setup.sh" sqlite3 "$CACHE" 2> "$W/setup.err"); then
  # The amalgamation and the shell's source, made by its build; then
  # the shell as one program (its Makefile may link it to the library).
  sqlite=$CACHE/plain-sqlite/sqlite3-shell
  if [ ! -x "$sqlite" ]; then
    mkdir -p "$CACHE/plain-sqlite"
    (cd "$CACHE/plain-sqlite" &&
      "$tree/configure" --disable-tcl --disable-readline > configure.log 2>&1 &&
      make sqlite3.c shell.c > make.log 2>&1 &&
      "$CC" -O2 -g -DSQLITE_THREADSAFE=1 -DSQLITE_ENABLE_MATH_FUNCTIONS -o sqlite3-shell \
        shell.c sqlite3.c -lm -lpthread -ldl) ||
      { echo "SQLite: the build failed ($CACHE/plain-sqlite)"; sqlite=; }
  fi
else
  echo "SQLite: no source ($(tail -n 1 "$W/setup.err"))"
fi

# ------------------------------------------------------------ comparison
# counts OUT: "NAME<TAB>CALLS" lines, NAME without parameters or template
# arguments, summed; from fxt-report's CSV (stdin) or uftrace's report.
counts_py='
import csv, re, sys
def bare(n):
    n = re.sub(r" const$", "", n)
    # gcc lambda #N is what uftrace names $_(N-1)
    n = re.sub(r"\{lambda\([^()]*\)#(\d+)\}", lambda m: "$_%d" % (int(m.group(1)) - 1), n)
    while True:
        m = re.sub(r"<[^<>]*>", "", n)
        m = re.sub(r"\([^()]*\)", "", m)
        if m == n:
            return n.split(" ")[-1]  # no return type (templates have one)
        n = m
tot = {}
if sys.argv[1] == "fxt":
    rows = csv.reader(sys.stdin)
    next(rows)
    for r in rows:
        tot[bare(r[-1])] = tot.get(bare(r[-1]), 0) + int(r[0])
else:
    for line in list(sys.stdin)[2:]:
        f = line.split(None, 1)
        if len(f) == 2 and not f[1].startswith("linux:"):
            n = bare(f[1].strip())
            tot[n] = tot.get(n, 0) + int(f[0])
for n in sorted(tot):
    print("%s\t%d" % (n, tot[n]))
'

# Without address space randomization where setarch can: Lua's string
# cache is indexed by the addresses of C strings.
norand=
if setarch "$(uname -m)" -R true 2> /dev/null; then norand="setarch $(uname -m) -R"; fi

printf "%-10s %-14s %-14s %-16s %8s %8s %8s %8s\n" program "fxt-run" "uftrace -P." "patched" both equal "only us" "only uft"
compare() { # NAME CMD... (stdin: the program's input, in $W/in)
  name=$1
  shift
  d=$W/$name
  mkdir -p "$d"
  set +e
  $norand "$@" < "$W/in" > "$d/plain.out" 2> "$d/plain.err"
  rc0=$?
  $norand "$B/fxt-run" -q -o "$d/a.fxt" --libc=none --patch=. --patch-module='libplugin_lib*' --patch-list \
    -- "$@" < "$W/in" > "$d/ours.out" 2> "$d/list"
  rc1=$?
  $norand "$UFTRACE" record -P. --no-libcall -d "$d/uft" "$@" < "$W/in" > "$d/uft.out" 2> "$d/uft.err"
  rc2=$?
  set -e
  # The program's stderr, without fxt-run's lines (--patch-list).
  grep -v '^fxt-run: ' "$d/list" > "$d/ours.err" || true
  v1=same v2=same
  [ "$rc1" = "$rc0" ] && cmp -s "$d/plain.out" "$d/ours.out" && cmp -s "$d/plain.err" "$d/ours.err" ||
    { v1="CHANGED($rc1)"; bad=1; }
  [ "$rc2" = "$rc0" ] && cmp -s "$d/plain.out" "$d/uft.out" || v2="changed($rc2)"
  "$B/fxt-report" --format csv "$d/a.fxt" | python3 -c "$counts_py" fxt > "$d/ours"
  "$UFTRACE" report -d "$d/uft" -f call 2> /dev/null | python3 -c "$counts_py" uft > "$d/theirs"
  patched=$(sed -n 's/^fxt-run: patched \([0-9]*\) of \([0-9]*\) functions of .*/\1 \2/p' "$d/list" |
    awk '{ p += $1; m += $2 } END { print p "/" m }')
  join -t "$(printf '\t')" "$d/ours" "$d/theirs" > "$d/both"
  join -t "$(printf '\t')" -v 1 "$d/ours" "$d/theirs" > "$d/only_ours"
  join -t "$(printf '\t')" -v 2 "$d/ours" "$d/theirs" > "$d/only_theirs"
  awk -F '\t' '$2 != $3' "$d/both" > "$d/differ"
  printf "%-10s %-14s %-14s %-16s %8s %8s %8s %8s\n" "$name" "$v1" "$v2" "$patched" \
    "$(wc -l < "$d/both")" "$(($(wc -l < "$d/both") - $(wc -l < "$d/differ")))" \
    "$(wc -l < "$d/only_ours")" "$(wc -l < "$d/only_theirs")"
  return 0
}

: > "$W/in"
for p in calltree threads hotspot deep_exit cxx_demo plugin; do
  compare "$p" "$W/ex/$p"
done
if [ -n "$lua" ]; then
  compare lua "$lua" "$S/bench/lua-bench.lua"
fi
if [ -n "$sqlite" ]; then
  cp "$S/bench/sqlite-bench.sql" "$W/in"
  compare sqlite3 "$sqlite" :memory:
fi

# ------------------------------------------------------------ the details
for d in "$W"/*/; do
  [ -f "$d/both" ] || continue
  name=$(basename "$d")
  if [ -s "$d/differ" ]; then
    echo
    echo "$name: counts that differ (function, fxt-run, uftrace):"
    sed 's/^/  /' "$d/differ"
  fi
  if [ -s "$d/only_theirs" ]; then
    echo
    echo "$name: only uftrace recorded (fxt-run's reason):"
    while IFS="$(printf '\t')" read -r f n; do
      why=$(grep -m 1 "^fxt-run: skipped $f[:(]" "$d/list" | sed 's/^[^:]*: [^:]*: //' || true)
      printf "  %s %s  [%s]\n" "$f" "$n" "${why:-recorded under another name}"
    done < "$d/only_theirs"
  fi
  if [ -s "$d/only_ours" ]; then
    echo
    echo "$name: only fxt-run recorded (uftrace skipped them, or they are in a library):"
    tr '\t' ' ' < "$d/only_ours" | fmt -w 76 | sed 's/^/  /'
  fi
done
exit "$bad"
