#!/bin/sh
# fxt-run --patch on stripped programs: the functions their exports do not
# name come from a separate debug file, as a -dbgsym package installs it
# (common/debugpath.h).  tests/progs/stripme (one function exported, four
# not) is stripped here: its debug file next to it (.gnu_debuglink), in
# .debug/, and in the build-ID tree of a debug root (--debug-root); each
# run makes the unstripped run's exact calls, named in the archive.  A
# debug file whose CRC or build ID is not the one the program names is
# refused (its exports only, said plainly), and a program of a package
# names the package whose -dbgsym would bring its functions.
. "$abs_top_srcdir/tests/lib/test_subr.sh"

plan 21
scratch
P=$PROGS/stripme

why=$(patch_unavailable)
[ -z "$why" ] || skip_rest "$why"
command -v objcopy >/dev/null 2>&1 || skip_rest "no objcopy (binutils)"

# calls ARCHIVE: "FUNCTION CALLS" of stripme's functions, sorted.
calls() {
  "$abs_top_builddir/fxt-report" --format csv "$1" |
    awk -F, 'NR > 1 && $(NF - 1) ~ /^"?stripme"?$/ { n = $NF; gsub(/"/, "", n); print n, $1 }' |
    sort
}
# run NAME PROG [OPTIONS]: fxt-run --patch=. --patch-list on PROG, into
# NAME.fxt, NAME.out, NAME.err.
run() {
  name=$1 prog=$2
  shift 2
  "$FXT_RUN" -o "$TMPD/$name.fxt" --patch=. --patch-list "$@" -- "$prog" \
    >"$TMPD/$name.out" 2>"$TMPD/$name.err"
}

want_all="main 1
square 100
stripme_exported 7
stripme_global 3
twice 50
walk 11"
want_exports="stripme_exported 7"

run full "$P"
plain=$("$P")
is "$(cat "$TMPD/full.out")" "$plain" "unstripped: the output is the plain run's"
is "$(calls "$TMPD/full.fxt")" "$want_all" "unstripped: every function's calls"

# (a) the debug file next to the program, named by its .gnu_debuglink.
mkdir -p "$TMPD/a" "$TMPD/b/.debug" "$TMPD/c" "$TMPD/d" "$TMPD/e"
objcopy --only-keep-debug "$P" "$TMPD/a/stripme.debug"
objcopy --strip-all --add-gnu-debuglink="$TMPD/a/stripme.debug" "$P" "$TMPD/a/stripme"
ok "a: stripped, one function exported" sh -c \
  '! readelf -S "$1" | grep -q "\.symtab" && nm -D --defined-only "$1" | grep -q " T stripme_exported$"' \
  - "$TMPD/a/stripme"
run a "$TMPD/a/stripme"
is "$(cat "$TMPD/a.out")" "$plain" "a: the output is the plain run's"
is "$(calls "$TMPD/a.fxt")" "$want_all" "a: debuglink next to it: the unstripped run's calls"
ok "a: the summary names the debug file" \
  grep -qx "fxt-run: .*stripme: functions named by its debug file $TMPD/a/stripme.debug" "$TMPD/a.err"
is "$(grep -c '^fxt-run: patched stripme_exported$' "$TMPD/a.err")" 1 \
  "a: the exported function (in both tables) is patched once, under one name"
ok "a: patched 6 of 10 functions, as unstripped" \
  grep -q "^fxt-run: patched 6 of 10 functions of .*stripme " "$TMPD/a.err"

# (b) in the .debug/ folder next to it.
objcopy --only-keep-debug "$P" "$TMPD/b/.debug/stripme.debug"
objcopy --strip-all --add-gnu-debuglink="$TMPD/b/.debug/stripme.debug" "$P" "$TMPD/b/stripme"
run b "$TMPD/b/stripme"
is "$(calls "$TMPD/b.fxt")" "$want_all" "b: debuglink in .debug/: the unstripped run's calls"

