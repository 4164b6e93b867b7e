#!/bin/sh
# bench/multiproc.sh: what fxt-run costs on real multi-process workloads,
# side by side in one run.  Not a test (but see "Checks" below).
#
#   make bench-multiproc              (from the build tree), or
#   abs_top_builddir=BUILD sh bench/multiproc.sh
#
# What it measures: the wall time, start to exit, of five self-contained
# workloads made in a scratch directory (no network), each run
#   plain                     without the agent,
#   default                   under `fxt-run -- ...` (the default --libc),
#   none                      under `fxt-run --libc=none -- ...` (the agent
#                             loaded and following fork/exec, no libc call
#                             recorded),
# interleaved: each of the N rounds runs plain, default, none in turn,
# after one warm-up round that is not counted.  The traced wall time
# includes everything fxt-run does: the agent in every process, each
# process's archive, and the merge into one archive at the end.
#
# Workloads:
#   bash pipes       bash: 100 x `echo $i | cat | wc -c`, then sed, sort,
#                    uniq and tr pipelines over a generated 20000-line file
#   find|xargs md5   find tree -type f -print0 | xargs -0 -P2 -n 20 md5sum,
#                    over 400 generated small files (20 md5sum processes)
#   make -j2         a generated C project (20 .c files and a Makefile),
#                    from clean each run (the clean is not timed)
#   cc -O2 -c        one `cc -O2 -c` of 4 generated C files (gcc runs cc1
#                    and as for each)
#   python3 x20      20 x `sh -c 'python3 -c pass'` from a sh loop
#
# How to read the table:
#   plain s          the plain run's wall time in seconds, median [min]
#   default x        the traced run's wall time divided by the plain run's
#   --libc=none x    of the same round (so that a machine whose speed
#                    drifts hits both alike), median [min] over the rounds
#   procs            processes traced, from fxt-run's summary line ("...;
#                    N processes"), default / none (a range if it varied)
#   goal             the project's goal: the default x at most 2
# A x of 1.00 is no cost; 4.00 means the workload took 4 times as long.
# The spread between min and median says how noisy the machine was: on a
# shared machine, compare ratios from one run of this script, not
# seconds between runs.
#
# Checks: every traced run must exit with the same status as the plain run
# of its round, and `fxt-dump --check` must accept its archive.  A failure
# is marked "FAIL" in its row, explained under the table, and makes the
# script exit 1.  A workload whose tools are missing (cc, make, python3)
# is skipped with a note.
#
# Environment: N (rounds, 3), WARMUP (uncounted rounds, 1), PYTHON
# (python3 to run; default /usr/bin/python3 if present, else python3 on
# PATH), CC (cc), BENCH_DIR (scratch directory, default under TMPDIR,
# removed at the end unless given).  Needs only sh, bash, awk, date with
# %N and the workloads' own tools.  With the defaults it takes several
# minutes on 2 CPUs: the traced runs are the long ones.
# Indirect names (cmd_NAME, prep_NAME) and text for other shells and make:
# shellcheck disable=SC2016,SC2034,SC2154,SC2317
set -eu

: "${abs_top_builddir:?set abs_top_builddir to the build tree}"
# shellcheck source=bench/stats.sh
. "$(cd "$(dirname "$0")" && pwd)/stats.sh"
B=$abs_top_builddir
FXT_RUN=$B/fxt-run
FXT_DUMP=$B/fxt-dump
N=${N:-3}
WARMUP=${WARMUP:-1}
CC=${CC:-cc}
export LC_ALL=C

bench_built bench-multiproc "$FXT_RUN" "$FXT_DUMP"
case $N in '' | *[!0-9]* | 0) echo "bench-multiproc: N must be a positive integer" >&2; exit 2 ;; esac
case $WARMUP in '' | *[!0-9]*) echo "bench-multiproc: WARMUP must be an integer" >&2; exit 2 ;; esac
bench_gnu_date bench-multiproc
for t in bash awk find xargs md5sum sed sort uniq tr wc cat seq; do
  command -v "$t" >/dev/null 2>&1 || { echo "bench-multiproc: $t not found" >&2; exit 2; }
done

bench_scratch bench-multiproc

# Python: a pyenv or similar shim on PATH is itself a shell script that
# starts more processes, so prefer the system's python3.
if [ -z "${PYTHON:-}" ]; then
  if [ -x /usr/bin/python3 ]; then
    PYTHON=/usr/bin/python3
  else
    PYTHON=$(command -v python3 2>/dev/null || true)
  fi
fi

