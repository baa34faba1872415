/* A tiny assertion framework for the C tests.
 *
 * A failing CHECK prints file:line and the expression, is counted, and the test goes on, so one
 * run shows every problem.  check_context() names the case a loop is on; failures print it too.
 * Each test program ends with `return check_finish("name");`. */
#ifndef OSSA_C_TESTS_CHECK_H
#define OSSA_C_TESTS_CHECK_H

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "ossa.h"

static unsigned check_total;
static unsigned check_failures;
static char check_context_text[256];

/* Set (fmt != NULL) or clear (fmt == NULL) the description printed with failures. */
static inline void check_context(const char *fmt, ...)
{
    va_list ap;
    if (fmt == NULL) {
        check_context_text[0] = '\0';
        return;
    }
    va_start(ap, fmt);
    vsnprintf(check_context_text, sizeof check_context_text, fmt, ap);
    va_end(ap);
}

static inline int check_report(int ok, const char *file, int line, const char *what, const char *detail)
{
    check_total++;
    if (!ok) {
        check_failures++;
        fprintf(stderr, "%s:%d: CHECK failed: %s", file, line, what);
        if (detail[0])
            fprintf(stderr, " -- %s", detail);
        if (check_context_text[0])
            fprintf(stderr, " [%s]", check_context_text);
        fputc('\n', stderr);
        fflush(stderr);
    }
    return ok;
}

static inline int check_result(uint32_t got, uint32_t want, const char *file, int line, const char *expr)
{
    char detail[160];
    detail[0] = '\0';
    if (got != want)
        snprintf(detail, sizeof detail, "gave %s (%u), want %s (%u)", ossa_result_name(got), (unsigned)got,
                 ossa_result_name(want), (unsigned)want);
    return check_report(got == want, file, line, expr, detail);
}

static inline int check_u64(unsigned long long got, unsigned long long want, const char *file, int line,
                            const char *expr)
{
    char detail[96];
    detail[0] = '\0';
    if (got != want)
        snprintf(detail, sizeof detail, "got %llu, want %llu", got, want);
    return check_report(got == want, file, line, expr, detail);
}

static inline int check_i64(long long got, long long want, const char *file, int line, const char *expr)
{
    char detail[96];
    detail[0] = '\0';
    if (got != want)
        snprintf(detail, sizeof detail, "got %lld, want %lld", got, want);
    return check_report(got == want, file, line, expr, detail);
}

static inline int check_near(double got, double want, double tol, const char *file, int line, const char *expr)
{
    char detail[128];
    /* Written so that a NaN on either side fails. */
    int ok = fabs(got - want) <= tol;
    detail[0] = '\0';
    if (!ok)
        snprintf(detail, sizeof detail, "got %.9g, want %.9g (tolerance %g)", got, want, tol);
    return check_report(ok, file, line, expr, detail);
}

static inline int check_str(const char *got, const char *want, const char *file, int line, const char *expr)
{
    char detail[200];
    int ok = got != NULL && want != NULL && strcmp(got, want) == 0;
    detail[0] = '\0';
    if (!ok)
        snprintf(detail, sizeof detail, "got \"%.80s\", want \"%.80s\"", got ? got : "(null)",
                 want ? want : "(null)");
    return check_report(ok, file, line, expr, detail);
}

#define CHECK(expr) check_report((expr) ? 1 : 0, __FILE__, __LINE__, #expr, "")
#define CHECK_RESULT(expr, want) check_result((uint32_t)(expr), (uint32_t)(want), __FILE__, __LINE__, #expr)
#define CHECK_OK(expr) CHECK_RESULT(expr, OSSA_OK)
#define CHECK_EQ_U(got, want) \
    check_u64((unsigned long long)(got), (unsigned long long)(want), __FILE__, __LINE__, #got " == " #want)
#define CHECK_EQ_I(got, want) \
    check_i64((long long)(got), (long long)(want), __FILE__, __LINE__, #got " == " #want)
#define CHECK_NEAR(got, want, tol) check_near((got), (want), (tol), __FILE__, __LINE__, #got " ~ " #want)
#define CHECK_STR(got, want) check_str((got), (want), __FILE__, __LINE__, #got " == " #want)

/* Outputs of failed calls are preset with this byte and must still hold it afterwards. */
#define POISON 0xa7

static inline int is_poisoned(const void *p, size_t n)
{
    const uint8_t *b = p;
    size_t i;
    for (i = 0; i < n; i++)
        if (b[i] != POISON)
            return 0;
    return 1;
}

/* Print the test's summary line; the return value is the process exit status. */
static inline int check_finish(const char *name)
{
    printf("%s: %u checks, %u failed\n", name, check_total, check_failures);
    fflush(stdout);
    return check_failures == 0 ? 0 : 1;
}

#endif
