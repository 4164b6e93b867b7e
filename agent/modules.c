/* dlopen/dlclose wrappers and the module list (see modules.h). */
#include <config.h>

#include <dlfcn.h>
#include <errno.h>
#include <fnmatch.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#include "agent/agent.h"
#include "agent/feature.h"
#include "agent/gates.h"
#include "agent/log.h"
#include "agent/modules.h"
#include "agent/real.h"

#define EXPORT __attribute__((visibility("default")))

/* The absolute path of a module that the loader names relatively (dlopen
 * of "./libplug.so", a relative LD_LIBRARY_PATH), into buf.  Best from the
 * kernel, which names the file of the module's first mapping whatever the
 * working directory is now; else resolved against the working directory,
 * still the one the loader used if we run right after dlopen.  Returns buf,
 * or NULL (the vDSO, which has no file, or a name too long for buf).  The
 * vDSO is known by its address without asking the kernel: its readlink()
 * failed in every process's start. */
static const char *absolute_path(const struct dl_phdr_info *info, char *buf, size_t cap)
{
	const uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	const uint64_t vdso = (uint64_t)getauxval(AT_SYSINFO_EHDR);
	char link[80], *real;
	ssize_t n;

	for (unsigned i = 0; vdso && i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uint64_t start = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_LOAD && vdso >= start && vdso - start < ph->p_memsz)
			return NULL;
	}
	for (unsigned i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uint64_t start = info->dlpi_addr + ph->p_vaddr;
		uint64_t end = start + ph->p_filesz;

		if (ph->p_type != PT_LOAD)
			continue;
		/* The first segment's mapping: exactly its file pages. */
		snprintf(link, sizeof(link), "/proc/self/map_files/%llx-%llx",
			 (unsigned long long)(start & ~(page - 1)),
			 (unsigned long long)((end + page - 1) & ~(page - 1)));
		n = readlink(link, buf, cap - 1);
		if (n > 0 && (size_t)n < cap - 1 && buf[0] == '/') {
			buf[n] = '\0';
			return buf;
		}
		break;
	}
	if (!strchr(info->dlpi_name, '/'))
		return NULL;
	real = realpath(info->dlpi_name, NULL);
	if (!real || strlen(real) >= cap) {
		free(real);
		return NULL;
	}
	memcpy(buf, real, strlen(real) + 1);
	free(real);
	return buf;
}

const char *agent_exe_path(void)
{
	static char exe[SPOOL_MODULE_PATH];

	if (!exe[0]) {
		ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
		exe[n > 0 ? n : 0] = '\0';
	}
	return exe;
}

static int add_one(struct dl_phdr_info *info, size_t size, void *arg)
{
	char abs[SPOOL_MODULE_PATH];
	const char *path = info->dlpi_name;
	uint64_t base = UINT64_MAX, end = 0;
	int *first = arg;

	(void)size;
	/* The main program comes first, with an empty name: the spool header
	 * needs its path for a recovery after a crash.  The vDSO and other
	 * entries without a path are left out. */
	if (*first && (!path || !path[0]))
		path = agent_exe_path();
	*first = 0;
	if (path && path[0] && path[0] != '/')
		path = absolute_path(info, abs, sizeof(abs));
	if (!path || path[0] != '/')
		return 0;
	for (unsigned i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD)
			continue;
		if (info->dlpi_addr + ph->p_vaddr < base)
			base = info->dlpi_addr + ph->p_vaddr;
		if (info->dlpi_addr + ph->p_vaddr + ph->p_memsz > end)
			end = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
	}
	if (spool_add_module(&agent.spool, path, info->dlpi_addr, base) > 0) {
		agent_dbg("module %s at bias %p", path, (void *)info->dlpi_addr);
		/* New: its functions go through the filters once. */
		agent_features_emit(
		    AGENT_EV_MODULE_LOADED,
		    &(struct agent_event){ .module = { path, info->dlpi_addr, base, end } });
	}
	return 0;
}

void agent_modules_snapshot(void)
{
	int saved = errno, first = 1;

	dl_iterate_phdr(add_one, &first);
	errno = saved;
}

/* The real functions, looked up once (agent_resolve(): the program's
 * definitions when loaded late).  dlsym from inside our own dlopen is
 * fine: glibc's dlsym does not call dlopen. */
typedef void *dlopen_fn(const char *, int);
typedef int dlclose_fn(void *);

static dlopen_fn *real_dlopen(void)
{
	static dlopen_fn *fn;

	if (!fn)
		fn = (dlopen_fn *)agent_resolve("dlopen", NULL);
	return fn;
}

static dlclose_fn *real_dlclose(void)
{
	static dlclose_fn *fn;

	if (!fn)
		fn = (dlclose_fn *)agent_resolve("dlclose", NULL);
	return fn;
}

EXPORT void *dlopen(const char *file, int mode)
{
	dlopen_fn *fn = real_dlopen();
	void *h;

	if (!fn)
		return NULL;
	agent_in_dl++; /* no stack samples meanwhile (gates.h) */
	h = fn(file, mode);
	agent_in_dl--;
	if (h && !agent.disabled) {
		int saved = errno;
		agent_tls.busy++;
		agent_modules_snapshot();
		agent_features_emit(AGENT_EV_DLOPENED, NULL);
		agent_busy_leave(&agent_tls);
		errno = saved;
	}
	return h;
}

EXPORT int dlclose(void *handle)
{
	dlclose_fn *fn = real_dlclose();
	int ret;

	if (!fn) {
		errno = ENOSYS;
		return -1;
	}
	if (!agent.disabled) {
		agent_tls.busy++;
		agent_modules_snapshot();
		agent_busy_leave(&agent_tls);
	}
	agent_in_dl++;
	ret = fn(handle);
	agent_in_dl--;
	if (ret == 0) {
		int saved = errno;
		agent_features_emit(AGENT_EV_DLCLOSED, NULL);
		errno = saved;
	}
	return ret;
}

/* ------------------------------------------------------------ patched */

/* Never patched, whatever FXT_PATCH_MODULE says: the agent's own code and
 * what it calls while it records (the C library, the loader, libunwind,
 * Capstone, the unwinder), which would call the hooks from the hooks. */
static bool protected_module(const char *base)
{
	static const char *const never[] = { "libc.so*",      "ld-linux*",    "ld-*.so*",
					     "libfxt-*",      "libcapstone*", "libunwind*",
					     "libgcc_s*",     "libpthread*",  "libdl.so*",
					     "librt.so*",     "libm.so*",     "linux-vdso*",
					     "libstdc++.so*", "liblzma*",     "libz.so*" };
	for (size_t i = 0; i < sizeof(never) / sizeof(never[0]); i++)
		if (fnmatch(never[i], base, 0) == 0)
			return true;
	return false;
}

bool agent_module_patched(const char *path)
{
	const char *base = strrchr(path, '/');
	const char *globs = agent_cfg.patch_modules;
	const char *exe;

	if (!agent_cfg.patch)
		return false;
	exe = agent_exe_path();
	if (exe[0] && strcmp(path, exe) == 0)
		return true;
	base = base ? base + 1 : path;
	if (!globs || protected_module(base))
		return false;
	for (const char *g = globs; *g;) {
		size_t len = strcspn(g, "\n");
		char buf[256];
		if (len && len < sizeof(buf)) {
			memcpy(buf, g, len);
			buf[len] = '\0';
			if (fnmatch(buf, base, 0) == 0)
				return true;
		}
		g += len + (g[len] == '\n');
	}
	return false;
}
