/*
 * tap.h — a tiny header-only TAP producer for the unit tests.
 *   plan(N) (optional), ok(cond, fmt, ...), is_int(got, want, fmt, ...),
 *   is_str(got, want, fmt, ...), skip(n, why), then
 *   `return done_testing();` — 0 when every test passed and the plan (if
 *   any) was kept, else 1.
 */
#ifndef BAKERY_TAP_H
#define BAKERY_TAP_H

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static inline int *tap_counts_(void) /* planned, run, failed */
{
	static int counts[3];
	return counts;
}

static inline void plan(int n) { tap_counts_()[0] = n; printf("1..%d\n", n); }

static inline int tap_vok_(int cond, const char *fmt, va_list ap)
{
	int *c = tap_counts_();
	c[2] += !cond;
	printf("%sok %d - ", cond ? "" : "not ", ++c[1]);
	vprintf(fmt, ap);
	printf("\n");
	fflush(stdout);
	return cond;
}

#define TAP_BODY_(cond) \
	va_list ap; va_start(ap, fmt); int r = tap_vok_((cond), fmt, ap); va_end(ap)

__attribute__((format(printf, 2, 3)))
static inline int ok(int cond, const char *fmt, ...) { TAP_BODY_(cond); return r; }

__attribute__((format(printf, 3, 4)))
static inline int is_int(long long got, long long want, const char *fmt, ...)
{
	TAP_BODY_(got == want);
	if (!r)
		printf("#   got: %lld\n#  want: %lld\n", got, want);
	return r;
}

__attribute__((format(printf, 3, 4)))
static inline int is_str(const char *got, const char *want, const char *fmt, ...)
{
	TAP_BODY_(got && want ? strcmp(got, want) == 0 : got == want);
	if (!r)
		printf("#   got: '%s'\n#  want: '%s'\n", got ? got : "(null)",
		    want ? want : "(null)");
	return r;
}

/* n tests not run, each reported as TAP's "ok N # SKIP why". */
static inline void skip(int n, const char *why)
{
	int *c = tap_counts_();
	for (int i = 0; i < n; i++)
		printf("ok %d # SKIP %s\n", ++c[1], why);
	fflush(stdout);
}

static inline int done_testing(void)
{
	int *c = tap_counts_();
	if (!c[0])
		printf("1..%d\n", c[1]);
	else if (c[0] != c[1])
		printf("# planned %d tests but ran %d\n", c[0], c[1]);
	if (c[2])
		printf("# failed %d of %d tests\n", c[2], c[1]);
	fflush(stdout);
	return c[2] || (c[0] && c[0] != c[1]) ? 1 : 0;
}

#endif
