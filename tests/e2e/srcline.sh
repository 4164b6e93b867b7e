#!/bin/sh
# Source lines: fxt-run writes each function's FILE:LINE once into the
# archive (include/fxt/format.h, FXT_OBJ_FUNCTION), as addr2line gives it
# for the function's entry; fxt-report --srcline shows it (text, csv,
# json), fxt-export and fxt-flame carry it; fxt-run --srcline also puts it
# on every slice ("loc").  tests/progs/srcline: functions in two files, one
# inlined (its out-of-line copy says " (inlined)"); stripped of its debug
# info, its functions say "(no debug info)"; with a separate debug file
# (.gnu_debuglink, as a -dbgsym package gives it), their lines come back.
# Archives without locations (another writer's) read as before.
. "$abs_top_srcdir/tests/lib/test_subr.sh"

plan 32
scratch
cd "$TMPD" || exit 1
P=$PROGS/srcline
REPORT=$abs_top_builddir/fxt-report
EXPORT=$abs_top_builddir/fxt-export
FLAME=$abs_top_builddir/fxt-flame

# locs ARCHIVE: "NAME LOC" of each function record, in archive order.
locs() { fxt_locs "$1"; }

plain=$("$P")
"$FXT_RUN" -q -o plain.fxt -- "$P" >plain.out
is "$(cat plain.out)" "$plain" "the program's output is the untraced run's"
ok "fxt-dump --check" "$FXT_DUMP" --check plain.fxt
is "$(locs plain.fxt | awk '{ print $1 }' | sort | tr '\n' ' ')" \
  "checksum main parse scaled srcline_other " \
  "one location record per function, not per call (parse has 10 calls)"

# Against addr2line: the function's ELF address (nm), its line-table entry.
if command -v addr2line >/dev/null 2>&1 && command -v nm >/dev/null 2>&1; then
  bad=
  for fn in main parse checksum scaled srcline_other; do
    addr=$(nm "$P" | awk -v f="$fn" '$3 == f { print $1; exit }')
    want=$(addr2line -e "$P" "0x$addr" | sed 's/ (discriminator [0-9]*)$//')
    got=$(locs plain.fxt | awk -v f="$fn" '$1 == f { print $2; exit }')
    # Ours is relative to the unit's compilation folder when under it.
    case "$want" in
      "$got" | */"$got") ;;
      *) bad="$bad $fn: ours '$got', addr2line '$want';" ;;
    esac
  done
  is "$bad" "" "every location is addr2line's for the function's entry"
else
  skip "no addr2line or nm (binutils)"
fi
ok "srcline_other is in the other file" \
  test "$(locs plain.fxt | grep -c '^srcline_other [^ ]*srcline_other\.c:[0-9]*$')" = 1
ok "the inlined function's copy says so" \
  test "$(locs plain.fxt | grep -c '^scaled [^ ]*srcline\.c:[0-9]* (inlined)$')" = 1
# Before the function's first slice when the location is there at that
# slice (here: no thread decodes the lines beside the conversion, as none
# are kept across runs); else after the thread's slices (a reader takes it
# wherever it is: test_convert_funcs, test_srcloc).
FXT_SRCLINE_CACHE=off "$FXT_RUN" -q -o nokeep.fxt -- "$P" >/dev/null
ok "parse's location comes before parse's first slice" sh -c \
  "'$FXT_DUMP' nokeep.fxt | grep -n 'name=\"parse\"' | head -1 | grep -q 'kobj type=function'"
ok "no slice carries a location without --srcline" sh -c \
  "! '$FXT_DUMP' plain.fxt | grep 'event ' | grep -q 'loc:'"

# fxt-report --srcline: table, csv, json.
parse_loc=$(locs plain.fxt | awk '$1 == "parse" { print $2 }')
"$REPORT" --srcline plain.fxt >report.txt
ok "text: a srcline column" grep -q ' srcline  *function$' report.txt
base=${parse_loc##*/}
ok "text: parse's row ends in its file's name and line" \
  grep -q "$base  *parse (srcline)\$" report.txt
is "$("$REPORT" --srcline -F csv plain.fxt | awk -F, '$(NF - 1) == "parse" { print $NF }')" \
  "$parse_loc" "csv: the srcline column (last) holds parse's location"
is "$("$REPORT" --srcline -F csv plain.fxt | head -1)" \
  "calls,total_ns,self_ns,avg_ns,min_ns,max_ns,self_pct,open,category,name,srcline" "csv: its heading"
ok "json: parse's srcline" sh -c \
  "'$REPORT' --srcline -F json plain.fxt | grep -q '\"name\":\"parse\",\"category\":\"srcline\",\"srcline\":\"$parse_loc\"'"
is "$("$REPORT" plain.fxt | head -2 | tail -1 | grep -c srcline)" 0 "no column without --srcline"

# fxt-export: args.loc; fxt-flame: in the tooltip.
ok "fxt-export: parse's slices carry args.loc" sh -c \
  "'$EXPORT' --chrome plain.fxt | grep '\"name\":\"parse\"' | grep -q '\"args\":{\"loc\":\"$parse_loc\"}'"
"$FLAME" -o plain.svg plain.fxt
# (Each of parse's tooltips, from its name to </title>: the location last.)
is "$(awk '/<title>parse$/ { on = 1 } on && /<\/title>/ { sub(/<\/title>.*/, ""); print; on = 0 }' plain.svg |
  sort -u)" "$parse_loc" "fxt-flame: parse's tooltip has its location, last" ||
  diag "$(grep -A8 '<title>parse$' plain.svg)"

