/*
 * util.c — errors, logs, the clock, names, ids and crash points.
 */
#define _GNU_SOURCE
#include "util.h"
#include "../store/testvfs.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <getopt.h>

#include <jv.h>

const char *bakery_prog = "bakery";
int bakery_verbosity = LOG_WARN;
int bakery_stderr_midline;
static char last_error[1024];

void
bakery_init(const char *argv0)
{
	const char *slash = strrchr(argv0, '/');
	bakery_prog = slash ? slash + 1 : argv0;
	/* Under cron or a careless parent, fds 0-2 may be closed: a later
	 * open() would take them and stdout writes would land in a database.
	 * A closed stdout gets /dev/null opened for reading only, so that
	 * output written to it still fails, as it would have, and the end
	 * of the program (bakery_close_stdout) exits 74 instead of 0. */
	for (int fd = 0; fd <= 2; fd++)
		if (fcntl(fd, F_GETFD) == -1 && errno == EBADF)
			if (open("/dev/null", fd <= 1 ? O_RDONLY : O_WRONLY) != fd)
				_exit(EX_OSERR);
	signal(SIGPIPE, SIG_IGN);
	/* Bad options are reported by cli_common(), in the log's format. */
	opterr = 0;
}

/* Formats the message through a copy: an argument may be bakery_error()
 * itself (an error that wraps the one before), which vsnprintf must not
 * read while it writes over it. */
static void
set_error(const char *fmt, va_list ap)
{
	char msg[sizeof last_error];
	vsnprintf(msg, sizeof msg, fmt, ap);
	memcpy(last_error, msg, sizeof last_error);
}

int
bakery_fail(int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	set_error(fmt, ap);
	va_end(ap);
	return code;
}

const char *
bakery_error(void)
{
	return last_error[0] ? last_error : "unknown error";
}

_Noreturn void
bakery_die(int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	set_error(fmt, ap);
	va_end(ap);
	bakery_die_last(code);
}

_Noreturn void
bakery_die_last(int code)
{
	fflush(stdout);
	bakery_print_error("%s", bakery_error());
	exit(code);
}

int
bakery_log_json(void)
{
	const char *mode = getenv("BAKERY_LOG");
	return mode && strcmp(mode, "json") == 0;
}

/* Whether stderr is the journal: systemd sets JOURNAL_STREAM to the
 * "DEVICE:INODE" of the stream it connected, and a child that redirected
 * stderr elsewhere must not prefix. */
static int
stderr_is_journal(void)
{
	static int known = -1;
	if (known >= 0)
		return known;
	known = 0;
	const char *js = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat sb;
	if (js && sscanf(js, "%llu:%llu", &dev, &ino) == 2 &&
	    fstat(STDERR_FILENO, &sb) == 0 &&
	    (unsigned long long)sb.st_dev == dev &&
	    (unsigned long long)sb.st_ino == ino)
		known = 1;
	return known;
}

static const char *level_names[] = { "error", "warning", "info", "debug" };
static const char *const journal_prefixes[] = { "<3>", "<4>", "<6>", "<7>" };

/* The length of the UTF-8 sequence at s (of at most len bytes), or 0 when
 * s[0] is a control character or starts no valid sequence. */
static size_t
printable_at(const char *s, size_t len)
{
	unsigned char c = (unsigned char)s[0];
	if (c < ' ' || c == 0x7f)
		return 0;
	size_t n = c < 0x80 ? 1 : c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : 2;
	return n <= len && bakery_utf8_valid(s, n) ? n : 0;
}

/* Whether s needs quoting as a plain log value: empty, or holding a space,
 * a quote, '=', a backslash or anything put_escaped() escapes. */
static int
needs_quotes(const char *s)
{
	size_t len = strlen(s);
	if (!len)
		return 1;
	for (size_t i = 0, n; i < len; i += n) {
		if (!(n = printable_at(s + i, len - i)) || strchr(" \"=\\", s[i]))
			return 1;
	}
	return 0;
}

/* Appends s to buf (size bytes, *used so far) as a plain log line may
 * hold it: a control character or a byte of invalid UTF-8 becomes an
 * escape (\n, \r, \t, \xHH), and in a quoted value '"' and '\' are
 * escaped too, so a value can neither end the line nor forge another
 * (the JSON logs escape the same through jq). */
