/* wordfreq: counts the words of its standard input with THREADS threads
 * and prints "COUNT WORD" lines, most frequent first (see wf.h).
 *
 *   wordfreq [-t THREADS] [-p PLUGIN] [-F] [-N] [-C] [-o FILE] [-d DIR] [-s HOOK]
 *            < text
 *
 * -p dlopens PLUGIN (as given: a relative path stays relative) and passes
 * every word through its wf_plugin_normalize before counting; the plug-in
 * is dlclosed before the report is printed.  -F sets RLIMIT_FSIZE to 0
 * once the input is read, as a program that must never write a file does;
 * -N likewise sets RLIMIT_NOFILE to 3 (no file can be opened any more).
 * -C closes every file descriptor above 2 first, as daemons do.  -o writes
 * the report to FILE (opened after -C, so on the lowest free fd, and
 * inherited by the hook) instead of standard output.  -d changes to DIR
 * once the input is read, and -s then runs the shell command HOOK with
 * system() and prints "hook: STATUS" (both before the report).
 * Exits 0, 1 when the input holds no word, 2 on errors. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "wf.h"

#define MAX_THREADS 16

struct job {
	char *begin, *end; /* a run of whole words, NUL-separated when done */
	wf_normalize_fn *normalize;
	struct wf_table table;
	int err;
};

static int is_space(char c)
{
	return c == ' ' || c == '\n' || c == '\t' || c == '\r';
}

/* Reads all of stdin into a NUL-terminated buffer.  0 or -errno. */
static int read_all(char **buf, size_t *len)
{
	size_t cap = 1 << 16, n = 0;
	char *b = malloc(cap);

	if (!b)
		return -ENOMEM;
	for (;;) {
		ssize_t got;
		if (cap - n < 2) {
			char *nb = realloc(b, cap * 2);
			if (!nb) {
				free(b);
				return -ENOMEM;
			}
			b = nb;
			cap *= 2;
		}
		got = read(0, b + n, cap - n - 1);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			int err = -errno;
			free(b);
			return err;
		}
		if (got == 0)
			break;
		n += (size_t)got;
	}
	b[n] = '\0';
	*buf = b;
	*len = n;
	return 0;
}

/* The thread body: counts the words of one job into its own table. */
static WF_NOINLINE void *count_range(void *arg)
{
	struct job *j = arg;
	char *p = j->begin;

	while (p < j->end && !j->err) {
		char *w;
		while (p < j->end && is_space(*p))
			p++;
		if (p == j->end)
			break;
		w = p;
		while (p < j->end && !is_space(*p))
			p++;
		*p++ = '\0';
		if (j->normalize)
			j->normalize(w);
		j->err = wf_table_add(&j->table, w, 1);
	}
	return NULL;
}

/* Cuts [buf, buf + len) into n runs of whole words. */
static void split(char *buf, size_t len, struct job *jobs, int n)
{
	char *p = buf, *end = buf + len;

	for (int i = 0; i < n; i++) {
		char *cut = i == n - 1 ? end : buf + len * (size_t)(i + 1) / (size_t)n;
		if (cut < p)
			cut = p;
		/* Past the space that ends the last word: the thread writes
		 * the word's terminator there, inside its own run. */
		while (cut < end && !is_space(*cut))
			cut++;
		if (cut < end)
			cut++;
		jobs[i].begin = p;
		jobs[i].end = cut;
		p = cut;
	}
}

static WF_NOINLINE void print_entry(FILE *out, const struct wf_entry *e)
{
	fprintf(out, "%7lu %s\n", e->count, e->word);
}

/* Prints the report and leaves through exit(), from inside a call. */
static WF_NOINLINE void report_and_exit(FILE *out, struct wf_table *total)
{
	struct wf_entry *v = wf_table_sorted(total);
	size_t len = total->len;

	if (!v) {
		fprintf(stderr, "wordfreq: out of memory\n");
		exit(2);
	}
	for (size_t i = 0; i < len; i++)
		print_entry(out, &v[i]);
	free(v);
	wf_table_free(total);
	exit(len ? 0 : 1);
}

