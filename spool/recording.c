/* The names of the libc groups (see recording.h). */
#include "config.h"

#include <stdbool.h>
#include <string.h>

#include "spool/recording.h"

static const struct {
	const char *name;
	unsigned bit;
} groups[] = {
	{ "io", AGENT_G_IO },	  { "mem", AGENT_G_MEM },   { "thread", AGENT_G_THREAD },
	{ "sync", AGENT_G_SYNC }, { "proc", AGENT_G_PROC }, { "sleep", AGENT_G_SLEEP },
	{ "log", AGENT_G_LOG },
};

const char *agent_group_name(unsigned group_bit)
{
	for (size_t i = 0; i < sizeof(groups) / sizeof(groups[0]); i++)
		if (groups[i].bit == group_bit)
			return groups[i].name;
	return "?";
}

int agent_libc_parse(const char *s, unsigned *out)
{
	unsigned mask = 0;

	while (*s) {
		size_t len = strcspn(s, ",");
		bool found = false;

		if (len == 3 && !strncmp(s, "all", 3)) {
			mask |= AGENT_G_ALL;
			found = true;
		} else if (len == 4 && !strncmp(s, "none", 4)) {
			found = true;
		} else if (len == 7 && !strncmp(s, "default", 7)) {
			mask |= AGENT_G_DEFAULT;
			found = true;
		}
		for (size_t i = 0; !found && i < sizeof(groups) / sizeof(groups[0]); i++) {
			if (strlen(groups[i].name) == len && !strncmp(s, groups[i].name, len)) {
				mask |= groups[i].bit;
				found = true;
			}
		}
		if (!found && len)
			return -1;
		s += len;
		if (*s == ',')
			s++;
	}
	*out = mask;
	return 0;
}