static void
put_escaped(char *buf, size_t size, size_t *used, const char *s, int quoted)
{
	size_t len = strlen(s);
	for (size_t i = 0, n; i < len && *used + 5 < size; i += n) {
		char *out = buf + *used;
		if ((n = printable_at(s + i, len - i))) {
			int esc = quoted && (s[i] == '"' || s[i] == '\\');
			if (esc)
				*out++ = '\\';
			memcpy(out, s + i, n);
			*used += n + (size_t)esc;
			continue;
		}
		n = 1;
		unsigned char c = (unsigned char)s[i];
		*used += (size_t)(c == '\n' ? snprintf(out, 6, "\\n")
		    : c == '\r' ? snprintf(out, 6, "\\r")
		    : c == '\t' ? snprintf(out, 6, "\\t")
		    : snprintf(out, 6, "\\x%02x", c));
	}
	buf[*used < size ? *used : size - 1] = '\0';
}

void
bakery_print_error(const char *fmt, ...)
{
	char raw[2048], msg[4096];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(raw, sizeof raw, fmt, ap);
	va_end(ap);
	if (bakery_log_json()) {
		bakery_log(LOG_ERROR, "error", "message", raw, (char *)NULL);
		return;
	}
	size_t used = 0;
	msg[0] = '\0';
	put_escaped(msg, sizeof msg, &used, raw, 0);
	if (bakery_stderr_midline) {
		fputc('\n', stderr);
		bakery_stderr_midline = 0;
	}
	fprintf(stderr, "%s%s: error: %s\n",
	    stderr_is_journal() ? journal_prefixes[LOG_ERROR] : "",
	    bakery_prog, msg);
}

void
bakery_log(enum bakery_level level, const char *event, ...)
{
	if ((int)level > bakery_verbosity)
		return;
	va_list ap;
	va_start(ap, event);
	if (bakery_log_json()) {
		char ts[32];
		bakery_format_time(bakery_now_ms(), ts, sizeof ts);
		jv o = jv_object();
		o = jv_object_set(o, jv_string("time"), jv_string(ts));
		o = jv_object_set(o, jv_string("prog"), jv_string(bakery_prog));
		o = jv_object_set(o, jv_string("level"),
		    jv_string(level_names[level]));
		o = jv_object_set(o, jv_string("event"), jv_string(event));
		const char *k;
		while ((k = va_arg(ap, const char *))) {
			const char *v = va_arg(ap, const char *);
			o = jv_object_set(o, jv_string(k), jv_string(v ? v : ""));
		}
		jv s = jv_dump_string(o, 0);
		fprintf(stderr, "%s\n", jv_string_value(s));
		jv_free(s);
	} else {
		char line[4096];
		size_t n = (size_t)snprintf(line, sizeof line, "%s%s: %s: %s",
		    stderr_is_journal() ? journal_prefixes[level] : "",
		    bakery_prog, level_names[level], event);
		const char *k;
		while ((k = va_arg(ap, const char *)) && n + 8 < sizeof line) {
			const char *v = va_arg(ap, const char *);
			if (!v)
				v = "";
			/* Values with spaces are quoted so the line stays
			 * parseable, and escaped so it stays one line. */
			int quote = needs_quotes(v);
			n += (size_t)snprintf(line + n, sizeof line - n,
			    quote ? " %s=\"" : " %s=", k);
			if (n + 2 < sizeof line) {
				put_escaped(line, sizeof line - 1, &n, v, quote);
				if (quote)
					line[n++] = '"';
				line[n] = '\0';
			}
		}
		if (bakery_stderr_midline) {
			fputc('\n', stderr);
			bakery_stderr_midline = 0;
		}
		fprintf(stderr, "%s\n", line);
	}
	va_end(ap);
}

static int
close_stdout(int reader_may_go)
{
	static int closed;
	if (closed)
		return 0;
	closed = 1;
	int bad = fflush(stdout) != 0 || ferror(stdout);
	if (fclose(stdout) != 0)
		bad = 1;
	if (bad && (errno != EPIPE || !reader_may_go))
		return bakery_fail(EX_IOERR, "cannot write to standard output: %s",
		    strerror(errno));
	return 0;
}

int
bakery_close_stdout(void)
{
	return close_stdout(1);
}

int
bakery_close_answer(void)
{
	return close_stdout(0);
}

static int64_t
parse_now(const char *s)
{
	long long secs;
	if (strspn(s, "0123456789") == strlen(s) && *s)
		return bakery_parse_number(s, 0, BAKERY_TIME_MAX_MS / 1000,
		    &secs) ? -1 : (int64_t)secs * 1000;
	const char *rest;
	int64_t at = bakery_parse_datetime(s, &rest);
	/* The zone is said: a time without it could be read as local. */
	if (at >= 0 && rest[0] == 'Z' && !rest[1])
		return at * 1000;
	return -1;
}

