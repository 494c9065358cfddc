/*
 * log.c — errors, logs and the program's end (log.h).
 */
#include "log.h"
#include "clock.h"
#include "text.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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
