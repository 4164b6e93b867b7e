/* srcline_other: srcline's function in a second source file. */
long srcline_other(long x);

long srcline_other(long x)
{
	return x + 7;
}