int64_t
bakery_parse_datetime(const char *s, const char **end)
{
	struct tm tm = { 0 };
	const char *e = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm);
	*end = e ? e : s;
	if (!e || e - s != 19)
		return -1;
	/* strptime takes 2026-02-30 and timegm makes it 03-02: a date is
	 * real only when it comes back the same. */
	time_t t = timegm(&tm);
	char again[32];
	struct tm back;
	if (t < 0 || !gmtime_r(&t, &back))
		return -1;
	strftime(again, sizeof again, "%Y-%m-%dT%H:%M:%S", &back);
	if (strncmp(again, s, 19) != 0) {
		*end = s;
		return -1;
	}
	return (int64_t)t;
}

int
bakery_now_valid(const char *s)
{
	return parse_now(s) >= 0;
}

int64_t
bakery_now_ms(void)
{
	const char *pinned = getenv("BAKERY_NOW");
	if (pinned && *pinned) {
		int64_t ms = parse_now(pinned);
		if (ms >= 0)
			return ms;
	}
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t
bakery_monotonic_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void
bakery_format_time(int64_t ms, char *buf, size_t size)
{
	time_t secs = (time_t)(ms / 1000);
	struct tm tm;
	gmtime_r(&secs, &tm);
	char base[24];
	strftime(base, sizeof base, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf, size, "%s.%03dZ", base, (int)(ms % 1000));
}

jv
bakery_time_jv(int64_t ms)
{
	if (!ms)
		return jv_null();
	char ts[32];
	bakery_format_time(ms, ts, sizeof ts);
	return jv_string(ts);
}

void
bakery_format_day(int64_t ms, char *buf, size_t size)
{
	time_t secs = (time_t)(ms / 1000);
	struct tm tm;
	gmtime_r(&secs, &tm);
	strftime(buf, size, "%Y-%m-%d", &tm);
}

int
bakery_day_valid(const char *day)
{
	if (strlen(day) != 10)
		return 0;
	char stamp[20];
	snprintf(stamp, sizeof stamp, "%sT00:00:00", day);
	const char *end;
	return bakery_parse_datetime(stamp, &end) >= 0 && !*end;
}

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
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] < ' ' || s[i] == 0x7f)
			return 0;
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

static void
random_bytes(unsigned char *out, size_t n)
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

void
bakery_random_id(const char *prefix, char *buf, size_t size)
{
	static const char hex[] = "0123456789abcdef";
	unsigned char raw[12];
	random_bytes(raw, sizeof raw);
	size_t n = (size_t)snprintf(buf, size, "%s", prefix);
	for (size_t i = 0; i < sizeof raw && n + 2 < size; i++) {
		buf[n++] = hex[raw[i] >> 4];
		buf[n++] = hex[raw[i] & 15];
		buf[n] = '\0';
	}
}

/* Whether var names this point ("NAME" or "NAME:N") and this is its N-th
 * pass; hits and names count the passes of the points var named. */
static int
point_due(const char *var, const char *name, int *hits, const char **names)
{
	const char *want = getenv(var);
	if (!want || !*want)
		return 0;
	size_t len = strlen(name);
	if (strncmp(want, name, len) != 0 || (want[len] && want[len] != ':'))
		return 0;
	int nth = want[len] == ':' ? atoi(want + len + 1) : 1;
	int slot = 0;
	while (slot < 63 && names[slot] && strcmp(names[slot], name) != 0)
		slot++;
	names[slot] = name;
	return ++hits[slot] >= nth;
}

void
bakery_crash_point(const char *name)
{
	static int kill_hits[64], stop_hits[64], cut_hits[64];
	static const char *kill_names[64], *stop_names[64], *cut_names[64];
	if (point_due("BAKERY_POWERCUT_AT", name, cut_hits, cut_names))
		testvfs_cut_now();
	int kill = point_due("BAKERY_CRASH_AT", name, kill_hits, kill_names);
	int stop = !kill &&
	    point_due("BAKERY_STOP_AT", name, stop_hits, stop_names);
	if (!kill && !stop)
		return;
	bakery_log(LOG_INFO, kill ? "crash_point" : "stop_point", "point",
	    name, (char *)NULL);
	fflush(stdout);
	fflush(stderr);
	raise(kill ? SIGKILL : SIGSTOP);
}

void *
bakery_xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		abort();
	return p;
}

void *
bakery_xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		abort();
	return p;
}

char *
bakery_xstrdup(const char *s)
{
	char *p = strdup(s);
	if (!p)
		abort();
	return p;
}

char *
bakery_xasprintf(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *p;
	if (vasprintf(&p, fmt, ap) < 0)
		abort();
	va_end(ap);
	return p;
}
