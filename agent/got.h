/* Binding the calls of a process already running to the agent's wrappers
 * (fxt-run -p), and back.  Private to agent/.
 *
 * A preloaded agent's wrappers are found by the loader's interposition.
 * A process the agent was loaded into late (agent.late) bound its calls
 * before: each module calls the C library through its GOT, a slot per
 * JUMP_SLOT or GLOB_DAT relocation.  agent_got_bind() writes the agent's
 * wrapper into the slots of the names a wing asks for, in every module but
 * the agent and the dynamic linker; agent_got_restore() writes each slot
 * back as it was, byte for byte.  Calls through a function pointer the
 * program took before (or keeps after) are not redirected (before) or stay
 * on the wrapper, which passes them on (after).
 *
 * Both run at START, DLOPENED and STOP (one thread at a time under a lock
 * of their own), never on a hot path: they allocate, take locks and make
 * system calls (mprotect of RELRO pages).
 */
#ifndef FXT_AGENT_GOT_H
#define FXT_AGENT_GOT_H

#include <stdbool.h>

/* Whether the caller's wrapper of `name` goes in. */
typedef bool agent_got_want(const char *name);

/* What a bind or a restore did. */
struct agent_got_count {
	unsigned slots;	  /* bound now / written back */
	unsigned skipped; /* bind: a slot bound to a definition not the program's default;
			     restore: changed by the process since (left as it is) */
	unsigned gone;	  /* restore: in a module unloaded since */
	int err;	  /* the first error (-errno), or 0 */
};

/* Binds, in every module loaded now, each JUMP_SLOT and GLOB_DAT slot of
 * a name the agent defines and `want` accepts to the agent's definition,
 * when the slot holds the definition the program's own lookup gives
 * (dlsym(RTLD_DEFAULT)) or an address of its module (a lazy binding not
 * done yet).  Slots bound already are left.  `start`: at START; otherwise
 * (DLOPENED) nothing is bound after agent_got_restore(), which a dlopen on
 * another thread may race.  Returns what it did. */
struct agent_got_count agent_got_bind(agent_got_want *want, bool start);

/* Writes every bound slot back (those still holding the agent's wrapper,
 * in modules still loaded: done while the loader keeps its list still)
 * and forgets them. */
struct agent_got_count agent_got_restore(void);

#endif /* FXT_AGENT_GOT_H */
