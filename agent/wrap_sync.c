/* libc wrappers: TODO(owner). */
#include <config.h>

#include "agent/libc.h"