# (c) by build ID under a debug root, no .gnu_debuglink.
id=$(readelf -n "$P" | sed -n 's/.*Build ID: *\([0-9a-f]*\).*/\1/p')
ok "c: the program has a build ID" test -n "$id"
rest=${id#??}
root=$TMPD/root
mkdir -p "$root/.build-id/${id%"$rest"}"
objcopy --only-keep-debug "$P" "$root/.build-id/${id%"$rest"}/$rest.debug"
objcopy --strip-all "$P" "$TMPD/c/stripme"
run c "$TMPD/c/stripme" --debug-root="$root"
is "$(calls "$TMPD/c.fxt")" "$want_all" "c: build ID under --debug-root: the unstripped run's calls"
run c0 "$TMPD/c/stripme"
is "$(calls "$TMPD/c0.fxt")" "$want_exports" "c: without --debug-root: its exports only"
ok "c: ... and said so" grep -qx \
  "fxt-run: .*stripme: only its exported functions (no symbol table, and no debug file found for it)" \
  "$TMPD/c0.err"
FXT_DEBUG_ROOT=$root run c1 "$TMPD/c/stripme"
is "$(calls "$TMPD/c1.fxt")" "$want_all" "c: FXT_DEBUG_ROOT as --debug-root"

# (d) a debuglink whose CRC no longer matches: refused, its exports only.
objcopy --only-keep-debug "$P" "$TMPD/d/stripme.debug"
objcopy --strip-all --add-gnu-debuglink="$TMPD/d/stripme.debug" "$P" "$TMPD/d/stripme"
printf x >>"$TMPD/d/stripme.debug"
run d "$TMPD/d/stripme"
is "$(cat "$TMPD/d.out")" "$plain" "d: the output is the plain run's"
is "$(calls "$TMPD/d.fxt")" "$want_exports" "d: the CRC does not match: its exports only"
ok "d: ... and said so" grep -q "^fxt-run: .*stripme: only its exported functions" "$TMPD/d.err"

# (e) another program's debug file where its build ID says: refused.
eroot=$TMPD/eroot
mkdir -p "$eroot/.build-id/${id%"$rest"}"
objcopy --only-keep-debug "$PROGS/patchme" "$eroot/.build-id/${id%"$rest"}/$rest.debug"
run e "$TMPD/c/stripme" --debug-root="$eroot"
is "$(calls "$TMPD/e.fxt")" "$want_exports" "e: another build ID: its exports only"

# --debug-root must be an absolute folder.
"$FXT_RUN" --debug-root=dbg --patch=. -- "$P" >/dev/null 2>"$TMPD/bad.err"
is "$?/$(cat "$TMPD/bad.err")" "2/fxt-run: --debug-root: 'dbg' is not an absolute path" \
  "--debug-root: a relative path refused"

# A program of a package with no debug file here: the package to install.
sort=$(command -v sort)
pkg=$(dpkg -S "$sort" 2>/dev/null | sed -n '1s/[:,].*//p')
sid=$(readelf -n "$sort" 2>/dev/null | sed -n 's/.*Build ID: *\([0-9a-f]*\).*/\1/p')
if [ -z "$pkg" ] || [ -z "$sid" ]; then
  skip "no dpkg, or $sort is no package's"
  skip "no dpkg, or $sort is no package's"
elif [ -e "/usr/lib/debug/.build-id/${sid%"${sid#??}"}/${sid#??}.debug" ] ||
  readelf -S "$sort" | grep -q '\.symtab'; then
  skip "$sort has its symbols here"
  skip "$sort has its symbols here"
else
  "$FXT_RUN" -o "$TMPD/sort.fxt" --patch=. -- "$sort" </dev/null >/dev/null 2>"$TMPD/sort.err"
  is "$?" 0 "sort: runs"
  ok "sort: its exports only, and the package whose -dbgsym names the rest" grep -q \
    "^fxt-run: .*sort: only its exported functions (no symbol table; a debug file would name all: install $pkg-dbgsym)$" \
    "$TMPD/sort.err"
fi
finish