# ------------------------------------------------------------- workloads
# Each workload NAME lives in $W/NAME (made by setup); prep_NAME runs
# there before every run, untimed; cmd_NAME (below) is what is timed.

gen_c_file() { # gen_c_file FILE I K: K static functions and fI calling them
  awk -v i="$2" -v n="$3" 'BEGIN {
    print "#include <stddef.h>"
    for (k = 0; k < n; k++) {
      printf "static unsigned s%d_%d(const unsigned *a, size_t n)\n{\n", i, k
      printf "\tunsigned h = %d;\n\tfor (size_t j = 0; j < n; j++)\n", k + 1
      printf "\t\th = (h ^ a[j]) * 16777619u + (unsigned)(j %% %d);\n", k + 3
      printf "\treturn h;\n}\n"
    }
    printf "unsigned f%d(const unsigned *a, size_t n)\n{\n\tunsigned h = 0;\n", i
    for (k = 0; k < n; k++)
      printf "\th += s%d_%d(a, n / %d + 1);\n", i, k, k % 5 + 1
    printf "\treturn h;\n}\n"
  }' >"$1"
}

setup() {
  # 1. bash with pipes.
  mkdir -p "$W/pipes"
  awk 'BEGIN {
    srand(7)
    for (i = 0; i < 20000; i++) {
      w = ""
      for (k = 0; k < 3 + int(rand() * 5); k++) w = w sprintf("%c", 97 + int(rand() * 8))
      printf "%s %d\n", w, int(rand() * 1000)
    }
  }' >"$W/pipes/words.txt"
  cat >"$W/pipes/pipes.sh" <<'EOF'
# Indirect names (cmd_NAME, prep_NAME) and text for other shells and make:
# shellcheck disable=SC2016,SC2034,SC2154,SC2317
set -eu
for i in $(seq 1 100); do
  echo "$i" | cat | wc -c
done >counts.txt
sed 's/ [0-9]*$//' words.txt | sort | uniq -c | sort -rn >top-words.txt
sed -n 's/^\([a-h]*\) \(9[0-9]*\)$/\2 \1/p' words.txt | sort -n | uniq >nines.txt
tr 'a-h' 'A-H' <words.txt | sed 's/ .*//' | sort -u | wc -l >distinct.txt
cut -d' ' -f2 words.txt | sort -n | uniq -c | sort -k1,1nr -k2,2n >numbers.txt
EOF
  # 2. find | xargs md5sum.
  mkdir -p "$W/md5"
  awk -v dir="$W/md5/tree" 'BEGIN {
    srand(11)
    for (d = 0; d < 20; d++) {
      system("mkdir -p " dir "/d" d)
      for (f = 0; f < 20; f++) {
        file = dir "/d" d "/f" f ".txt"
        n = 20 + int(rand() * 200)
        for (l = 0; l < n; l++) printf "%d %d %d\n", d, f, int(rand() * 1e9) >file
        close(file)
      }
    }
  }'
  # 3. make -j2 of 20 .c files.
  mkdir -p "$W/make"
  i=0
  while [ "$i" -lt 20 ]; do
    gen_c_file "$W/make/u$i.c" "$i" 40
    i=$((i + 1))
  done
  {
    echo '#include <stdio.h>'
    echo '#include <stddef.h>'
    i=0
    while [ "$i" -lt 20 ]; do
      echo "unsigned f$i(const unsigned *a, size_t n);"
      i=$((i + 1))
    done
    echo 'int main(void)'
    echo '{'
    echo '	unsigned a[64], h = 0;'
    echo '	for (unsigned j = 0; j < 64; j++)'
    echo '		a[j] = j * 2654435761u;'
    i=0
    while [ "$i" -lt 20 ]; do
      echo "	h += f$i(a, 64);"
      i=$((i + 1))
    done
    printf '\tprintf("%%u\\n", h);\n'
    echo '	return 0;'
    echo '}'
  } >"$W/make/main.c"
  {
    echo "CC = $CC"
    echo 'CFLAGS = -O2'
    printf 'OBJS = main.o'
    i=0
    while [ "$i" -lt 20 ]; do
      printf ' u%d.o' "$i"
      i=$((i + 1))
    done
    echo
    echo 'prog: $(OBJS)'
    printf '\t$(CC) -o $@ $(OBJS)\n'
    echo '%.o: %.c'
    printf '\t$(CC) $(CFLAGS) -c -o $@ $<\n'
    echo 'clean:'
    printf '\trm -f prog $(OBJS)\n'
    echo '.PHONY: clean'
  } >"$W/make/Makefile"
  # 4. cc -O2 -c of 4 files.
  mkdir -p "$W/cc"
  i=0
  while [ "$i" -lt 4 ]; do
    gen_c_file "$W/cc/c$i.c" "$i" 80
    i=$((i + 1))
  done
  # 5. python3 through sh -c.
  mkdir -p "$W/python"
}

