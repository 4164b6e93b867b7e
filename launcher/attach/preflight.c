/* Whether fxt-run may attach to a process (see preflight.h).  Everything
 * is read from /proc and the files; nothing is done to the process. */
#include <config.h>

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>

#include "launcher/attach/preflight.h"
#include "launcher/attach/why.h"
#include "symbolizer/symbolizer.h"

#define PF_KTHREAD	   0x00200000u /* linux/sched.h: a kernel thread */
#define CAP_SYS_PTRACE_BIT 19

ssize_t attach_slurp(const char *path, char *buf, size_t cap)
{
	size_t len = 0;
	ssize_t n = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	while (len + 1 < cap && (n = read(fd, buf + len, cap - len - 1)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			break;
		len += (size_t)n;
	}
	n = n < 0 ? -errno : (ssize_t)len;
	close(fd);
	buf[len] = '\0';
	return n;
}

/* The values of a "Name:\tv1\tv2..." line of a status text, up to max. */
static unsigned status_field(const char *text, const char *name, unsigned long long *v,
			     unsigned max, int base)
{
	size_t len = strlen(name);
	const char *p = text;
	unsigned n = 0;

	while (p && (strncmp(p, name, len) != 0 || p[len] != ':'))
		if ((p = strchr(p, '\n')))
			p++;
	if (!p)
		return 0;
	p += len + 1;
	while (n < max) {
		char *end;
		unsigned long long x = strtoull(p, &end, base);

		if (end == p)
			break;
		v[n++] = x;
		p = end;
	}
	return n;
}

/* Whether we may trace anyone: CAP_SYS_PTRACE in our effective set. */
static bool may_trace_anyone(void)
{
	char text[4096];
	unsigned long long eff = 0;

	return attach_slurp("/proc/self/status", text, sizeof(text)) > 0 &&
	       status_field(text, "CapEff", &eff, 1, 16) == 1 && (eff >> CAP_SYS_PTRACE_BIT) & 1;
}

/* The process's command name (its /proc/PID/comm), or "?". */
static void comm_of(pid_t pid, char *buf, size_t cap)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	if (attach_slurp(path, buf, cap) <= 0)
		snprintf(buf, cap, "?");
	buf[strcspn(buf, "\n")] = '\0';
}

/* The library `lib`: refused when another user could have replaced it
 * (it or a directory above it owned by someone but root and us, or
 * writable by group or others, a sticky directory included: /tmp is no
 * place for it), or when the process (uid, gid) could not read it. */
static int check_lib(const char *lib, uid_t uid, gid_t gid, char *why, size_t cap)
{
	char path[PATH_MAX], *real = realpath(lib, NULL);
	bool file = true;
	struct stat st;

	if (!real)
		return attach_fail(why, cap, -EACCES, "%s: %s", lib, strerror(errno));
	snprintf(path, sizeof(path), "%s", real);
	free(real);
	for (;;) {
		bool owner_ok, can_read;

		if (stat(path, &st) != 0)
			return attach_fail(why, cap, -EACCES, "%s: %s", path, strerror(errno));
		owner_ok = st.st_uid == 0 || st.st_uid == geteuid();
		if (!owner_ok || (st.st_mode & (S_IWGRP | S_IWOTH)))
			return attach_fail(
			    why, cap, -EACCES,
			    "the %s %s is %s: fxt-run loads into a process only a library "
			    "no other user could have replaced (install fxtrace where only "
			    "root may write)",
			    file ? "library" : "directory", path,
			    !owner_ok ? "owned by another user" : "writable by others");
		/* What the process needs: read the file, search each
		 * directory. */
		{
			mode_t need = file ? S_IROTH : S_IXOTH;

			can_read = uid == 0 || (st.st_mode & need) ||
				   (st.st_uid == uid && (st.st_mode & (need << 6))) ||
				   (st.st_gid == gid && (st.st_mode & (need << 3)));
		}
		if (!can_read)
			return attach_fail(
			    why, cap, -EACCES,
			    "the process (user %u) may not %s %s: it could not load the "
			    "library",
			    (unsigned)uid, file ? "read" : "search", path);
		if (strcmp(path, "/") == 0)
			return 0;
		/* Up to the directory above: realpath() gave an absolute
		 * path without "." or "..". */
		*(strrchr(path, '/') == path ? path + 1 : strrchr(path, '/')) = '\0';
		file = false;
	}
}

