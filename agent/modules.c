/* dlopen/dlclose wrappers and the module list (see modules.h). */
#include <config.h>

#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <stdint.h>
#include <unistd.h>

#include "agent/agent.h"
#include "agent/log.h"
#include "agent/modules.h"

#define EXPORT __attribute__((visibility("default")))

static int add_one(struct dl_phdr_info *info, size_t size, void *arg)
{
	static char exe[SPOOL_MODULE_PATH];
	const char *path = info->dlpi_name;
	uint64_t base = UINT64_MAX;
	int *first = arg;

	(void)size;
	/* The main program comes first, with an empty name: the spool header
	 * needs its path for a recovery after a crash.  The vDSO and other
	 * entries without a path are left out. */
	if (*first && (!path || !path[0])) {
		if (!exe[0]) {
			ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
			exe[n > 0 ? n : 0] = '\0';
		}
		path = exe;
	}
	*first = 0;
	if (!path || path[0] != '/')
		return 0;
	for (unsigned i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type == PT_LOAD && info->dlpi_addr + ph->p_vaddr < base)
			base = info->dlpi_addr + ph->p_vaddr;
	}
	if (spool_add_module(&agent.spool, path, info->dlpi_addr, base) > 0)
		agent_dbg("module %s at bias %p", path, (void *)info->dlpi_addr);
	return 0;
}

void agent_modules_snapshot(void)
{
	int saved = errno, first = 1;

	dl_iterate_phdr(add_one, &first);
	errno = saved;
}

/* The real functions, looked up once.  dlsym(RTLD_NEXT) from inside our own
 * dlopen is fine: glibc's dlsym does not call dlopen. */
typedef void *dlopen_fn(const char *, int);
typedef int dlclose_fn(void *);

static dlopen_fn *real_dlopen(void)
{
	static dlopen_fn *fn;

	if (!fn)
		fn = (dlopen_fn *)dlsym(RTLD_NEXT, "dlopen");
	return fn;
}

static dlclose_fn *real_dlclose(void)
{
	static dlclose_fn *fn;

	if (!fn)
		fn = (dlclose_fn *)dlsym(RTLD_NEXT, "dlclose");
	return fn;
}

EXPORT void *dlopen(const char *file, int mode)
{
	dlopen_fn *fn = real_dlopen();
	void *h;

	if (!fn)
		return NULL;
	h = fn(file, mode);
	if (h && !agent.disabled) {
		int saved = errno;
		agent_tls.busy++;
		agent_modules_snapshot();
		agent_tls.busy--;
		errno = saved;
	}
	return h;
}

EXPORT int dlclose(void *handle)
{
	dlclose_fn *fn = real_dlclose();

	if (!fn) {
		errno = ENOSYS;
		return -1;
	}
	if (!agent.disabled) {
		agent_tls.busy++;
		agent_modules_snapshot();
		agent_tls.busy--;
	}
	return fn(handle);
}