# cmd_NAME: the shell command of a workload, run as `sh -c CMD` both
# plainly and under fxt-run (which runs a program, not a shell function),
# so that both run the same processes.  CC and PY are exported.
cmd_pipes='exec bash ./pipes.sh'
cmd_md5='find tree -type f -print0 | xargs -0 -P2 -n 20 md5sum >sums.txt'
cmd_make='exec make -s -j2'
cmd_cc='exec "$CC" -O2 -c c0.c c1.c c2.c c3.c'
cmd_python='i=0; while [ $i -lt 20 ]; do sh -c "\"\$PY\" -c pass"; i=$((i + 1)); done'
prep_pipes() { rm -f counts.txt top-words.txt nines.txt distinct.txt numbers.txt; }
prep_md5() { rm -f sums.txt; }
prep_make() { make -s clean >/dev/null 2>&1; }
prep_cc() { rm -f ./*.o; }
prep_python() { :; }
export CC
PY=$PYTHON
export PY

# ------------------------------------------------------------ measuring
now_ns() { date +%s%N; }

# once WORKLOAD VARIANT ROUND: one run.  Appends
# "wall_ns status procs check" to $W/res/WORKLOAD.VARIANT when ROUND > 0;
# check is "ok" or what failed, which also goes to $W/res/failures.
# A plain run sets plain_status, which the traced runs after it compare
# their status with.
once() {
  o_w=$1 o_v=$2 o_r=$3
  eval "o_cmd=\$cmd_$o_w"
  (cd "$W/$o_w" && "prep_$o_w") || true
  rm -f "$W"/t.fxt "$W"/t.*.fxt
  set +e
  o_t0=$(now_ns)
  case $o_v in
  plain) (cd "$W/$o_w" && exec sh -c "$o_cmd") >"$W/out" 2>"$W/err" ;;
  default) (cd "$W/$o_w" && exec "$FXT_RUN" -f -o "$W/t.fxt" -- sh -c "$o_cmd") \
    >"$W/out" 2>"$W/err" ;;
  none) (cd "$W/$o_w" && exec "$FXT_RUN" -f --libc=none -o "$W/t.fxt" -- sh -c "$o_cmd") \
    >"$W/out" 2>"$W/err" ;;
  esac
  o_st=$?
  o_t1=$(now_ns)
  set -e
  o_procs=-
  o_check=ok
  if [ "$o_v" = plain ]; then
    plain_status=$o_st
    [ "$o_st" -eq 0 ] || o_check="plain run exited with status $o_st"
  else
    o_line=$(grep '^fxt-run: wrote ' "$W/err" | tail -n 1 || true)
    if [ -n "$o_line" ]; then
      # "...; N processes, ..." when fxt-run merged the processes' archives.
      o_procs=$(printf '%s\n' "$o_line" | sed -n 's/.*; \([0-9][0-9]*\) process.*/\1/p')
      [ -n "$o_procs" ] || o_procs=-
      if ! "$FXT_DUMP" --check "$W/t.fxt" >"$W/check" 2>&1; then
        o_check="fxt-dump --check failed: $(grep -v '^$' "$W/check" | tail -n 1)"
      fi
    elif [ "$o_v" = none ] && grep -q '^fxt-run: .* wrote no archive' "$W/err"; then
      # Nothing recorded (no libc group, no instrumented code): noted
      # under the table, not a failure.
      o_procs=0
      echo "$o_w, --libc=none: fxt-run wrote no archive (\"$(sed -n \
        's/^fxt-run: \(.* wrote no archive\).*/\1/p' "$W/err" | head -n 1)\")" >>"$W/res/notes"
    else
      o_check="no fxt-run summary line (no archive)"
    fi
    if [ "$o_st" != "$plain_status" ]; then
      o_check="exit status $o_st, plain run's $plain_status${o_check#ok}"
    fi
  fi
  if [ "$o_check" != ok ]; then
    {
      echo "$o_w, $o_v, round $o_r: $o_check"
      tail -n 3 "$W/err" | sed 's/^/    /'
      [ "$o_v" = plain ] || [ ! -s "$W/check" ] || grep -m 2 'error' "$W/check" | sed 's/^/    /'
    } >>"$W/res/failures"
  fi
  rm -f "$W/check" "$W"/t.fxt "$W"/t.*.fxt
  [ "$o_r" -gt 0 ] || return 0
  echo "$((o_t1 - o_t0)) $o_st $o_procs $o_check" >>"$W/res/$o_w.$o_v"
}

