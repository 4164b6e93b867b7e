#!/bin/sh
# examples/plugin under fxt-run: the functions of a dlopened plugin are
# named although it was dlclosed before the program exited.
. "$abs_top_srcdir/tests/e2e/agent-common.sh"

plan 5
prog=$EXAMPLES/plugin

trace plugin.fxt "$prog"
is "$rc" 0 "exit status"
check_archive plugin plugin.fxt
is "$("$CALLTREE" plugin.fxt)" "$(cat <<'EOT'
thread plugin
  main 1
    run_plugin 3
      plugin_compute 3
        plugin_square 24
EOT
)" "plugin functions named after dlclose"
is "$(stat_of plugin.fxt overlaps)/$(stat_of plugin.fxt open)/$(stat_of plugin.fxt unmatched)" \
  0/0/0 "exact nesting, no unterminated slice"
cross_check plugin plugin.fxt "$prog"
finish
