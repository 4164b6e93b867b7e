/* Function-name patterns and demangling, shared by the filters
 * (agent/keep/filter.h) and run-time patching (agent/patch/patch.h): see
 * agent/patterns.h. */
#include <config.h>

#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>

#include "agent/log.h"
#include "agent/patterns.h"

/* libstdc++'s __cxa_demangle, once found. */
static char *(*demangler)(const char *, char *, size_t *, int *);

void agent_patterns_free(struct agent_patterns *p)
{
	for (size_t i = 0; i < p->n; i++)
		regfree(&p->re[i]);
	free(p->re);
	p->re = NULL;
	p->n = 0;
}

int agent_patterns_compile(const char *list, struct agent_patterns *p, const char *what)
{
	char buf[1024];

	for (const char *s = list; s && *s;) {
		size_t len = strcspn(s, "\n");
		regex_t *re;
		int rc;

		if (len >= sizeof(buf)) {
			agent_dbg("%s: pattern too long", what);
			return -EINVAL;
		}
		memcpy(buf, s, len);
		buf[len] = '\0';
		s += len + (s[len] == '\n');
		if (!len)
			continue;
		re = realloc(p->re, (p->n + 1) * sizeof(*p->re));
		if (!re)
			return -ENOMEM;
		p->re = re;
		rc = regcomp(&p->re[p->n], buf, REG_EXTENDED | REG_NOSUB);
		if (rc != 0) {
			agent_dbg("%s: '%s' is not a regular expression", what, buf);
			return -EINVAL;
		}
		p->n++;
	}
	return 0;
}

bool agent_patterns_match(const struct agent_patterns *p, const char *name)
{
	for (size_t i = 0; i < p->n; i++)
		if (regexec(&p->re[i], name, 0, NULL, 0) == 0)
			return true;
	return false;
}

/* ------------------------------------------------------------ demangling */

static int has_libstdcxx(struct dl_phdr_info *info, size_t size, void *arg)
{
	const char *base = info->dlpi_name ? strrchr(info->dlpi_name, '/') : NULL;

	(void)size;
	if (base && strncmp(base + 1, "libstdc++.so", 12) == 0)
		*(bool *)arg = true;
	return 0;
}

/* libstdc++'s demangler, when the process has loaded libstdc++ (C++
 * programs do; loading it into a C program would start another library).
 * Looked for only then: a failed dlsym() leaves an error string that the
 * C library frees later, through our free() (agent/libc/wrap_mem.c). */
void agent_demangler_find(void)
{
	bool loaded = false;

	dl_iterate_phdr(has_libstdcxx, &loaded);
	if (loaded)
		*(void **)&demangler = dlsym(RTLD_DEFAULT, "__cxa_demangle");
}

bool agent_demangler_found(void)
{
	return demangler != NULL;
}

char *agent_demangle(const char *name)
{
	static bool looked; /* once: a C program has none to find */
	char *dm = NULL;

	if (name[0] != '_' || name[1] != 'Z')
		return NULL;
	if (!demangler && !looked) {
		looked = true;
		agent_demangler_find();
	}
	if (demangler) {
		int status = -1;
		dm = demangler(name, NULL, NULL, &status);
		if (status != 0) {
			free(dm);
			dm = NULL;
		}
	}
	return dm;
}
