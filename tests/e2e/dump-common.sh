# Shared set-up of the fxt-dump tests: TAP helpers, a scratch directory and
# the archives of tests/helpers/mkarchives in it ($A).
. "$abs_top_srcdir/tests/lib/test_subr.sh"

MKARCHIVES=$HELPERS/mkarchives
scratch
A=$TMPD
"$MKARCHIVES" "$A" || { echo "Bail out! mkarchives failed"; exit 1; }

# dump ARGS...: runs fxt-dump; stdout in $out, stderr in $err, status in $rc.
dump() {
  out=$("$FXT_DUMP" "$@" 2>"$TMPD/stderr"); rc=$?
  err=$(cat "$TMPD/stderr")
}
