#!/bin/sh
# Compressed archives: fxt-run writes .fxt.zst (zstd) and .fxt.gz (gzip in
# independent members of 2 MiB, deflated side by side), and every tool
# reads both, streaming, exactly as it reads the plain archive: the same
# output, line for line.  The compression is told by the first bytes, not
# the name.  A cut or damaged .zst gives one error line and a non-zero
# exit.  Where the zstd program, gzip or Python's gzip and zstandard
# modules exist, they decompress ours to the same bytes.
. "$abs_top_srcdir/tests/lib/test_subr.sh"
B=$abs_top_builddir
scratch
plan 27

# fib(25): 242,785 calls, an archive of about 6 MB: several gzip members.
"$FXT_RUN" -q --libc=io -o "$TMPD/run.fxt" "$PROGS/calls_fib" 25 >/dev/null 2>"$TMPD/run.err" ||
  diag "$(cat "$TMPD/run.err")"
"$FXT_RUN" -q -o "$TMPD/run.fxt.zst" "$PROGS/calls_fib" 12 >/dev/null 2>"$TMPD/run.err" ||
  diag "$(cat "$TMPD/run.err")"
is "$(od -An -tx1 -N4 "$TMPD/run.fxt.zst" | tr -d ' ')" 28b52ffd "fxt-run -o X.fxt.zst writes zstd"
ok "and fxt-dump --check reads it" "$FXT_DUMP" --check "$TMPD/run.fxt.zst"

# The same archive three ways, by fxtrace's own writer (fxt-merge of the
# one archive), so that the bytes inside must be the same.
for e in fxt fxt.gz fxt.zst; do
  "$B/fxt-merge" -q "$TMPD/run.fxt" -o "$TMPD/a.$e" 2>"$TMPD/merge.err" || diag "$(cat "$TMPD/merge.err")"
done
is "$(od -An -tx1 -N2 "$TMPD/a.fxt.gz" | tr -d ' ')" 1f8b "fxt-merge -o X.fxt.gz writes gzip"
size=$(wc -c <"$TMPD/a.fxt")
ok "the plain archive is over 4 MiB ($size bytes): several gzip members" test "$size" -gt 4194304

# Every tool, plain against each compressed form (the archive's name,
# which some print, made the same).
tools='fxt-dump --check
fxt-dump --stats
fxt-dump
fxt-report
fxt-flame --folded
fxt-export --chrome
fxt-tree
fxt-replay
fxt-waits'
for e in fxt.gz fxt.zst; do
  echo "$tools" | while read -r tool args; do
    # shellcheck disable=SC2086 # args is a word list
    "$B/$tool" $args "$TMPD/a.fxt" 2>&1 | sed 's/a\.fxt[.a-z]*/A/g' >"$TMPD/plain.out"
    # shellcheck disable=SC2086
    "$B/$tool" $args "$TMPD/a.$e" 2>&1 | sed 's/a\.fxt[.a-z]*/A/g' >"$TMPD/z.out"
    if cmp -s "$TMPD/plain.out" "$TMPD/z.out" && [ -s "$TMPD/plain.out" ]; then
      echo same
    else
      echo "$tool $args: $e differs"
    fi
  done >"$TMPD/cmp.$e"
  is "$(sort -u "$TMPD/cmp.$e")" same "$e: dump --check, --stats, dump, report, flame, export, tree, replay, waits print what they print for .fxt"
done
# fxt-diff and fxt-merge take two: a compressed one against the plain one.
for e in fxt.gz fxt.zst; do
  "$B/fxt-diff" "$TMPD/a.fxt" "$TMPD/a.fxt" >"$TMPD/diff.plain" 2>&1
  "$B/fxt-diff" "$TMPD/a.fxt" "$TMPD/a.$e" >"$TMPD/diff.z" 2>&1
  ok "$e: fxt-diff against the plain archive prints what it prints for the plain one twice" \
    cmp -s "$TMPD/diff.plain" "$TMPD/diff.z"
  "$B/fxt-merge" -q "$TMPD/a.$e" -o "$TMPD/m.$e.fxt"
  ok "$e: fxt-merge of it writes the plain archive again" cmp -s "$TMPD/a.fxt" "$TMPD/m.$e.fxt"
  "$FXT_DUMP" --stats - <"$TMPD/a.$e" >"$TMPD/stdin.out" 2>&1
  "$FXT_DUMP" --stats "$TMPD/a.fxt" >"$TMPD/plain.out" 2>&1
  ok "$e: from standard input too" cmp -s "$TMPD/plain.out" "$TMPD/stdin.out"
done

# Told by the magic, not by the name.
cp "$TMPD/a.fxt.zst" "$TMPD/named-plain.fxt"
cp "$TMPD/a.fxt.gz" "$TMPD/named-plain2.fxt"
"$FXT_DUMP" --stats "$TMPD/named-plain.fxt" >"$TMPD/z.out" 2>&1
ok "a zstd archive named .fxt is read as zstd" cmp -s "$TMPD/plain.out" "$TMPD/z.out"
"$FXT_DUMP" --stats "$TMPD/named-plain2.fxt" >"$TMPD/z.out" 2>&1
ok "a gzip archive named .fxt is read as gzip" cmp -s "$TMPD/plain.out" "$TMPD/z.out"

