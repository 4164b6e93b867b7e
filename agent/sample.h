/* Stack sampling of threads' CPU time (FXT_SAMPLE).  Private to agent/.
 * TODO(owner: sampling). */
#ifndef FXT_AGENT_SAMPLE_H
#define FXT_AGENT_SAMPLE_H

/* Starts sampling the calling thread (a no-op when FXT_SAMPLE is off).
 * Called for the main thread at init, in each new thread before its start
 * routine (wrap_thread.c), and in a fork child. */
void agent_sample_thread_start(void);

/* Stops sampling the calling thread (thread exit). */
void agent_sample_thread_stop(void);

#endif /* FXT_AGENT_SAMPLE_H */
