/* Where libdwfl finds a module's ELF file and separate debuginfo: local
 * files only, never debuginfod.
 *
 * libdwfl's own callbacks (dwfl_standard_find_debuginfo,
 * dwfl_build_id_find_elf) end by asking debuginfod; libdw then dlopens
 * libdebuginfod.so, whose constructors initialise libcurl and its TLS
 * library inside the traced process, at exit, possibly after the program's
 * own OpenSSL ran OPENSSL_cleanup (a crash), and may block on the network.
 * These replacements look at the files of this machine, in the places and
 * the order of common/debugpath.h, which the agent's patch planner follows
 * too: the build ID under the debug root (FXT_DEBUG_ROOT, /usr/lib/debug by
 * default), then the .gnu_debuglink name in the file's folder, its .debug/
 * subfolder and the root's mirror of the folder, for the file's path and
 * its real path.  A build-ID candidate must have the module's build ID; a
 * debuglink one the CRC-32 the link stores (common/crc32.h, the agent's
 * too: one check, not zlib's here and another there), when it is not 0.
 *
 * The dwz "alt" file a debug file refers to is found by its build ID
 * alone (dwfl_build_id_find_debuginfo, which is local only: it reads the
 * debuginfo_path directories, which symbolizer.c sets to the debug root).
 *
 * Every module is reported with an open file, so find_elf has nothing to
 * find.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <elfutils/libdwelf.h>

#include "common/crc32.h"
#include "common/debugpath.h"
#include "run/settings.h"
#include "symbolizer/internal.h"

const char *fxt_sym__debug_root(void)
{
	const char *root = getenv(FXT_ENV(DEBUG_ROOT));

	return root && *root ? root : FXT_DEBUG_ROOT_DEFAULT;
}

int fxt_sym__find_elf(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
		      char **file_name, Elf **elfp)
{
	*elfp = NULL;
	errno = 0;
	return -1;
}

/* The CRC-32 of the whole file behind fd (what objcopy
 * --add-gnu-debuglink stores): 0 or -errno. */
static int file_crc32(int fd, uint32_t *crc)
{
	struct stat st;
	void *map;

	if (fstat(fd, &st) < 0)
		return -errno;
	*crc = 0;
	if (st.st_size == 0)
		return 0;
	map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (map == MAP_FAILED)
		return -errno;
	*crc = fxt__crc32(0, map, (size_t)st.st_size);
	munmap(map, (size_t)st.st_size);
	return 0;
}

/* Whether the ELF file behind fd has the build ID id (len bytes). */
static bool has_build_id(int fd, const unsigned char *id, size_t len)
{
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	const void *got = NULL;
	ssize_t n = elf ? dwelf_elf_gnu_build_id(elf, &got) : -1;
	bool same = n > 0 && (size_t)n == len && memcmp(got, id, len) == 0;

	if (elf)
		elf_end(elf);
	return same;
}

/* Opens candidate `path` if it is a regular file other than the module's
 * own (main_st) and passes the check `via` asks for.  The fd, else -1. */
static int try_debug_file(const char *path, enum fxt_debug_via via, const struct stat *main_st,
			  const struct fxt_debug_key *key, GElf_Word crc)
{
	struct stat st;
	uint32_t got = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		goto fail;
	/* The module itself by another name (a debuglink naming itself). */
	if (main_st && st.st_dev == main_st->st_dev && st.st_ino == main_st->st_ino)
		goto fail;
	if (via == FXT_DEBUG_BUILD_ID && !has_build_id(fd, key->build_id, key->build_id_len))
		goto fail;
	if (via == FXT_DEBUG_LINK && crc != 0 && (file_crc32(fd, &got) < 0 || got != crc))
		goto fail;
	return fd;

fail:
	close(fd);
	return -1;
}

/* Whether libdwfl asks for the module's own .gnu_debuglink (not for the
 * dwz "alt" file of a debug file, which it asks for with that file's
 * .gnu_debugaltlink name and CRC 0). */
static bool is_own_debuglink(Dwfl_Module *mod, const char *link, GElf_Word crc)
{
	Dwarf_Addr bias;
	GElf_Word own_crc = 0;
	Elf *elf = dwfl_module_getelf(mod, &bias);
	const char *own = elf ? dwelf_elf_gnu_debuglink(elf, &own_crc) : NULL;

	return own && own_crc == crc && strcmp(own, link) == 0;
}

int fxt_sym__find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
			    const char *file_name, const char *debuglink, GElf_Word debuglink_crc,
			    char **debuginfo_file_name)
{
	struct fxt_debug_key key = { .root = fxt_sym__debug_root(), .file = file_name };
	const unsigned char *id = NULL;
	GElf_Addr id_vaddr;
	struct stat main_st;
	const struct stat *pst = NULL;
	char path[PATH_MAX], *real = NULL;
	int fd = -1, n;

	if (debuglink && *debuglink && !is_own_debuglink(mod, debuglink, debuglink_crc))
		return dwfl_build_id_find_debuginfo(mod, userdata, modname, base, file_name,
						    debuglink, debuglink_crc, debuginfo_file_name);
	n = dwfl_module_build_id(mod, &id, &id_vaddr);
	if (n > 0) {
		key.build_id = id;
		key.build_id_len = (size_t)n;
	}
	key.link = debuglink && *debuglink ? debuglink : NULL;
	if (file_name && stat(file_name, &main_st) == 0)
		pst = &main_st;
	if (file_name && (real = realpath(file_name, NULL)) != NULL)
		key.real = real;
	for (unsigned k = 0; k < FXT_DEBUG_CANDIDATES && fd < 0; k++) {
		enum fxt_debug_via via = fxt_debug_candidate(&key, k, path, sizeof(path));

		if (via != FXT_DEBUG_SKIP)
			fd = try_debug_file(path, via, pst, &key, debuglink_crc);
	}
	free(real);
	if (fd >= 0 && !(*debuginfo_file_name = strdup(path))) {
		close(fd);
		fd = -1;
	}
	if (fd < 0)
		errno = 0; /* "not found", as libdwfl's own callbacks say it */
	return fd;
}