int main(int argc, char **argv)
{
	struct job jobs[MAX_THREADS];
	pthread_t tids[MAX_THREADS];
	struct wf_table total;
	const char *plugin = NULL;
	void *handle = NULL;
	wf_normalize_fn *normalize = NULL;
	const char *dir = NULL, *hook = NULL, *report = NULL;
	FILE *out = stdout;
	int nthreads = 4, no_files = 0, no_fds = 0, opt, err;
	char *buf;
	size_t len;

	while ((opt = getopt(argc, argv, "t:p:FNCo:d:s:")) != -1) {
		switch (opt) {
		case 't':
			nthreads = atoi(optarg);
			break;
		case 'p':
			plugin = optarg;
			break;
		case 'F':
			no_files = 1;
			break;
		case 'N':
			no_fds = 1;
			break;
		case 'C':
			for (int fd = 3; fd < 1024; fd++)
				close(fd);
			break;
		case 'o':
			report = optarg;
			break;
		case 'd':
			dir = optarg;
			break;
		case 's':
			hook = optarg;
			break;
		default:
			return 2;
		}
	}
	if (nthreads < 1 || nthreads > MAX_THREADS) {
		fprintf(stderr, "wordfreq: -t wants 1 to %d\n", MAX_THREADS);
		return 2;
	}
	if (report) {
		out = fopen(report, "w");
		if (!out) {
			fprintf(stderr, "wordfreq: %s: %s\n", report, strerror(errno));
			return 2;
		}
	}
	if (plugin) {
		handle = dlopen(plugin, RTLD_NOW);
		normalize = handle ? (wf_normalize_fn *)dlsym(handle, WF_PLUGIN_SYMBOL) : NULL;
		if (!normalize) {
			fprintf(stderr, "wordfreq: %s: %s\n", plugin, dlerror());
			return 2;
		}
	}
	err = read_all(&buf, &len);
	if (err < 0) {
		fprintf(stderr, "wordfreq: reading stdin: %s\n", strerror(-err));
		return 2;
	}
	if (no_files) {
		struct rlimit none = { 0, 0 };
		signal(SIGXFSZ, SIG_IGN);
		if (setrlimit(RLIMIT_FSIZE, &none) != 0)
			perror("wordfreq: setrlimit");
	}
	if (no_fds) {
		struct rlimit three = { 3, 3 };
		if (setrlimit(RLIMIT_NOFILE, &three) != 0)
			perror("wordfreq: setrlimit");
	}

	split(buf, len, jobs, nthreads);
	for (int i = 0; i < nthreads; i++) {
		jobs[i].normalize = normalize;
		jobs[i].err = 0;
		wf_table_init(&jobs[i].table);
		err = pthread_create(&tids[i], NULL, count_range, &jobs[i]);
		if (err) {
			fprintf(stderr, "wordfreq: pthread_create: %s\n", strerror(err));
			return 2;
		}
	}
	wf_table_init(&total);
	for (int i = 0; i < nthreads; i++) {
		pthread_join(tids[i], NULL);
		if (!jobs[i].err)
			jobs[i].err = wf_table_merge(&total, &jobs[i].table);
		wf_table_free(&jobs[i].table);
		if (jobs[i].err) {
			fprintf(stderr, "wordfreq: %s\n", strerror(-jobs[i].err));
			return 2;
		}
	}
	free(buf);
	if (handle)
		dlclose(handle);
	if (dir && chdir(dir) != 0) {
		fprintf(stderr, "wordfreq: %s: %s\n", dir, strerror(errno));
		return 2;
	}
	if (hook) {
		int status;
		fflush(stdout);
		status = system(hook);
		printf("hook: %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	}
	report_and_exit(out, &total);
}