# The run's symbol cache: the later processes of a program are located
# from it (the locations made where the cache keeps them, runcache.c).
"$FXT_RUN" -q -o three.fxt -- sh -c '"$0"; "$0"; "$0"' "$P" >/dev/null
is "$(locs three.fxt | sort | uniq -c | awk '{ $1 = $1; print }')" "$(locs plain.fxt | sort | sed 's/^/3 /')" \
  "three processes of the program in one run: each function's location three times, the first's"

# fxt-run --srcline: "loc" on each slice of a located function.
"$FXT_RUN" -q --srcline -o per.fxt -- "$P" >/dev/null
ok "--srcline: fxt-dump --check" "$FXT_DUMP" --check per.fxt
is "$("$FXT_DUMP" per.fxt | grep 'event complete.* name="parse"' | grep -c "args={loc:str=\"$parse_loc\"}")" \
  10 "--srcline: each of parse's 10 slices carries loc"
is "$("$FXT_DUMP" per.fxt | grep -c 'event .*cat="srcline".*loc:str=')" \
  "$("$FXT_DUMP" per.fxt | grep -c 'event .*cat="srcline"')" "--srcline: every slice of the program"
is "$("$REPORT" -F csv -s name per.fxt | cut -d, -f1,9,10)" \
  "$("$REPORT" -F csv -s name plain.fxt | cut -d, -f1,9,10)" "--srcline: fxt-report reads the same calls"
if [ -n "$PYTHON3" ]; then
  is "$("$PYTHON3" "$abs_top_srcdir/tests/helpers/perfetto_rules.py" per.fxt)" ok \
    "--srcline: what Perfetto needs (perfetto_rules.py)"
else
  skip "no python3"
fi

# fxt-run --recover --srcline: a killed process's spool, converted later.
mkdir rec && (cd rec && LD_PRELOAD=$abs_top_builddir/.libs/libfxt-agent.so FXT_OUTPUT=$TMPD/rec/k.fxt \
  "$PROGS/crash" kill 3 >/dev/null 2>&1)
"$FXT_RUN" --recover --srcline -q -o rec.fxt rec/k*.spool >/dev/null 2>&1
is "$("$FXT_DUMP" rec.fxt 2>/dev/null | grep 'event .* name="work"' | grep -c 'loc:str="[^"]*crash.c:[0-9]*"')" 3 \
  "--recover --srcline: each of work's 3 slices carries loc"

# Calls too short for a slice (--min-duration): their functions located too.
"$FXT_RUN" -q --min-duration=10s -o short.fxt -- "$P" >/dev/null
is "$(locs short.fxt | sort)" "$(locs plain.fxt | sort)" \
  "--min-duration: the functions of the calls left out are located too"

# An unmodified program (fxt-run --patch=.): its functions are located too.
why=$(patch_unavailable)
if [ -z "$why" ]; then
  "$FXT_RUN" -q --patch=. -o patched.fxt -- "$PROGS/stripme" >/dev/null
  ok "--patch: the patched functions are located" \
    test "$(locs patched.fxt | grep -c '^square [^ ]*stripme\.c:[0-9]*$')" = 1
else
  skip "$why"
fi

# Without debug info, and with it in a separate file.
if command -v objcopy >/dev/null 2>&1; then
  objcopy --strip-debug "$P" nodebug
  "$FXT_RUN" -q -o nodebug.fxt -- ./nodebug >/dev/null
  is "$(locs nodebug.fxt | sort)" "checksum (no debug info)
main (no debug info)
parse (no debug info)
scaled (no debug info)
srcline_other (no debug info)" "stripped of its debug info: each function says so"
  mkdir -p split
  objcopy --only-keep-debug "$P" split/srcline.debug
  objcopy --strip-debug --add-gnu-debuglink=split/srcline.debug "$P" split/srcline
  "$FXT_RUN" -q -o split.fxt -- ./split/srcline >/dev/null
  is "$(locs split.fxt | sort)" "$(locs plain.fxt | sort)" \
    "a separate debug file (.gnu_debuglink): the same locations"
else
  skip "no objcopy (binutils)"
  skip "no objcopy (binutils)"
fi

# An archive of another writer (no location records) reads as before.
"$HELPERS/mkarchives" "$TMPD" >/dev/null
"$REPORT" --srcline valid.fxt >old.txt
is "$?" 0 "another writer's archive: fxt-report --srcline reads it"
ok "... says that it names no location" grep -q '^# --srcline: the archive says where no function is' old.txt
ok "... and shows '-'" grep -q '  -  *work (cat)$' old.txt
ok "... json: null" sh -c \
  "'$REPORT' --srcline -F json valid.fxt | grep -q '\"name\":\"work\",\"category\":\"cat\",\"srcline\":null'"
ok "... fxt-export and fxt-flame read it" sh -c \
  "'$EXPORT' --chrome valid.fxt >/dev/null && '$FLAME' -o old.svg valid.fxt && ! grep -q loc old.svg"
finish
