#!/bin/sh
# python3 -c with a pool of threads sharing a lock, unmodified, run
# plainly and under `fxt-run --libc=all --sample`: the same output (its
# open fds included) and exit status; one pthread_create per thread, each
# with a flow into the new thread's "thread" slice; and the hand-offs of
# CPython's locks (POSIX semaphores) as sem_post -> sem_wait flows.

. "$abs_top_srcdir/tests/real/libc-real-common.sh"

# The system's python3 (not a version manager's shim, which would add a
# shell and exec's of its own).
PY=$(prog /usr/bin/python3 "${PYTHON3:-python3}" python3)

plan 12

if [ -z "$PY" ]; then
  skip_n 12 "python3 not installed"
  finish
  exit
fi

# Four threads, each adding 1000 times under one lock.  Thread.start()
# waits until the thread has started (a semaphore the new thread posts),
# and join() until it has ended: hand-offs that always wait.  Then the
# program prints its open fds: the agent (sampling included) must not
# have left one of its own in the program.
cat >pool.py <<'EOS'
import os
import sys
import threading

lock = threading.Lock()
total = 0


def work(n):
    global total
    for _ in range(n):
        with lock:
            total += 1


pool = [threading.Thread(target=work, args=(1000,)) for _ in range(4)]
for t in pool:
    t.start()
for t in pool:
    t.join()
print(total)
print('done', file=sys.stderr)
print('fds', sorted(int(fd) for fd in os.listdir('/proc/self/fd')))
EOS

compare python --sample -- "$PY" -c "$(cat pool.py)"
is "$(head -n 1 python.out)" 4000 "python: the threads' sum"
check python
sampled python python3
is "$(slices python pthread_create) $(slices python thread)" "4 4" \
  "python: 4 pthread_create slices, 4 thread slices"
ok "python: sem_wait and sem_post slices" \
  test "$(slices python sem_wait)" -ge 1 -a "$(slices python sem_post)" -ge 1
ok "python: its stdout line as a log record" logged python 4000
ok "python: its stderr line as a log record" logged python "done"
if flows python; then
  is "$(nflows python '^pthread_create -> thread  same$')" 4 \
    "python: a flow from each pthread_create into its thread"
  ok "python: sem_post -> sem_wait flows" test "$(nflows python '^sem_post -> sem_wait  same$')" -ge 1
else
  skip "python3 not found for the flow check"
  skip "python3 not found for the flow check"
fi

finish
