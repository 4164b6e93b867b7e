/* The agent's features and the moments of a process's life they act on.
 * Private to agent/.
 *
 * The life cycle (lifecycle.c, seal.c, modules.c, libc/wrap_thread.c)
 * says what happens (agent_features_emit()); each feature, in its own
 * files, says in its row of the table what it does then.  The life cycle includes no
 * feature's header, and a feature touches the life cycle through its row
 * only: adding one is its files and one X() in AGENT_FEATURES.
 *
 * Begin events walk the table forwards, end events (AGENT_EV_IS_END)
 * backwards, so that what starts first stops last.  A row whose on()
 * said no at CONFIGURE gets no event at all.  The walk allocates
 * nothing, takes no lock and makes no system call: it runs in fork
 * children, TLS destructors and before main().  It is not re-entrant
 * with CONFIGURE, which runs on one thread, before any other: once per
 * process image, and again at each new attach window
 * (agent_features_reconfigure()), when every feature has stopped.  A row's
 * CONFIGURE replaces what an earlier one set up.
 */
#ifndef FXT_AGENT_FEATURE_H
#define FXT_AGENT_FEATURE_H

#include <stdbool.h>
#include <stdint.h>

enum agent_ev {
	AGENT_EV_CONFIGURE,	/* settings loaded; nothing records yet, one thread */
	AGENT_EV_START,		/* spool ready, modules listed: before main() */
	AGENT_EV_THREAD_START,	/* in the thread, before the program's code: ev->thread */
	AGENT_EV_MODULE_LOADED, /* one module new in the list (start, dlopen): ev->module */
	AGENT_EV_DLOPENED,	/* dlopen returned; every new module announced */
	AGENT_EV_FORK_CHILD,	/* in the child, inside fork, one thread, its spool new */
	AGENT_EV_THREAD_UNWIND, /* first end event: pthread_exit, the stack is about to unwind */
	AGENT_EV_THREAD_END,	/* TLS destructors: stop writing; the buffer is retired next */
	AGENT_EV_THREAD_GONE,	/* the buffer is retired: give back per-thread state */
	AGENT_EV_DLCLOSED,	/* dlclose succeeded */
	AGENT_EV_EXEC,		/* exec is about to replace the image (not in a vfork child) */
	AGENT_EV_STOP,		/* detach (fxt_attach_stop()): undo START, the process runs on */
	AGENT_EV_BEFORE_SEAL,	/* recording ends for the process (exit, exec) */
	AGENT_EV_SELF_CONVERT,	/* the process converts its own spool: ev->convert */
	AGENT_EV_COUNT
};
#define AGENT_EV_IS_END(ev) ((ev) >= AGENT_EV_THREAD_UNWIND)

struct agent_event {
	union {
		/* START: attached to a process already running (the agent
		 * loaded by dlopen(), other threads running), not preloaded. */
		struct {
			bool attached;
		} start;
		/* THREAD_START: the creator's view of its mask blocked SIGPROF
		 * (agent_sample_hold_prof(), gates.h); false for the main
		 * thread and a fork child's. */
		struct {
			bool prof_blocked;
		} thread;
		/* MODULE_LOADED: its path, load bias and segments [lo, hi). */
		struct {
			const char *path;
			uint64_t bias, lo, hi;
		} module;
		/* SELF_CONVERT: the converter's handle (libfxt-convert.so; NULL
		 * when it could not be loaded) and the session's path. */
		struct {
			void *converter;
			const char *session;
		} convert;
	};
};

typedef void agent_feature_fn(const struct agent_event *ev);

struct agent_feature {
	const char *name;		      /* "patch": for logs and tests */
	bool (*on)(void);		      /* wanted by agent_cfg; asked once, at CONFIGURE */
	agent_feature_fn *at[AGENT_EV_COUNT]; /* NULL: not interested */
};

/* One row per feature, in the table's order; each row is defined by its
 * feature (agent_feature_NAME), the table by features.c. */
#define AGENT_FEATURES(X)	    X(keep) X(patch) X(libc) X(sample)
#define AGENT_FEATURE_DECLARE(name) extern const struct agent_feature agent_feature_##name;
AGENT_FEATURES(AGENT_FEATURE_DECLARE)

/* Bit `ev`: some active row handles event ev.  0 until CONFIGURE. */
extern unsigned agent_feature_want;

/* Asks each row's on(), then sends CONFIGURE to the active rows.  Once per
 * process image: -EALREADY after the first. */
int agent_features_configure(void);

/* A new attach window (fxt_attach_start() after a detach): the settings
 * were loaded again; asks each row's on() again and sends CONFIGURE. */
int agent_features_reconfigure(void);

/* Sends event `ev` (`arg`, or NULL for an event without data) to every
 * active row that handles it, forwards or backwards (above). */
void agent_features_emit(enum agent_ev ev, const struct agent_event *arg);

/* Whether some active row handles `ev`. */
static inline bool agent_features_want(enum agent_ev ev)
{
	return __atomic_load_n(&agent_feature_want, __ATOMIC_RELAXED) & (1u << ev);
}

/* For unit tests: the table `v` (NULL-terminated; NULL: the agent's own)
 * in place of the agent's, not configured yet. */
void agent__features_set(const struct agent_feature *const *v);

#endif /* FXT_AGENT_FEATURE_H */
