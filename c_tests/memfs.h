/* A filesystem in memory behind ossa_file_io, for the tests of what the library reads through the
 * caller's callbacks (sidecars, skill files): which paths it asks for and in which order, and that
 * every successful read is released exactly once, also when the load fails.
 *
 * Files are served from the caller's bytes, not copied, so they must outlive the mem_fs. Each read
 * hands out a fresh heap copy that the release callback scribbles over and frees: a use of the bytes
 * after their release is a use-after-free the sanitizers see.
 *
 * check.h keeps its counters per translation unit (static), so the checks here would count in this
 * file and not in the test's check_finish. The CHECK_ macros below therefore hand the test's own
 * check_report to the functions, and the test must include check.h before using them. */
#ifndef OSSA_C_TESTS_MEMFS_H
#define OSSA_C_TESTS_MEMFS_H

#include <stddef.h>
#include <stdint.h>

#include "fixture.h"
#include "ossa.h"

#define FS_MAX_FILES 16
#define FS_MAX_ASKED 32
#define FS_MAX_TOKENS 64
#define FS_PATH_MAX 256

typedef struct fs_file {
    const char *path;
    const uint8_t *data;
    size_t size;
    uint32_t fail; /* non-zero: the read callback answers this code instead */
} fs_file;

typedef struct mem_fs {
    fs_file files[FS_MAX_FILES];
    size_t file_count;
    char asked[FS_MAX_ASKED][FS_PATH_MAX]; /* every path asked for, in order */
    size_t asked_count;
    uint8_t *tokens[FS_MAX_TOKENS]; /* the copy handed out by each successful read */
    size_t token_sizes[FS_MAX_TOKENS];
    int released[FS_MAX_TOKENS];
    size_t token_count;
    unsigned reads, releases, misses, failures;
    unsigned bad_releases; /* a token never handed out, or released twice */
    ossa_file_io io;
} mem_fs;

/* An empty filesystem whose `io` is ready for ossa_load_options.io. */
void fs_init(mem_fs *fs);
/* Forget what was asked and read, keeping the files. Only after CHECK_RELEASED, which frees the
   copies the library kept: the ones forgotten here are never freed. */
void fs_reset(mem_fs *fs);
/* Serve `file` (or `text`, without its NUL) at `path`; beyond FS_MAX_FILES, ignored. */
void fs_add(mem_fs *fs, const char *path, const fx_buf *file);
void fs_add_text(mem_fs *fs, const char *path, const char *text);
/* Answer a read of `path` with `code`. */
void fs_add_failing(mem_fs *fs, const char *path, uint32_t code);
/* Whether a path asked for so far contains `needle`. */
int fs_was_asked(const mem_fs *fs, const char *needle);

/* Whether `hay` is not NULL and holds `needle`. */
int contains(const char *hay, const char *needle);

/* check.h's check_report, taken from the test's translation unit. */
typedef int (*memfs_report_fn)(int ok, const char *file, int line, const char *what, const char *detail);

/* Every successful read was released exactly once, and nothing else was released (two checks). Frees
   what the library kept (so a leak is reported once, as a failed check, not again by LeakSanitizer). */
#define CHECK_RELEASED(fs) check_released(check_report, (fs), __FILE__, __LINE__)
void check_released(memfs_report_fn report, mem_fs *fs, const char *file, int line);

/* The paths asked for are exactly the NULL-terminated list that follows, in that order. */
#define CHECK_ASKED(fs, ...) check_asked(check_report, (fs), __FILE__, __LINE__, __VA_ARGS__)
void check_asked(memfs_report_fn report, const mem_fs *fs, const char *file, int line, ...);

/* Check that `message` holds `needle`, printing it when it does not. */
#define CHECK_MESSAGE(message, needle) check_message(check_report, (message), (needle), __FILE__, __LINE__)
void check_message(memfs_report_fn report, const char *message, const char *needle, const char *file, int line);

#endif
