/* Before the program runs: finding the agent and the program (as a shell
 * finds it), warning when the loader will not preload the agent, the
 * archive's path, and the environment the traced processes read
 * (run/settings.def). */
#include "config.h"

#include <elf.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <link.h>
#include <linux/capability.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "launcher/launcher.h"
#include "run/settings.h"
#include "run/names.h"
#include "run/proc.h"
#include "symbolizer/symbolizer.h"

#ifndef FXT_PKGLIBDIR
#define FXT_PKGLIBDIR "/usr/local/lib/fxtrace"
#endif

#define AGENT_NAME "libfxt-agent.so"

static bool is_regular_file(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* The directory holding our own executable, in buf.  Returns 0 or -errno. */
static int self_dir(char *buf, size_t size)
{
	ssize_t n = readlink("/proc/self/exe", buf, size - 1);
	if (n < 0)
		return -errno;
	if ((size_t)n == size - 1)
		return -ENAMETOOLONG;
	buf[n] = '\0';
	char *slash = strrchr(buf, '/');
	if (slash == NULL)
		return -EINVAL;
	*slash = '\0';
	return 0;
}

/* Finds the agent and returns its absolute path (malloc'd), or dies. */
char *find_agent(void)
{
	const char *env = getenv(FXT_ENV(AGENT));
	char dir[PATH_MAX], cand[PATH_MAX + 64];

	if (env != NULL && env[0] != '\0') {
		char *abs = realpath(env, NULL);
		if (abs == NULL || !is_regular_file(abs))
			die(EXIT_USAGE, "%s=%s: %s", FXT_ENV(AGENT), env,
			    abs == NULL ? strerror(errno) : "not a regular file");
		return abs;
	}

	if (self_dir(dir, sizeof(dir)) == 0) {
		/* Installed side by side, or in the libtool build tree, where
		 * the shared object lives in .libs/. */
		static const char *const subdirs[] = { "", "/.libs" };
		for (size_t i = 0; i < sizeof(subdirs) / sizeof(subdirs[0]); i++) {
			snprintf(cand, sizeof(cand), "%s%s/%s", dir, subdirs[i], AGENT_NAME);
			if (is_regular_file(cand))
				return realpath(cand, NULL);
		}
	}
	snprintf(cand, sizeof(cand), "%s/%s", FXT_PKGLIBDIR, AGENT_NAME);
	if (is_regular_file(cand))
		return realpath(cand, NULL);
	die(EXIT_USAGE, "cannot find the agent %s (next to fxt-run, in %s, or set %s)", AGENT_NAME,
	    FXT_PKGLIBDIR, FXT_ENV(AGENT));
}

/* PROG's path (malloc'd) as a shell finds it: a name with a slash is a
 * path, any other name is searched in $PATH.  NULL when there is none,
 * with *err: ENOENT (not found), EACCES (found but not executable), or
 * why the path cannot be run (stat()'s error, EISDIR). */
char *program_path(const char *prog, int *err)
{
	if (strchr(prog, '/') != NULL) {
		struct stat st;
		char *path;

		if (stat(prog, &st) != 0)
			*err = errno;
		else if (S_ISDIR(st.st_mode))
			*err = EISDIR;
		else if (access(prog, X_OK) != 0)
			*err = errno;
		else if ((path = strdup(prog)) == NULL)
			die(EXIT_USAGE, "out of memory");
		else
			return path;
		return NULL;
	}

	const char *path = getenv("PATH");
	if (path == NULL)
		path = "/usr/local/bin:/usr/bin:/bin";
	bool denied = false;
	size_t plen = strlen(prog);
	for (const char *p = path;; p++) {
		const char *colon = strchrnul(p, ':');
		size_t dlen = (size_t)(colon - p);
		/* An empty element means the current directory. */
		char *cand = malloc(dlen + plen + 3);
		if (cand == NULL)
			die(EXIT_USAGE, "out of memory");
		if (dlen == 0)
			sprintf(cand, "./%s", prog);
		else
			sprintf(cand, "%.*s/%s", (int)dlen, p, prog);

		struct stat st;
		if (stat(cand, &st) == 0 && !S_ISDIR(st.st_mode)) {
			if (access(cand, X_OK) == 0)
				return cand;
			denied = true;
		}
		free(cand);
		if (*colon == '\0')
			break;
		p = colon;
	}
	*err = denied ? EACCES : ENOENT;
	return NULL;
}

/* Resolves PROGRAM as a shell does (program_path()).  Returns the path
 * (malloc'd), or dies with 127 (not found) or 126 (found but not
 * executable). */
char *find_program(const char *prog)
{
	int err = 0;
	char *path = program_path(prog, &err);

	if (path)
		return path;
	if (strchr(prog, '/') != NULL)
		die(err == ENOENT || err == ENOTDIR ? EXIT_NOTFOUND : EXIT_NOEXEC, "%s: %s", prog,
		    strerror(err));
	if (err == EACCES)
		die(EXIT_NOEXEC, "%s: Permission denied", prog);
	die(EXIT_NOTFOUND, "%s: command not found", prog);
}

/* Whether executing `path` gains capabilities from its file capabilities
 * (the xattr security.capability, as setcap(8) writes it), which puts it
 * in secure mode like a set-user-ID program: the kernel does so when the
 * file's effective bit is set or it grants permitted capabilities, unless
 * the real user is root.  (Which of those the bounding set keeps is not
 * looked at: a grant it removes entirely is rare.) */
static bool gains_file_caps(const char *path)
{
	struct vfs_ns_cap_data cap;
	ssize_t n;
	uint32_t magic;

	if (getuid() == 0)
		return false;
	n = getxattr(path, "security.capability", &cap, sizeof(cap));
	if (n < (ssize_t)sizeof(cap.magic_etc))
		return false; /* none, or no xattrs on this filesystem */
	magic = le32toh(cap.magic_etc);
	if (magic & VFS_CAP_FLAGS_EFFECTIVE)
		return true;
	switch (magic & VFS_CAP_REVISION_MASK) {
	case VFS_CAP_REVISION_1:
		return n >= (ssize_t)XATTR_CAPS_SZ_1 && cap.data[0].permitted != 0;
	case VFS_CAP_REVISION_2:
	case VFS_CAP_REVISION_3:
		return n >= (ssize_t)XATTR_CAPS_SZ_2 &&
		       (cap.data[0].permitted != 0 || cap.data[1].permitted != 0);
	default:
		return false;
	}
}

/* The loader ignores LD_PRELOAD in a program that has none (static and
 * static-PIE executables: no PT_INTERP) and in a secure-mode one (set-user-
 * or set-group-ID to someone else, or gaining file capabilities): say so
 * before it runs untraced.  Scripts and unreadable files are not checked. */
void warn_untraceable(const char *path, const char *name)
{
	struct fxt_sym_layout lay;
	struct stat st;

	if (stat(path, &st) != 0)
		return;
	if (((st.st_mode & S_ISUID) && st.st_uid != geteuid()) ||
	    ((st.st_mode & S_ISGID) && st.st_gid != getegid())) {
		fprintf(stderr,
			"fxt-run: warning: %s is set-%s-ID: the loader ignores LD_PRELOAD, so it "
			"runs untraced\n",
			name, (st.st_mode & S_ISUID) && st.st_uid != geteuid() ? "user" : "group");
		return;
	}
	if (gains_file_caps(path)) {
		fprintf(
		    stderr,
		    "fxt-run: warning: %s has file capabilities: the loader ignores LD_PRELOAD, "
		    "so it runs untraced\n",
		    name);
		return;
	}
	/* Scripts, unreadable files and other machines' programs are not
	 * our business: the kernel or the loader will say. */
	if (fxt_sym_elf_layout(path, &lay) != 0 || lay.bits != __ELF_NATIVE_CLASS)
		return;
	if (!lay.interp)
		fprintf(stderr,
			"fxt-run: warning: %s is statically linked: LD_PRELOAD cannot load the "
			"agent into it, so it runs untraced\n",
			name);
}

/* The archive's absolute path (malloc'd): -o (a template expanded with
 * `v`, unless v is NULL), or PROGRAM's basename (-p: the process's name)
 * plus ".fxt" in the current directory.  Absolute because the program may change directory before
 * the agent writes.  Dies if the file exists (without --force) or its
 * directory is not writable. */
char *output_path(const struct options *o, const struct run_template_values *v)
{
	char cwd[PATH_MAX], *path, expanded[PATH_MAX];
	const char *name = o->output;
	char *owned = NULL;

	if (name != NULL && v != NULL && strchr(name, '%') != NULL) {
		if (run_output_expand(expanded, sizeof(expanded), name, v, NULL) != 0)
			die(EXIT_USAGE, "-o %s: the name is too long", name);
		name = expanded;
	}
	if (name == NULL) {
		/* -p PID: no program given, the process's name. */
		const char *prog = o->argv != NULL && o->argv[0] != NULL ? o->argv[0]
				   : v != NULL && v->program != NULL	 ? v->program
									 : "fxt";
		const char *base = strrchr(prog, '/');
		base = base != NULL ? base + 1 : prog;
		if (asprintf(&owned, "%s.fxt", base) < 0)
			die(EXIT_USAGE, "out of memory");
		name = owned;
	}
	if (name[0] == '/') {
		path = strdup(name);
	} else {
		if (getcwd(cwd, sizeof(cwd)) == NULL)
			die(EXIT_USAGE, "cannot get the current directory: %s", strerror(errno));
		if (asprintf(&path, "%s/%s", cwd, name) < 0)
			path = NULL;
	}
	if (path == NULL)
		die(EXIT_USAGE, "out of memory");

	struct stat st;
	if (lstat(path, &st) == 0) {
		if (S_ISDIR(st.st_mode))
			die(EXIT_USAGE, "%s: Is a directory", name);
		if (!o->force)
			die(EXIT_USAGE,
			    "%s exists; use -f to overwrite it or -o to choose another name", name);
	} else if (errno != ENOENT) {
		die(EXIT_USAGE, "%s: %s", name, strerror(errno));
	}

	char *dir = strdup(path);
	if (dir == NULL)
		die(EXIT_USAGE, "out of memory");
	*strrchr(dir, '/') = '\0';
	const char *d = dir[0] != '\0' ? dir : "/";
	if (stat(d, &st) != 0)
		die(EXIT_USAGE, "cannot write %s: %s", name, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		die(EXIT_USAGE, "cannot write %s: %s", name, strerror(ENOTDIR));
	/* A real file, as the agent and we will create them: access(2)
	 * says yes to root in /proc, where nothing can be created. */
	char *probe;
	if (asprintf(&probe, "%s/.fxt-run.%ld.probe", d[1] != '\0' ? d : "", (long)getpid()) < 0)
		die(EXIT_USAGE, "out of memory");
	int pfd = open(probe, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (pfd < 0)
		die(EXIT_USAGE, "cannot write %s: %s", name, strerror(errno));
	close(pfd);
	unlink(probe);
	free(probe);
	/* The directory without "." or ".." or links: every name of the run
	 * (the agent's, ours) is then spelled one way. */
	char *real = realpath(d, NULL);
	if (real != NULL) {
		char *canon;
		if (asprintf(&canon, "%s/%s", strcmp(real, "/") != 0 ? real : "",
			     strrchr(path, '/') + 1) >= 0) {
			free(path);
			path = canon;
		}
		free(real);
	}
	free(dir);
	free(owned);
	return path;
}

/* Sets NAME=VALUE in our environment, which the child inherits. */
static void set_env(const char *name, const char *value)
{
	if (setenv(name, value, 1) != 0)
		die(EXIT_USAGE, "setenv %s: %s", name, strerror(errno));
}

/* The options' settings go to the environment one by one. */
static int env_sink(void *ctx, const char *env, const char *value)
{
	(void)ctx;
	set_env(env, value);
	return 0;
}

/* One setting to the sink, or death. */
static void put(fxt_setting_sink_fn *sink, void *ctx, const char *env, const char *value)
{
	if (sink(ctx, env, value) != 0)
		die(EXIT_USAGE, "out of memory");
}

/* Puts the agent first in LD_PRELOAD, keeping what the user preloads. */
static void prepend_preload(const char *agent)
{
	const char *old = getenv("LD_PRELOAD");
	char *v;

	if (old == NULL || old[0] == '\0') {
		set_env("LD_PRELOAD", agent);
		return;
	}
	if (asprintf(&v, "%s:%s", agent, old) < 0)
		die(EXIT_USAGE, "out of memory");
	set_env("LD_PRELOAD", v);
	free(v);
}

/* Sets what the traced processes read (run/settings.def) and preloads the
 * agent. */
void setup_export(const struct options *o, int status_fd, fxt_setting_sink_fn *sink, void *ctx)
{
	char id[80], state;
	uint64_t start = 0;
	struct stat sb;

	if (status_fd >= 0) {
		/* With the file's identity: a process that closes the fd and
		 * opens a file of its own on that number passes the number on
		 * to its children, whose agents must not write into that file. */
		if (fstat(status_fd, &sb) != 0)
			die(EXIT_USAGE, "cannot stat the status file: %s", strerror(errno));
		snprintf(id, sizeof(id), "%d:%ju:%ju", status_fd, (uintmax_t)sb.st_dev,
			 (uintmax_t)sb.st_ino);
		put(sink, ctx, FXT_ENV(STATUS_FD), id);
	}
	if (fxt_settings_export(&o->set, sink, ctx) != 0)
		die(EXIT_USAGE, "out of memory");
	if (o->patch_dir) /* --patch, or --args/--retval of a -finstrument-functions build */
		put(sink, ctx, FXT_ENV(PATCH_REPORT), o->patch_dir);
	/* Who converts the spools: we, while we run. */
	if (run_proc_stat_read(0, &state, &start) != 0)
		start = 0;
	snprintf(id, sizeof(id), "%ld:%" PRIu64, (long)getpid(), start);
	put(sink, ctx, FXT_ENV(LAUNCHER), id);
}

void setup_env(const struct options *o, const char *agent, int status_fd)
{
	setup_export(o, status_fd, env_sink, NULL);
	prepend_preload(agent);
}
