/* placeholder */
#include <fxt/format.h>
