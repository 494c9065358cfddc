/*
 * text.c — text checks, names, numbers, hex and random ids (text.h).
 */
#define _GNU_SOURCE
#include "text.h"
#include "alloc.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

int
bakery_utf8_valid(const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s, *end = p + len;
	while (p < end) {
		unsigned c = *p++;
		if (c < 0x80)
			continue;
		int more;
		unsigned min, cp;
		if (c >= 0xc2 && c <= 0xdf)
			more = 1, min = 0x80, cp = c & 0x1f;
		else if (c >= 0xe0 && c <= 0xef)
			more = 2, min = 0x800, cp = c & 0x0f;
		else if (c >= 0xf0 && c <= 0xf4)
			more = 3, min = 0x10000, cp = c & 0x07;
		else
			return 0;
		if (end - p < more)
			return 0;
		for (int i = 0; i < more; i++, p++) {
			if ((*p & 0xc0) != 0x80)
				return 0;
			cp = cp << 6 | (*p & 0x3f);
		}
		if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
			return 0;
	}
	return 1;
}

int
bakery_text_valid(const char *s, size_t max)
{
	size_t n = strlen(s);
	if (n == 0 || n > max || !bakery_utf8_valid(s, n))
		return 0;
	for (size_t i = 0; i < n; i++) {
		const unsigned char *u = (const unsigned char *)s + i;
		if (*u < ' ' || *u == 0x7f)
			return 0;
		/* The bidi embeddings and overrides, U+202A-U+202E (E2 80
		 * AA-AE), and isolates, U+2066-U+2069 (E2 81 A6-A9): they
		 * reorder what is shown after them, on a page and a terminal
		 * alike. */
		if (*u == 0xe2 && i + 2 < n &&
		    ((u[1] == 0x80 && u[2] >= 0xaa && u[2] <= 0xae) ||
		     (u[1] == 0x81 && u[2] >= 0xa6 && u[2] <= 0xa9)))
			return 0;
	}
	return 1;
}

int
bakery_currency_valid(const char *s)
{
	return strlen(s) == 3 && strspn(s, "abcdefghijklmnopqrstuvwxyz") == 3;
}

int
bakery_ends_with(const char *s, const char *end)
{
	size_t n = strlen(s), m = strlen(end);
	return n >= m && strcmp(s + n - m, end) == 0;
}

int
bakery_parse_number(const char *s, long long min, long long max,
    long long *out)
{
	long long n = 0;
	if (!s || !*s)
		return -1;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -1;
		int d = *s - '0';
		if (n > (LLONG_MAX - d) / 10)
			return -1;
		n = n * 10 + d;
	}
	if (n < min || n > max)
		return -1;
	*out = n;
	return 0;
}

int
bakery_name_valid(const char *name)
{
	size_t n = strlen(name);
	if (n == 0 || n > 64 || strstr(name, ".."))
		return 0;
	for (size_t i = 0; i < n; i++) {
		char c = name[i];
		int ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
		if (i > 0)
			ok = ok || c == '_' || c == '.' || c == '-';
		if (!ok)
			return 0;
	}
	return 1;
}

/* Random bytes drawn from one getrandom a pool, not one an id. A pool
 * belongs to the process that filled it: a forked child (its pid differs,
 * and the fork handler empties the pool as well, for a pid used again)
 * fills its own, so two processes never hand out the same bytes. One pool
 * a thread. */
#define RANDOM_POOL 4096
static _Thread_local struct {
	unsigned char bytes[RANDOM_POOL];
	size_t used;
	pid_t pid;
} pool = { .used = RANDOM_POOL };
static pthread_once_t pool_once = PTHREAD_ONCE_INIT;

static void
pool_forked(void)
{
	explicit_bzero(pool.bytes, sizeof pool.bytes);
	pool.used = RANDOM_POOL;
}

static void
pool_register(void)
{
	pthread_atfork(NULL, NULL, pool_forked);
}

void
bakery_random_bytes(unsigned char *out, size_t n)
{
	pthread_once(&pool_once, pool_register);
	pid_t pid = getpid();
	if (pool.pid != pid || RANDOM_POOL - pool.used < n) {
		size_t got = 0;
		while (got < RANDOM_POOL) {
			ssize_t r = getrandom(pool.bytes + got, RANDOM_POOL - got,
			    0);
			if (r < 0 && errno == EINTR)
				continue;
			if (r < 0)
				abort(); /* no entropy source: nothing sane to do */
			got += (size_t)r;
		}
		pool.used = 0;
		pool.pid = pid;
	}
	memcpy(out, pool.bytes + pool.used, n);
	/* Handed out once: gone from the pool. */
	explicit_bzero(pool.bytes + pool.used, n);
	pool.used += n;
}

int
bakery_compare_strings(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

void
bakery_hex(const unsigned char *raw, size_t n, char *out)
{
	static const char hex[] = "0123456789abcdef";
	for (size_t i = 0; i < n; i++) {
		out[2 * i] = hex[raw[i] >> 4];
		out[2 * i + 1] = hex[raw[i] & 15];
	}
	out[2 * n] = '\0';
}

int
bakery_hex_value(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f'
	    ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

char *
bakery_percent_decode(const char *s, size_t n, int plus_blank, size_t *len)
{
	char *out = bakery_xmalloc(n + 1);
	size_t k = 0;
	int bad = 0;
	for (size_t i = 0; i < n && !bad; i++) {
		if (s[i] == '+' && plus_blank) {
			out[k++] = ' ';
		} else if (s[i] == '%') {
			int hi = i + 2 < n ? bakery_hex_value(s[i + 1]) : -1;
			int lo = hi >= 0 ? bakery_hex_value(s[i + 2]) : -1;
			bad = lo < 0;
			out[k++] = (char)(hi * 16 + lo);
			i += 2;
		} else {
			out[k++] = s[i];
		}
	}
	out[k] = '\0';
	if (bad || memchr(out, '\0', k) || !bakery_utf8_valid(out, k)) {
		explicit_bzero(out, k);
		free(out);
		return NULL;
	}
	*len = k;
	return out;
}

void
bakery_random_id(const char *prefix, char *buf, size_t size)
{
	static const char hex[] = "0123456789abcdef";
	unsigned char raw[12];
	bakery_random_bytes(raw, sizeof raw);
	size_t n = (size_t)snprintf(buf, size, "%s", prefix);
	for (size_t i = 0; i < sizeof raw && n + 2 < size; i++) {
		buf[n++] = hex[raw[i] >> 4];
		buf[n++] = hex[raw[i] & 15];
		buf[n] = '\0';
	}
}
