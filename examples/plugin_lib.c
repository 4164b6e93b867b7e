/* plugin_lib: the plugin loaded by examples/plugin with dlopen.  Built
 * with -finstrument-functions like the program, so its functions appear
 * in the trace although the module is unloaded before the program exits.
 *
 * plugin_compute(n) calls plugin_square() n times.
 */
#include "examples/example.h"

unsigned long plugin_compute(unsigned long n);

EXAMPLE_NOINLINE static unsigned long plugin_square(unsigned long x)
{
	return x * x;
}

EXAMPLE_NOINLINE unsigned long plugin_compute(unsigned long n)
{
	unsigned long sum = 0;
	for (unsigned long i = 1; i <= n; i++)
		sum += plugin_square(i);
	return sum;
}
