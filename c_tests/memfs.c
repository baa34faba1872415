/* See memfs.h. */
#include "memfs.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint32_t fs_read(void *user, const char *path, const uint8_t **data, size_t *size, void **token)
{
    mem_fs *fs = user;
    size_t i;
    if (fs->asked_count < FS_MAX_ASKED)
        snprintf(fs->asked[fs->asked_count], FS_PATH_MAX, "%s", path);
    fs->asked_count++;
    for (i = 0; i < fs->file_count; i++) {
        const fs_file *f = &fs->files[i];
        uint8_t *copy;
        if (strcmp(f->path, path) != 0)
            continue;
        if (f->fail) {
            fs->failures++;
            return f->fail;
        }
        if (fs->token_count >= FS_MAX_TOKENS)
            return OSSA_ERR_IO;
        /* A heap copy that release() scribbles over and frees: any use of the bytes after their
           release is a use-after-free the sanitizers see. */
        copy = malloc(f->size ? f->size : 1);
        if (copy == NULL)
            return OSSA_ERR_OUT_OF_MEMORY;
        if (f->size)
            memcpy(copy, f->data, f->size);
        fs->tokens[fs->token_count] = copy;
        fs->token_sizes[fs->token_count] = f->size;
        fs->released[fs->token_count] = 0;
        fs->token_count++;
        *data = copy;
        *size = f->size;
        *token = copy;
        fs->reads++;
        return OSSA_OK;
    }
    fs->misses++;
    return OSSA_ERR_NOT_FOUND;
}

static void fs_release(void *user, void *token)
{
    mem_fs *fs = user;
    size_t i;
    /* Latest first: the allocator may hand out the address of a copy already released. */
    for (i = fs->token_count; i-- > 0;) {
        if (fs->tokens[i] != token)
            continue;
        if (fs->released[i]) {
            fs->bad_releases++;
            return;
        }
        memset(token, 0xee, fs->token_sizes[i] ? fs->token_sizes[i] : 1);
        free(token);
        fs->released[i] = 1;
        fs->releases++;
        return;
    }
    fs->bad_releases++;
}

void fs_init(mem_fs *fs)
{
    memset(fs, 0, sizeof *fs);
    fs->io.user = fs;
    fs->io.read = fs_read;
    fs->io.release = fs_release;
}

void fs_reset(mem_fs *fs)
{
    fs->asked_count = 0;
    fs->token_count = 0;
    fs->reads = fs->releases = fs->misses = fs->failures = fs->bad_releases = 0;
}

/* The one place an fs_file is filled in, for every fs_add_ variant. */
static void fs_put(mem_fs *fs, const char *path, const uint8_t *data, size_t size, uint32_t fail)
{
    if (fs->file_count < FS_MAX_FILES) {
        fs_file f;
        f.path = path;
        f.data = data;
        f.size = size;
        f.fail = fail;
        fs->files[fs->file_count++] = f;
    }
}

void fs_add(mem_fs *fs, const char *path, const fx_buf *file)
{
    fs_put(fs, path, file->data, file->size, 0);
}

void fs_add_text(mem_fs *fs, const char *path, const char *text)
{
    fs_put(fs, path, (const uint8_t *)text, strlen(text), 0);
}

void fs_add_failing(mem_fs *fs, const char *path, uint32_t code)
{
    fs_put(fs, path, NULL, 0, code);
}

int fs_was_asked(const mem_fs *fs, const char *needle)
{
    size_t i;
    for (i = 0; i < fs->asked_count && i < FS_MAX_ASKED; i++)
        if (strstr(fs->asked[i], needle) != NULL)
            return 1;
    return 0;
}

int contains(const char *hay, const char *needle)
{
    return hay != NULL && strstr(hay, needle) != NULL;
}

/* Reported as CHECK_EQ_U reports, so a failure reads the same as when this was a test's own code. */
static void report_equal(memfs_report_fn report, unsigned got, unsigned want, const char *file, int line,
                         const char *what)
{
    char detail[96];
    detail[0] = '\0';
    if (got != want)
        snprintf(detail, sizeof detail, "got %llu, want %llu", (unsigned long long)got, (unsigned long long)want);
    report(got == want, file, line, what, detail);
}

void check_released(memfs_report_fn report, mem_fs *fs, const char *file, int line)
{
    size_t i;
    report_equal(report, fs->releases, fs->reads, file, line, "fs->releases == fs->reads");
    report_equal(report, fs->bad_releases, 0, file, line, "fs->bad_releases == 0");
    for (i = 0; i < fs->token_count; i++)
        if (!fs->released[i]) {
            free(fs->tokens[i]);
            fs->released[i] = 1;
        }
}

void check_asked(memfs_report_fn report, const mem_fs *fs, const char *file, int line, ...)
{
    va_list ap;
    const char *want;
    size_t n = 0;
    int ok = 1;
    char detail[200];
    va_start(ap, line);
    while ((want = va_arg(ap, const char *)) != NULL) {
        if (n >= fs->asked_count || n >= FS_MAX_ASKED || strcmp(fs->asked[n], want) != 0) {
            if (ok)
                snprintf(detail, sizeof detail, "path %u asked is \"%.70s\", want \"%.70s\"", (unsigned)n,
                         n < fs->asked_count && n < FS_MAX_ASKED ? fs->asked[n] : "(nothing)", want);
            ok = 0;
        }
        n++;
    }
    va_end(ap);
    if (ok && fs->asked_count != n) {
        snprintf(detail, sizeof detail, "%u paths asked, want %u; the next is \"%.70s\"", (unsigned)fs->asked_count,
                 (unsigned)n, n < FS_MAX_ASKED ? fs->asked[n] : "?");
        ok = 0;
    }
    if (ok)
        detail[0] = '\0';
    report(ok, file, line, "the paths asked for, in order", detail);
    if (!ok) {
        size_t i;
        for (i = 0; i < fs->asked_count && i < FS_MAX_ASKED; i++)
            fprintf(stderr, "    asked %u: %s\n", (unsigned)i, fs->asked[i]);
    }
}

void check_message(memfs_report_fn report, const char *message, const char *needle, const char *file, int line)
{
    char detail[300];
    int ok = contains(message, needle);
    detail[0] = '\0';
    if (!ok)
        snprintf(detail, sizeof detail, "message \"%.200s\" lacks \"%.60s\"", message ? message : "(null)", needle);
    report(ok, file, line, "message names what failed", detail);
}
