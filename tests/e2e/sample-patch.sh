#!/bin/sh
# Stack sampling together with run-time patching (fxt-run --patch=.
# --sample): patching puts its return trampoline where each patched call's
# return address was, and the sampler, which walks the stack from the
# signal's context, must see the real return addresses (agent/sample/sample.c,
# agent/patch/rt.c).  tests/progs/sample_chain spins in leaf under middle
# under outer under main, all patched: the sample track shows that chain as
# the unpatched run does, in the main thread and in two threads, with
# every call counted and nothing of the agent's but its "fxtrace" frame,
# also when most samples land in patched calls' entries, returns and
# stubs; a C++ program that throws through patched frames
# (tests/progs/patchme_cxx) and a real program (xz -T2, when installed)
# run as they do.
. "$abs_top_srcdir/tests/e2e/agent-common.sh"

plan 24
why=$(patch_unavailable)
[ -z "$why" ] || skip_rest "$why"
C=$PROGS/sample_chain

# paths ARCHIVE THREAD NAME: the distinct paths from the root of the
# thread's stack chart (fxt_calltree) to the frames named NAME.
paths() {
  "$CALLTREE" "$1" | awk -v t="thread $2" -v f="$3" '
    /^thread / { on = ($0 == t); next }
    on {
      match($0, /^ */); d = RLENGTH / 2
      name = substr($0, RLENGTH + 1); sub(/ [0-9]+$/, "", name)
      p[d] = name; path = p[1]
      for (i = 2; i <= d; i++) path = path "/" p[i]
      if (name == f) print path
    }' | sort -u
}

# agent_frames ARCHIVE: the sample tracks' frames that are the agent's
# code by address (a trampoline taken for a return address), not its one
# "fxtrace" frame.
agent_frames() { "$CALLTREE" "$1" | grep -c 'libfxt-agent\.so+0x'; }

# total_of ARCHIVE FUNCTION: its sampled total ns in fxt-report (0 if absent).
total_of() {
  "$abs_top_builddir/fxt-report" -F csv --samples=only "$1" |
    awk -F, -v f="$2" 'NR > 1 && $NF == f { t = $1 } END { printf "%.0f\n", t + 0 }'
}

# --- the main thread --------------------------------------------------------
"$C" >plain.out 2>&1
plain_rc=$?
trace np.fxt --sample=1000 "$C"
want=$(paths np.fxt 'sample_chain (samples)' leaf)
diag "unpatched: $want"
ok "unpatched: leaf sampled under main, outer and middle" \
  sh -c 'echo "$1" | grep -q "/main/\(chain/\)\{0,1\}outer/middle/leaf$"' - "$want"
trace p.fxt --sample=1000 --patch=. "$C"
is "$rc/$(cat out)" "$plain_rc/$(cat plain.out)" "patched: output and exit status unchanged"
check_archive patched p.fxt
is "$("$CALLTREE" p.fxt | awk '/^thread / { on = ($0 == "thread sample_chain") } on && $1 ~ /^(outer|middle|leaf)$/ { print $1, $2 }')" "outer 300
middle 300
leaf 300" "patched: every call counted"
is "$(paths p.fxt 'sample_chain (samples)' leaf)" "$want" \
  "patched: leaf sampled under main, outer and middle, as unpatched"
is "$(agent_frames p.fxt)" 0 "patched: no trampoline in a sampled stack"
main_ns=$(total_of p.fxt main)
leaf_ns=$(total_of p.fxt leaf)
diag "main $main_ns ns, leaf $leaf_ns ns"
ok "patched: leaf has most of main's samples" test $((leaf_ns * 100)) -ge $((main_ns * 80)) -a "$main_ns" -gt 0

# --- two threads at once --------------------------------------------------------
trace t.fxt --sample=1000 --patch=. "$C" 200 2
is "$rc/$(cat out)" "0/chain 200" "threads: output and exit status unchanged"
check_archive threads t.fxt
for w in chain1 chain2; do
  is "$(paths t.fxt "$w (samples)" leaf | sed 's,^.*/chain/,chain/,')" "chain/outer/middle/leaf" \
    "$w: leaf sampled under chain, outer and middle"
done
is "$(agent_frames t.fxt)" 0 "threads: no trampoline in a sampled stack"

# --- many short patched calls: samples in their entries and returns ---------
# Most of the time goes to the trampolines and the agent's records, where
# the return address is being hooked or put back: such a sample is the
# agent's, under the function whose call it was in (or its caller).  Some
# land in a stub, in the first instructions of a function, moved there.
# (--min-duration: the calls are not what is looked at, and are many.)
"$C" -n 8000000 >plain.out 2>&1
trace nn.fxt --sample=10000 --min-duration=1ms "$C" -n 8000000
want=$(paths nn.fxt 'sample_chain (samples)' leaf)
trace n.fxt --sample=10000 --min-duration=1ms --patch=. "$C" -n 8000000
is "$rc/$(cat out)" "0/$(cat plain.out)" "short calls: output and exit status unchanged"
check_archive short n.fxt
is "$(agent_frames n.fxt)" 0 "short calls: no trampoline in a sampled stack"
is "$(paths n.fxt 'sample_chain (samples)' leaf)" "$want" \
  "short calls: leaf sampled under main, outer and middle, as unpatched"
n=$(paths n.fxt 'sample_chain (samples)' fxtrace | grep -c /main/outer)
ok "short calls: the agent's time in them is under them ($n places)" test "$n" -ge 1
# (A sample at the exit trampoline's first instruction, a patched call
# just returned, once ended there: tests/unit/test_sample_walk.)
roots=$("$CALLTREE" n.fxt | awk '/^thread / { on = /samples/; next } on && /^  [^ ]/ { print $1, $2 }')
is "$(echo "$roots" | awk '{ print $1 }' | sort -u)" "_start" \
  "short calls: every sampled stack from _start on (none cut short in the agent)"

# --- C++ that throws through patched frames -------------------------------------
X=$PROGS/patchme_cxx
"$X" >plain.out 2>&1
plain_rc=$?
trace x.fxt --sample=10000 --patch=. "$X"
is "$rc/$(cat out)" "$plain_rc/$(cat plain.out)" "patchme_cxx: output and exit status unchanged"
check_archive patchme_cxx x.fxt
is "$(agent_frames x.fxt)" 0 "patchme_cxx: no trampoline in a sampled stack"

# --- a real program: xz's threads -----------------------------------------------
if command -v xz >/dev/null; then
  seq 1 1000000 >in.bin
  plain=$(xz -T2 -3 -c in.bin | cksum)
  trace xz.fxt --sample=1000 --patch=. --patch-module='liblzma*' xz -T2 -3 -c in.bin
  is "$rc/$(cksum <out)" "0/$plain" "xz -T2, liblzma patched: output and exit status unchanged"
  is "$(agent_frames xz.fxt)" 0 "xz: no trampoline in a sampled stack"
  # Every sampled stack goes down to where its thread started.
  is "$("$CALLTREE" xz.fxt | awk '/^thread / { on = /samples/; next } on && /^  [^ ]/ { print $1 }' | sort -u |
    grep -v '^xz+')" clone3 "xz: the workers' samples from clone3 on, the main thread's from its start"
else
  skip "xz not installed"
  skip "xz not installed"
  skip "xz not installed"
fi
finish
