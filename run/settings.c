/* The settings table (run/settings.def) as data, and --help's lines made
 * from it. */
#include "config.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "run/settings.h"

#define FXT_ROW_ENV_AGENT(ID)	 FXT_ENV(ID)
#define FXT_ROW_ENV_INTERNAL(ID) FXT_ENV(ID)
#define FXT_ROW_ENV_RUN(ID)	 NULL
#define FXT_ROW_ENV_RUNENV(ID)	 FXT_ENV(ID)

const struct fxt_setting fxt_settings[FXT_S_COUNT] = {
#define X(ID, SHORT, OPT, ARG, TYPE, SCOPE, FIELD, DEF, OPTDEF, HELP, ENV_HELP)                  \
	[FXT_S_##ID] = { FXT_ROW_ENV_##SCOPE(ID), OPT, SHORT, ARG, FXT_T_##TYPE, FXT_SC_##SCOPE, \
			 DEF, OPTDEF, HELP, ENV_HELP },
#include "run/settings.def"
#undef X
};

/* "  -o, --output=FILE" or "      --sample[=HZ]", padded to column 26,
 * then the first line; the further lines in column 26 (help2man reads
 * them as one paragraph). */
void fxt_settings_usage_options(FILE *f)
{
	for (size_t i = 0; i < FXT_S_COUNT; i++) {
		const struct fxt_setting *s = &fxt_settings[i];
		char spelling[64];
		const char *h = s->help;

		if (s->opt == NULL)
			continue;
		snprintf(spelling, sizeof(spelling), "  %c%c%s--%s%s%s", s->short_opt ? '-' : ' ',
			 s->short_opt ? s->short_opt : ' ', s->short_opt ? ", " : "  ", s->opt,
			 s->arg && s->arg[0] != '[' ? "=" : "", s->arg ? s->arg : "");
		for (int first = 1;; first = 0) {
			size_t len = strcspn(h, "\n");

			if (first)
				fprintf(f, "%-25s %.*s\n", spelling, (int)len, h);
			else
				fprintf(f, "%26s%.*s\n", "", (int)len, h);
			if (h[len] == '\0')
				break;
			h += len + 1;
		}
	}
}

void fxt_settings_usage_env(FILE *f)
{
	for (size_t i = 0; i < FXT_S_COUNT; i++)
		if (fxt_settings[i].env != NULL)
			fprintf(f, "  %-16s  %s\n", fxt_settings[i].env, fxt_settings[i].env_help);
}

