#!/bin/sh
# examples/cxx_demo under fxt-run: demangled C++ names (templates,
# overloads, a lambda) and exact nesting through a C++ exception.
. "$abs_top_srcdir/tests/e2e/agent-common.sh"

plan 8
prog=$EXAMPLES/cxx_demo

trace cxx.fxt "$prog"
is "$rc" 0 "exit status"
is "$(cat "$TMPD/out")" "cxx_demo: total=274" "program output"
check_archive cxx cxx.fxt

lambda='demo::run()::{lambda(int)#1}'
is "$("$CALLTREE" cxx.fxt)" "$(cat <<EOT
thread cxx_demo
  main 1
    demo::run() 1
      demo::Stack<int>::push(int) 5
      demo::Stack<int>::pop() 5
      demo::Stack<double>::push(double) 2
      demo::Stack<double>::pop() 2
      demo::area(int, int) 2
      demo::area(double) 1
      demo::guarded(int) 4
        demo::divide_all(int) 4
          demo::checked_div(int, int) 4
      int demo::apply<$lambda>($lambda, int) 1
        $lambda::operator()(int) const 3
EOT
)" "demangled names, tree and counts"

# The exception unwinds checked_div and divide_all: their slices must end
# inside guarded's, or a viewer drops them.
is "$(stat_of cxx.fxt overlaps)/$(stat_of cxx.fxt open)/$(stat_of cxx.fxt unmatched)" \
  0/0/0 "exact nesting through the exception"
is "$(stat_of cxx.fxt threads)" 1 "one thread track"
UFTRACE_DEMANGLE=full cross_check cxx_demo cxx.fxt "$prog"

# The same program linked with -static-libgcc: the exception is thrown by
# libgcc_s (the agent brings no unwinder of its own into the program) and
# resumed by the program's copy of libgcc's.
trace slg.fxt "$PROGS/cxx_static_libgcc"
is "$rc/$(cat "$TMPD/out")" "0/cxx_demo: total=274" "-static-libgcc: the exit status and output are the plain run's"
finish
