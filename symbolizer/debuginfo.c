/* Where libdwfl finds a module's ELF file and separate debuginfo: local
 * files only, never debuginfod.
 *
 * libdwfl's own callbacks (dwfl_standard_find_debuginfo,
 * dwfl_build_id_find_elf) end by asking debuginfod; libdw then dlopens
 * libdebuginfod.so, whose constructors initialise libcurl and its TLS
 * library inside the traced process, at exit, possibly after the program's
 * own OpenSSL ran OPENSSL_cleanup (a crash), and may block on the network.
 * These replacements look at the files of this machine:
 *
 *   1. /usr/lib/debug/.build-id/xx/yyyy.debug from the module's build ID
 *      (dwfl_build_id_find_debuginfo, which is local only: it reads the
 *      debuginfo_path directories and nothing else), also for the dwz
 *      "alt" file a debug file refers to;
 *   2. the .gnu_debuglink name in the file's directory, its .debug/
 *      subdirectory and /usr/lib/debug/DIR/, for the file's path and, if it
 *      differs, its real path; the debug file's CRC32 must match the
 *      debuglink's when that is non-zero.
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
#include <unistd.h>
#include <zlib.h>

#include <elfutils/libdwelf.h>

#include "symbolizer/internal.h"

#define DEBUG_ROOT "/usr/lib/debug"

int fxt_sym__find_elf(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
		      char **file_name, Elf **elfp)
{
	*elfp = NULL;
	errno = 0;
	return -1;
}

/* The zlib CRC32 of the whole file behind fd (what objcopy
 * --add-gnu-debuglink stores): 0 or -errno. */
static int file_crc32(int fd, uint32_t *crc)
{
	enum { CHUNK = 64 * 1024 };
	unsigned char *buf = malloc(CHUNK);
	uLong c = crc32(0L, Z_NULL, 0);
	off_t off = 0;
	int err = 0;

	if (!buf)
		return -ENOMEM;
	for (;;) {
		ssize_t n = pread(fd, buf, CHUNK, off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = -errno;
			break;
		}
		if (n == 0)
			break;
		c = crc32(c, buf, (uInt)n);
		off += n;
	}
	free(buf);
	*crc = (uint32_t)c;
	return err;
}

/* Opens DIR/NAME if it is a regular file other than the module's own
 * (main_st) and, when crc is non-zero, with that CRC32.  The fd, with
 * *path_out the malloc'd path; else -1. */
static int try_debug_file(const char *dir, const char *name, const struct stat *main_st,
			  GElf_Word crc, char **path_out)
{
	struct stat st;
	uint32_t got;
	char *path;
	int fd;

	if (asprintf(&path, "%s/%s", dir, name) < 0)
		return -1;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		goto fail;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		goto fail_close;
	/* The module itself by another name (a debuglink naming itself). */
	if (main_st && st.st_dev == main_st->st_dev && st.st_ino == main_st->st_ino)
		goto fail_close;
	if (crc != 0 && (file_crc32(fd, &got) < 0 || got != crc))
		goto fail_close;
	*path_out = path;
	return fd;

fail_close:
	close(fd);
fail:
	free(path);
	return -1;
}

/* The debuglink search for one path of the module's file: DIR/NAME,
 * DIR/.debug/NAME, /usr/lib/debug/DIR/NAME. */
static int debuglink_in_dirs(const char *file, const char *link, const struct stat *main_st,
			     GElf_Word crc, char **path_out)
{
	const char *slash = strrchr(file, '/');
	char dir[PATH_MAX], sub[PATH_MAX + sizeof(DEBUG_ROOT)];
	int fd, n;

	if (!slash)
		n = snprintf(dir, sizeof(dir), ".");
	else if (slash == file)
		n = snprintf(dir, sizeof(dir), "/");
	else
		n = snprintf(dir, sizeof(dir), "%.*s", (int)(slash - file), file);
	if (n < 0 || (size_t)n >= sizeof(dir))
		return -1;

	fd = try_debug_file(dir, link, main_st, crc, path_out);
	if (fd >= 0)
		return fd;
	n = snprintf(sub, sizeof(sub), "%s/.debug", dir);
	if (n > 0 && (size_t)n < sizeof(sub)) {
		fd = try_debug_file(sub, link, main_st, crc, path_out);
		if (fd >= 0)
			return fd;
	}
	/* Only an absolute directory has a mirror under /usr/lib/debug. */
	if (dir[0] != '/')
		return -1;
	n = snprintf(sub, sizeof(sub), DEBUG_ROOT "%s", dir[1] ? dir : "");
	if (n < 0 || (size_t)n >= sizeof(sub))
		return -1;
	return try_debug_file(sub, link, main_st, crc, path_out);
}

/* Whether libdwfl asks for the module's own .gnu_debuglink (not for the
 * dwz "alt" file of a debug file, which it asks for with that file's
 * .gnu_debugaltlink name and CRC 0: build IDs alone find that one). */
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
	struct stat main_st;
	const struct stat *pst = NULL;
	char *real;
	int fd;

	fd = dwfl_build_id_find_debuginfo(mod, userdata, modname, base, file_name, debuglink,
					  debuglink_crc, debuginfo_file_name);
	if (fd >= 0)
		return fd;
	if (!file_name || !debuglink || !*debuglink ||
	    !is_own_debuglink(mod, debuglink, debuglink_crc))
		goto none;
	if (stat(file_name, &main_st) == 0)
		pst = &main_st;
	fd = debuglink_in_dirs(file_name, debuglink, pst, debuglink_crc, debuginfo_file_name);
	if (fd >= 0)
		return fd;
	/* A symlink's debug file goes with its target's name and directory
	 * (libz.so.1 -> libz.so.1.2.13, /lib -> /usr/lib). */
	real = realpath(file_name, NULL);
	if (real && strcmp(real, file_name) != 0)
		fd = debuglink_in_dirs(real, debuglink, pst, debuglink_crc, debuginfo_file_name);
	free(real);
	if (fd >= 0)
		return fd;
none:
	errno = 0; /* "not found", as libdwfl's own callbacks say it */
	return -1;
}
