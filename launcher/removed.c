/* Large spools removed at the end of the run: their pages freed by a
 * child of fxt-run after the run rather than before fxt-run's exit (see
 * spools_keep_removed(), launcher.h). */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "launcher/launcher.h"
#include "run/settings.h"

int spools_keep_removed(void *ctx, int fd)
{
	struct spools *r = ctx;
	struct stat sb;
	int *v;

	if (!(r->finishing || r->cur_last) || fstat(fd, &sb) != 0 ||
	    (uint64_t)sb.st_size < REMOVED_KEEP_MIN)
		return -EAGAIN;
	v = realloc(r->removed, (r->nremoved + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	r->removed = v;
	r->removed[r->nremoved++] = fd;
	return 0;
}

static int int_cmp(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

/* A child that has closed every other descriptor (so nothing waits on a
 * pipe fxt-run shared) holds the last ones of the spools, and exits:
 * their pages are freed then, while fxt-run goes on to its own exit.
 * Closed here when there is no child. */
void spools_release_removed(struct spools *r)
{
	pid_t pid;

	if (!r->nremoved)
		return;
	if (getenv(FXT_ENV(RUN_DEBUG)) != NULL)
		fprintf(stderr, "fxt-run: %zu removed spools closed after the run\n", r->nremoved);
	qsort(r->removed, r->nremoved, sizeof(*r->removed), int_cmp);
	fflush(NULL); /* nothing buffered twice */
	pid = fork();
	if (pid == 0) {
		unsigned lo = 0;

		for (size_t i = 0; i <= r->nremoved; i++) {
			unsigned hi = i < r->nremoved ? (unsigned)r->removed[i] : ~0u;

			if (lo < hi && close_range(lo, hi - 1, 0) != 0)
				for (unsigned fd = lo; fd < hi && fd < 1024; fd++)
					close((int)fd);
			lo = hi + 1;
		}
		_exit(0);
	}
	for (size_t i = 0; i < r->nremoved; i++)
		close(r->removed[i]);
	free(r->removed);
	r->removed = NULL;
	r->nremoved = 0;
}