# row WORKLOAD LABEL: the table row of a measured workload (FAIL when any
# of its runs failed, the warm-up's included).
row() {
  r_bad=0
  if [ -f "$W/res/failures" ] && grep -q "^$1, " "$W/res/failures"; then r_bad=1; fi
  awk -v label="$2" -v n="$N" -v bad="$r_bad" "$AWK_ORDER"'
    FILENAME ~ /\.plain$/ { plain[++np] = $1 / 1e9; next }
    {
      v = FILENAME ~ /\.default$/ ? "d" : "n"
      k = ++nv[v]
      ratio[v, k] = ($1 / 1e9) / plain[k]
      if ($3 != "-") {
        if (!((v, "lo") in procs) || $3 < procs[v, "lo"]) procs[v, "lo"] = $3
        if (!((v, "hi") in procs) || $3 > procs[v, "hi"]) procs[v, "hi"] = $3
      }
    }
    function ratios(v,   i, a) {
      for (i = 1; i <= nv[v]; i++) a[i] = ratio[v, i]
      return sprintf("%6.2f [%5.2f]", median(a, nv[v]), least(a, nv[v]))
    }
    function procrange(v) {
      if (!((v, "lo") in procs)) return "-"
      return procs[v, "lo"] == procs[v, "hi"] ? procs[v, "lo"] : procs[v, "lo"] "-" procs[v, "hi"]
    }
    END {
      for (i = 1; i <= np; i++) p[i] = plain[i]
      rd = ratios("d")
      for (i = 1; i <= nv["d"]; i++) d[i] = ratio["d", i]
      goal = median(d, nv["d"]) <= 2 ? "ok" : "over 2x"
      printf "%-16s %7.3f [%6.3f] %15s %15s %11s  %-7s %s\n", label, median(p, np),
        least(p, np), rd, ratios("n"), procrange("d") "/" procrange("n"), goal,
        bad ? "FAIL" : ""
    }' "$W/res/$1.plain" "$W/res/$1.default" "$W/res/$1.none"
}

# ----------------------------------------------------------------- main
mkdir -p "$W/res"
rm -f "$W"/res/*
setup

echo "== multi-process workloads: wall time, plain and under fxt-run"
echo "   ($(nproc) CPUs, $(uname -r); $N rounds after $WARMUP warm-up, each round" \
  "plain, default, --libc=none in turn)"
echo "   python: ${PYTHON:-none}; cc: $(command -v "$CC" 2>/dev/null || echo none)"
echo
printf '%-16s %16s %15s %15s %11s  %-7s\n' workload "plain s" "default x" \
  "--libc=none x" "procs" "goal<=2x"
printf '%-16s %16s %15s %15s %11s\n' "" "med [min]" "med [min]" "med [min]" "def/none"

for spec in "pipes|bash pipes" "md5|find|xargs md5" "make|make -j2" "cc|cc -O2 -c" \
  "python|python3 x20"; do
  w=${spec%%|*}
  label=${spec#*|}
  skip=
  case $w in
  make) command -v make >/dev/null 2>&1 || skip="no make" ;;
  esac
  case $w in
  make | cc) command -v "$CC" >/dev/null 2>&1 || skip="no $CC" ;;
  python) [ -n "$PYTHON" ] && [ -x "$PYTHON" ] || skip="no python3" ;;
  esac
  if [ -n "$skip" ]; then
    printf '%-16s (skipped: %s)\n' "$label" "$skip"
    continue
  fi
  r=1
  while [ "$r" -le $((WARMUP + N)) ]; do
    round=$((r - WARMUP))
    [ "$round" -gt 0 ] || round=0
    for v in plain default none; do
      once "$w" "$v" "$round"
    done
    r=$((r + 1))
  done
  row "$w" "$label"
done

echo
echo "plain s: seconds; x: traced wall / plain wall of the same round;"
echo "procs: processes in fxt-run's summary line (default/none); - when the"
echo "line gave no count, 0 when fxt-run wrote no archive (nothing recorded)."
if [ -s "$W/res/notes" ]; then
  echo
  echo "notes (not failures):"
  sort -u "$W/res/notes" | sed 's/^/  /'
fi
if [ -s "$W/res/failures" ]; then
  echo
  echo "FAILURES (traced exit status differs from the plain run's, or the archive"
  echo "does not pass fxt-dump --check):"
  sed 's/^/  /' "$W/res/failures"
  exit 1
fi
exit 0
