#!/bin/sh
# Source lines decoded while the program runs (launcher/early.h): fxt-run's
# early thread, when it first sees a spool, decodes the location of every
# function of its modules built with -finstrument-functions into the files
# kept across runs (FXT_SRCLINE_CACHE), so that even a first run's
# conversion reads them there instead of decoding them.  The program here
# waits until the file is kept before it calls anything (60 s at most: the
# thread runs 19 nice levels below the program, which a loaded machine
# makes slow); the archive says what it says without the cache, and the
# file holds the functions never called too.  Fails without the early
# thread's decoding (the program waits in vain, its conversion decodes).
# A spool converted after its program (fxt-run --recover; or a first run
# that ended before the early thread got to it): a thread beside the
# conversion decodes and keeps them, and the conversion reads them (fails
# without it: the conversion decodes them itself); not with FXT_RUN_LATE.
. "$abs_top_srcdir/tests/lib/test_subr.sh"

plan 12
scratch
cd "$TMPD" || exit 1
C=$TMPD/cache
FXT_SRCLINE_CACHE=$C
export FXT_SRCLINE_CACHE

cat >ahead.c <<'EOF'
#include <dirent.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Whether the folder holds a kept file (NAME.loc); no slice of its own. */
__attribute__((no_instrument_function)) static int kept(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int found = 0;

	while (d && !found && (de = readdir(d)) != NULL) {
		size_t n = strlen(de->d_name);
		found = n > 4 && strcmp(de->d_name + n - 4, ".loc") == 0;
	}
	if (d)
		closedir(d);
	return found;
}

__attribute__((noinline)) int called(int x)
{
	return x + 1;
}

__attribute__((noinline)) int never_called(int x)
{
	return x * 3;
}

int main(int argc, char **argv)
{
	const char *dir = getenv("FXT_SRCLINE_CACHE");

	int wait = argc > 1 && strcmp(argv[1], "wait") == 0, r;

	for (int i = 0; wait && i < 6000 && !kept(dir); i++)
		usleep(10000);
	r = called(argc) > 0 ? 0 : never_called(argc);
	if (argc > 1 && strcmp(argv[1], "kill") == 0)
		raise(SIGKILL); /* its spool left to convert */
	return r;
}
EOF
${CC:-cc} -g -O0 -finstrument-functions -o ahead ahead.c 2>/dev/null ||
  skip_rest "no C compiler"

# locs ARCHIVE: "NAME LOC" of each function record, by name.
locs() { fxt_locs "$1" | sort; }
# run NAME: records ./ahead wait into NAME.fxt, fxt-run's debug lines in NAME.err.
run() {
  FXT_RUN_DEBUG=1 "$FXT_RUN" -q -o "$1.fxt" -- ./ahead wait >/dev/null 2>"$1.err"
}
ahead() { sed -n 's/^fxt-run: early: source lines of //p' "$1.err"; }
kept() { sed -n 's/^fxt-run: source lines: //p' "$1.err"; }

FXT_SRCLINE_CACHE=off "$FXT_RUN" -q -o off.fxt -- ./ahead >/dev/null
want=$(locs off.fxt)
is "$(echo "$want" | sed 's/ .*//' | tr '\n' ' ')" "called main " "without the cache: called and main"

run first
is "$(ahead first)" "1 module(s) decoded and kept while the program ran" \
  "the first run: the program's lines decoded while it ran"
is "$(kept first | sed 's/^[1-9][0-9]* from/N from/')" "N from the files kept across runs, 0 decoded and kept" \
  "... and its conversion reads them all from the kept file"
is "$(locs first.fxt)" "$want" "... the locations made without the cache"
line=$(grep -n '^__attribute__((noinline)) int never_called' ahead.c | cut -d: -f1)
ok "the kept file holds never_called's location too (ahead.c:$((line + 1)))" \
  grep -q "ahead.c:$((line + 1))" "$C"/*.loc

run second
is "$(ahead second)" "0 module(s) decoded and kept while the program ran" \
  "a later run: nothing to decode, the file is kept"
is "$(kept second | sed 's/^[1-9][0-9]* from/N from/')" "N from the files kept across runs, 0 decoded and kept" \
  "... and read"
is "$(locs second.fxt)" "$want" "... the same locations"
# A killed process's spool, its lines not kept yet, converted afterwards.
C=$TMPD/cache-rec
FXT_SRCLINE_CACHE=$C
mkdir rec && (cd rec && LD_PRELOAD=$abs_top_builddir/.libs/libfxt-agent.so FXT_OUTPUT=$TMPD/rec/k.fxt \
  ./../ahead kill >/dev/null 2>&1)
spool=$(ls rec/k*.spool 2>/dev/null | head -1)
cp "$spool" late.spool 2>/dev/null
FXT_RUN_DEBUG=1 "$FXT_RUN" --recover -q -o rec.fxt "$spool" >/dev/null 2>rec.err
is "$(kept rec)" "2 from the files kept across runs, 0 decoded and kept" \
  "a spool converted after its program: its lines decoded beside the conversion, which reads them"
is "$(locs rec.fxt)" "$want" "... the locations made without the cache"
rm -rf "$C"
FXT_RUN_LATE=1 FXT_RUN_DEBUG=1 "$FXT_RUN" --recover -q -o late.fxt late.spool >/dev/null 2>late.err
is "$(kept late)" "0 from the files kept across runs, 2 decoded and kept" \
  "... with FXT_RUN_LATE, by the conversion itself"
is "$(locs late.fxt)" "$want" "... the same locations"
finish
