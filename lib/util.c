/*
 * util.c — errors, logs, the clock, names, ids and crash points.
 */
#define _GNU_SOURCE
#include "util.h"

#include <errno.h>
#include <fcntl.h>
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

void
bakery_print_error(const char *fmt, ...)
{
	char msg[2048];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	if (bakery_log_json()) {
		bakery_log(LOG_ERROR, "error", "message", msg, (char *)NULL);
		return;
	}
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
		while ((k = va_arg(ap, const char *)) && n < sizeof line) {
			const char *v = va_arg(ap, const char *);
			if (!v)
				v = "";
			/* Values with spaces are quoted so the line stays parseable. */
			int quote = strpbrk(v, " \t\"=") != NULL || !*v;
			n += (size_t)snprintf(line + n, sizeof line - n,
			    quote ? " %s=\"%s\"" : " %s=%s", k, v);
		}
		if (bakery_stderr_midline) {
			fputc('\n', stderr);
			bakery_stderr_midline = 0;
		}
		fprintf(stderr, "%s\n", line);
	}
	va_end(ap);
}

int
bakery_close_stdout(void)
{
	static int closed;
	if (closed)
		return 0;
	closed = 1;
	int bad = fflush(stdout) != 0 || ferror(stdout);
	if (fclose(stdout) != 0)
		bad = 1;
	if (bad && errno != EPIPE)
		return bakery_fail(EX_IOERR, "cannot write to standard output: %s",
		    strerror(errno));
	return 0;
}

static int64_t
parse_now(const char *s)
{
	char *end;
	long long secs = strtoll(s, &end, 10);
	if (*s >= '0' && *s <= '9' && !*end)
		return (int64_t)secs * 1000;
	struct tm tm = { 0 };
	end = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm);
	if (end && (*end == 'Z' || !*end))
		return (int64_t)timegm(&tm) * 1000;
	return -1;
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
	struct tm tm = { 0 };
	const char *end = strptime(day, "%Y-%m-%d", &tm);
	if (!end || *end || strlen(day) != 10)
		return 0;
	/* strptime accepts 2026-02-31; a round trip through timegm does not. */
	time_t t = timegm(&tm);
	char again[11];
	bakery_format_day((int64_t)t * 1000, again, sizeof again);
	return strcmp(again, day) == 0;
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

void
bakery_random_id(const char *prefix, char *buf, size_t size)
{
	unsigned char raw[12];
	size_t got = 0;
	while (got < sizeof raw) {
		ssize_t r = getrandom(raw + got, sizeof raw - got, 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			abort(); /* no entropy source: nothing sane to do */
		got += (size_t)r;
	}
	size_t n = (size_t)snprintf(buf, size, "%s", prefix);
	for (size_t i = 0; i < sizeof raw && n + 2 < size; i++)
		n += (size_t)snprintf(buf + n, size - n, "%02x", raw[i]);
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
	static int kill_hits[64], stop_hits[64];
	static const char *kill_names[64], *stop_names[64];
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