int attach_preflight(pid_t pid, const char *lib, struct attach_target *t, char *why, size_t cap)
{
	char path[64], text[8192], comm[64], *p;
	unsigned long long uid[4], gid[4], tracer = 0, threads = 0;
	struct fxt_sym_layout lay;
	unsigned long flags = 0;
	bool root = may_trace_anyone(), has_agent = false;
	char state;
	ssize_t n;
	int i, err;

	if (pid <= 0)
		return attach_fail(why, cap, -ESRCH, "process %d: no such process", (int)pid);
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	n = attach_slurp(path, text, sizeof(text));
	if (n == -ENOENT || n == -ESRCH)
		return attach_fail(why, cap, -ESRCH, "process %d: no such process", (int)pid);
	if (n < 0)
		return attach_fail(why, cap, (int)n, "process %d: %s", (int)pid, strerror((int)-n));
	comm_of(pid, comm, sizeof(comm));
	/* After the command's closing parenthesis: state, then six fields,
	 * then the flags. */
	p = strrchr(text, ')');
	if (!p || sscanf(p + 1, " %c %*d %*d %*d %*d %*d %lu", &state, &flags) != 2)
		return attach_fail(why, cap, -ESRCH, "process %d: cannot read its state", (int)pid);
	if (flags & PF_KTHREAD)
		return attach_fail(why, cap, -ENOEXEC,
				   "process %d (%s) is a kernel thread: nothing to load into",
				   (int)pid, comm);
	if (state == 'Z' || state == 'X')
		return attach_fail(why, cap, -ESRCH,
				   "process %d (%s) has exited (a zombie): nothing to attach to",
				   (int)pid, comm);

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if (attach_slurp(path, text, sizeof(text)) <= 0 ||
	    status_field(text, "Uid", uid, 4, 10) != 4 ||
	    status_field(text, "Gid", gid, 4, 10) != 4)
		return attach_fail(why, cap, -ESRCH, "process %d: cannot read its status",
				   (int)pid);
	status_field(text, "TracerPid", &tracer, 1, 10);
	status_field(text, "Threads", &threads, 1, 10);
	if (tracer) {
		char tcomm[64];

		comm_of((pid_t)tracer, tcomm, sizeof(tcomm));
		return attach_fail(
		    why, cap, -EBUSY,
		    "process %d (%s) is already traced by process %llu (%s): a process has "
		    "one tracer; end that one first",
		    (int)pid, comm, tracer, tcomm);
	}
	if (!root) {
		for (i = 0; i < 3; i++)
			if (uid[i] != getuid() || gid[i] != getgid())
				return attach_fail(
				    why, cap, -EPERM,
				    "process %d (%s) runs as user %llu: attach to your own "
				    "processes, or run fxt-run as root (CAP_SYS_PTRACE)",
				    (int)pid, comm, uid[1]);
		n = attach_slurp("/proc/sys/kernel/yama/ptrace_scope", text, sizeof(text));
		if (n > 0 && text[0] != '0')
			return attach_fail(
			    why, cap, -EPERM,
			    "Yama's ptrace_scope is %c: only %s; run fxt-run as root, or "
			    "`sysctl kernel.yama.ptrace_scope=0`",
			    text[0],
			    text[0] == '1'   ? "a process's parent may trace it"
			    : text[0] == '2' ? "root may trace processes"
					     : "no process may be traced until reboot");
	}
	/* Secure mode: the kernel set AT_SECURE for a set-user-ID,
	 * set-group-ID or file-capability program. */
	snprintf(path, sizeof(path), "/proc/%d/auxv", (int)pid);
	n = attach_slurp(path, text, sizeof(text));
	for (i = 0; n > 0 && (size_t)(i + 1) * 16 <= (size_t)n; i++) {
		uint64_t kv[2];

		memcpy(kv, text + (size_t)i * 16, sizeof(kv));
		if (kv[0] == AT_SECURE && kv[1])
			return attach_fail(
			    why, cap, -EPERM,
			    "process %d (%s) runs a %s program: fxtrace does not load into "
			    "programs that gained privileges",
			    (int)pid, comm,
			    uid[0] != uid[1] || uid[0] != uid[2]   ? "set-user-ID"
			    : gid[0] != gid[1] || gid[0] != gid[2] ? "set-group-ID"
								   : "file-capability");
	}

	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	err = fxt_sym_elf_layout(path, &lay);
	if (err == -ENOENT)
		return attach_fail(why, cap, -ESRCH, "process %d (%s) has exited", (int)pid, comm);
	if (err)
		return attach_fail(why, cap, -ENOEXEC,
				   "process %d (%s): cannot read its program: %s", (int)pid, comm,
				   strerror(-err));
	if (lay.machine != EM_X86_64 || lay.bits != 64)
		return attach_fail(
		    why, cap, -ENOEXEC,
		    "process %d (%s) is a %u-bit program for another machine (ELF machine "
		    "%u): fxtrace attaches to x86-64 programs",
		    (int)pid, comm, lay.bits, lay.machine);
	if (!lay.interp)
		return attach_fail(why, cap, -ENOEXEC,
				   "process %d (%s) is statically linked: it has no loader to load "
				   "fxtrace into it",
				   (int)pid, comm);

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	{
		FILE *f = fopen(path, "re");
		char line[PATH_MAX + 128], *mapped = NULL, *ours = lib ? realpath(lib, NULL) : NULL;

		if (!f) {
			free(ours);
			return attach_fail(why, cap, -ESRCH, "process %d (%s) has exited", (int)pid,
					   comm);
		}
		while (!mapped && fgets(line, sizeof(line), f))
			if (strstr(line, "/libfxt-agent.so") && (mapped = strchr(line, '/')))
				mapped[strcspn(mapped, "\n")] = '\0';
		fclose(f);
		has_agent = mapped != NULL;
		/* Another agent than ours (another build or version): ours
		 * would come in next to it. */
		if (mapped && lib && (!ours || strcmp(mapped, ours) != 0)) {
			size_t len = strlen(mapped);
			const char *gone = " (deleted)";

			/* The file it has was removed since (fxtrace upgraded or
			 * rebuilt): no fxt-run goes with it any more. */
			if (len > strlen(gone) && strcmp(mapped + len - strlen(gone), gone) == 0) {
				mapped[len - strlen(gone)] = '\0';
				err = attach_fail(
				    why, cap, -EBUSY,
				    "process %d (%s) has an fxtrace agent whose file was "
				    "replaced or removed since it was loaded (%s, "
				    "fxtrace upgraded or rebuilt): it can be attached to "
				    "again once it restarts",
				    (int)pid, comm, mapped);
			} else {
				err =
				    attach_fail(why, cap, -EBUSY,
						"process %d (%s) has another fxtrace agent loaded "
						"(%s): attach with the fxt-run that goes with it",
						(int)pid, comm, mapped);
			}
			free(ours);
			return err;
		}
		free(ours);
	}
	if (lib && (err = check_lib(lib, (uid_t)uid[1], (gid_t)gid[1], why, cap)) != 0)
		return err;
	if (t) {
		t->pid = pid;
		snprintf(t->comm, sizeof(t->comm), "%s", comm);
		t->uid = (uid_t)uid[1];
		t->gid = (gid_t)gid[1];
		t->threads = (unsigned)threads;
		t->has_agent = has_agent;
	}
	return 0;
}
