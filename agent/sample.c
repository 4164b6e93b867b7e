/* Stack sampling (see sample.h).  TODO(owner: sampling). */
#include <config.h>

#include "agent/sample.h"

void agent_sample_thread_start(void)
{
}

void agent_sample_thread_stop(void)
{
}
