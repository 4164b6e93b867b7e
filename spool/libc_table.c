/* The table of recorded libc functions and argument keys (see
 * libc_table.h). */
#include <config.h>

#include <string.h>

#include "spool/libc_table.h"
#include "run/recording.h"

/* ------------------------------------------------------------ tables */

const struct agent_fn_info agent_fn_table[AGENT_FN_COUNT] = {
#define FN_INFO(fn, group, res) \
	[AGENT_FN_##fn] = { #fn, "libc." AGENT_G_NAME_##group, AGENT_G_##group, AGENT_RES_##res },
	AGENT_LIBC_FUNCS(FN_INFO)
#undef FN_INFO
};

/* Our own frames, under readable names. */
static const struct agent_fn_info thread_life = { "thread", "libc." AGENT_G_NAME_THREAD,
						  AGENT_G_THREAD, AGENT_RES_VOID };
static const struct agent_fn_info fork_child = { "fork (child)", "libc." AGENT_G_NAME_PROC,
						 AGENT_G_PROC, AGENT_RES_VOID };

const struct agent_fn_info *agent_fn_lookup(unsigned fn)
{
	if (fn == AGENT_FN_THREAD_LIFE)
		return &thread_life;
	if (fn == AGENT_FN_FORK_CHILD)
		return &fork_child;
	return fn < AGENT_FN_COUNT ? &agent_fn_table[fn] : NULL;
}

static const char *const key_names[AGENT_KEY_COUNT] = {
#define KEY_NAME(id, shown) [AGENT_KEY_##id] = shown,
	AGENT_LIBC_KEYS(KEY_NAME)
#undef KEY_NAME
};

const char *agent_key_name(unsigned key)
{
	return key && key < AGENT_KEY_COUNT ? key_names[key] : NULL;
}