# Two zstd archives one after the other (cat a b) are one stream.
cat "$TMPD/a.fxt.zst" "$TMPD/a.fxt.zst" >"$TMPD/twice.fxt.zst"
cat "$TMPD/a.fxt" "$TMPD/a.fxt" >"$TMPD/twice.fxt"
"$FXT_DUMP" --stats "$TMPD/twice.fxt" >"$TMPD/plain.out" 2>&1
"$FXT_DUMP" --stats "$TMPD/twice.fxt.zst" >"$TMPD/z.out" 2>&1
ok "concatenated zstd archives read as the concatenated plain ones" cmp -s "$TMPD/plain.out" "$TMPD/z.out"

# A cut .zst, and one with a few bytes overwritten: one line, exit 1.
zsize=$(wc -c <"$TMPD/a.fxt.zst")
head -c $((zsize / 2)) "$TMPD/a.fxt.zst" >"$TMPD/cut.fxt.zst"
cp "$TMPD/a.fxt.zst" "$TMPD/bad.fxt.zst"
printf 'garbage!garbage!' | dd of="$TMPD/bad.fxt.zst" bs=1 seek=$((zsize / 3)) conv=notrunc 2>/dev/null
for f in cut bad; do
  for tool in fxt-report fxt-tree fxt-flame; do
    "$B/$tool" "$TMPD/$f.fxt.zst" >/dev/null 2>"$TMPD/err"
    echo "$tool $? $(wc -l <"$TMPD/err") $(head -n 1 "$TMPD/err")"
  done >"$TMPD/errs.$f"
  diag "$(cat "$TMPD/errs.$f")"
  is "$(awk '$2 == 0 || $2 >= 128 || $3 != 1' "$TMPD/errs.$f")" "" \
    "$f .zst: fxt-report, fxt-tree, fxt-flame fail (no crash) with one line"
  "$FXT_DUMP" --check "$TMPD/$f.fxt.zst" >"$TMPD/out" 2>&1
  rc=$?
  ok "$f .zst: fxt-dump --check fails, no crash (exit $rc)" test "$rc" -ne 0 -a "$rc" -lt 128
done
grep -q 'zstd stream truncated' "$TMPD/errs.cut" ||
  diag "no 'truncated' in: $(cat "$TMPD/errs.cut")"
ok "the cut one says the stream is truncated" grep -q 'zstd stream truncated' "$TMPD/errs.cut"
ok "the damaged one says zstd" grep -q 'zstd: ' "$TMPD/errs.bad"

# Other programs read ours byte for byte.
if command -v zstd >/dev/null 2>&1; then
  ok "zstd -t accepts the .zst" zstd -q -t "$TMPD/a.fxt.zst"
  zstd -q -d -c "$TMPD/a.fxt.zst" >"$TMPD/unz.fxt"
  ok "zstd -d gives the plain archive" cmp -s "$TMPD/a.fxt" "$TMPD/unz.fxt"
else
  skip "no zstd program"
  skip "no zstd program"
fi
if command -v gzip >/dev/null 2>&1; then
  ok "gzip -t accepts the multi-member .gz" gzip -t "$TMPD/a.fxt.gz"
  gzip -d -c "$TMPD/a.fxt.gz" >"$TMPD/ungz.fxt"
  ok "gzip -d gives the plain archive" cmp -s "$TMPD/a.fxt" "$TMPD/ungz.fxt"
else
  skip "no gzip program"
  skip "no gzip program"
fi
if [ -n "$PYTHON3" ]; then
  # Members counted by zlib, one after another; Python's gzip module reads
  # the whole.
  out=$("$PYTHON3" - "$TMPD/a.fxt.gz" "$TMPD/a.fxt" <<'EOF'
import gzip, sys, zlib
data = open(sys.argv[1], "rb").read()
plain = open(sys.argv[2], "rb").read()
members = 0
while data:
    d = zlib.decompressobj(31)
    d.decompress(data)
    data = d.unused_data
    members += 1
print(members > 1, gzip.decompress(open(sys.argv[1], "rb").read()) == plain)
EOF
)
  is "$out" "True True" "Python: several gzip members, gzip.decompress gives the plain archive"
else
  skip "no python3"
fi
if [ -n "$PYTHON3" ] && "$PYTHON3" -c 'import zstandard' 2>/dev/null; then
  ok "Python's zstandard gives the plain archive" "$PYTHON3" -c '
import sys, zstandard
with open(sys.argv[1], "rb") as f:
    out = zstandard.ZstdDecompressor().stream_reader(f).read()
sys.exit(out != open(sys.argv[2], "rb").read())' "$TMPD/a.fxt.zst" "$TMPD/a.fxt"
else
  skip "no python3 zstandard module"
fi
finish
