/* A C plugin for the symbolizer test: dlopen'ed, then dlclose'd before its
 * addresses are symbolized. */
#include "tests/progs/symfix/symfix.h"

int fxsym_plug_entry(int x);

static int plug_static(int x)
{
	return x * 7 - 3;
}

int fxsym_plug_entry(int x)
{
	return plug_static(x) + 1;
}

/* Two versions of one function (see plug.map): .symtab names them
 * "fxsym_plug_ver@VERS_1" and "fxsym_plug_ver@@VERS_2". */
int plug_ver1(int x);
int plug_ver2(int x);
__asm__(".symver plug_ver1, fxsym_plug_ver@VERS_1");
__asm__(".symver plug_ver2, fxsym_plug_ver@@VERS_2");

int plug_ver1(int x)
{
	return x + 100;
}

int plug_ver2(int x)
{
	return x - 200;
}

size_t fxsym_plug_addrs(uintptr_t out[FXSYM_PLUG_COUNT])
{
	int (*fn)(int) = plug_static;

	out[FXSYM_PLUG_ENTRY] = (uintptr_t)&fxsym_plug_entry;
	out[FXSYM_PLUG_STATIC] = (uintptr_t)fn;
	out[FXSYM_PLUG_VER1] = (uintptr_t)&plug_ver1;
	out[FXSYM_PLUG_VER2] = (uintptr_t)&plug_ver2;
	return FXSYM_PLUG_COUNT;
}
