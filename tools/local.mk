# tools/: programs that read archives, one folder per group of programs that
# share an engine (each folder's local.mk builds it):
#   front/    what every tool shares (the command line, reading an archive,
#             writing an output, escaping strings: libfxttools), the `fxt`
#             front command, and the front ends whose engines are elsewhere:
#             fxt-import (import/) and fxt-merge (the merger,
#             convert/merge.c, that fxt-run links too)
#   profile/  the per-function profile (libfxtprofile) and its two front
#             ends, fxt-report and fxt-diff (with its statistics)
#   flame/    flame graphs and folded stacks, built on the profile: fxt-flame
#   calls/    the call tree (fxt-tree, on the profile) and the calls in time
#             order as a stream, per thread or merged (fxt-replay)
#   view/     the interactive terminal view on calls/' engines, with its
#             own per-thread timeline: fxt-view (ncurses)
#   export/   Chrome trace-event JSON, one pass over the records: fxt-export
#   dump/     records as text, the archive's checks (with the nesting-depth
#             tracker) and maps: fxt-dump
#   waits/    who made each thread wait, from the flows: fxt-waits
# Each folder includes only front/'s headers and those of the folders it
# builds on (flame/ and calls/ on profile/, view/ on calls/), so a new view goes next to what it reads.

include tools/front/local.mk
include tools/profile/local.mk
include tools/flame/local.mk
include tools/calls/local.mk
include tools/view/local.mk
include tools/export/local.mk
include tools/dump/local.mk
include tools/waits/local.mk
