/*
 * util.h — what every bakery program and module shares: the error
 * convention, logging, the clock, names and ids, and crash points.
 *
 * Errors. A library function that can fail returns 0 or a sysexits code
 * (EX_USAGE, EX_DATAERR, ...) and leaves a message in bakery_error(); the
 * program prints it as "PROG: error: MESSAGE" and exits with that code.
 * Nothing below cmd/ exits, but for these, each by bakery_die or exit:
 * lib/cli/ (the programs' own end: usage, --help, --version, cli_exit);
 * bakery_xmalloc and its kin, and the NATS driver (queue_nats.c), when
 * memory is exhausted (EX_OSERR); stripe.c when libcrypto cannot be
 * loaded to sign or hash (EX_UNAVAILABLE); kind.c when more kinds have
 * tables of their own than its table holds, a fault of the build
 * (EX_SOFTWARE); bakery_crash_point(); and a child of external.c that
 * could not exec (_exit). mk/exits (make lint) holds the list; abort()
 * is an assertion, a bug where the code cannot go on, not an exit.
 *
 * Logs. Everything a program writes to stderr is a log record: one line
 * "PROG: LEVEL: EVENT key=value ...", an error "PROG: error: MESSAGE", or,
 * when BAKERY_LOG=json, one JSON object per line with time, prog, level and
 * event (errors carry "message"). When stderr is the journal (JOURNAL_STREAM
 * names stderr's device and inode, as systemd sets it), plain lines start
 * with the syslog priority journald reads: <3> error, <4> warning, <6> info,
 * <7> debug. A JSON line never gets a prefix: it must stay parseable.
 *
 * Time. Every time is UTC. BAKERY_NOW (seconds since the epoch, or
 * YYYY-MM-DDTHH:MM:SSZ) pins the clock so tests never wait for real time.
 */
#ifndef BAKERY_UTIL_H
#define BAKERY_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <sysexits.h>

#include <jv.h>

#define BAKERY_VERSION "0.1.0"

/* A limit's number inside a string literal, from its own macro, so that
 * a message never holds a second copy of the number. */
#define DIGITS_OF(n) DIGITS_OF_(n)
#define DIGITS_OF_(n) #n

/* The program's name, set once by main() through bakery_init(). */
extern const char *bakery_prog;

/* Reopens closed fds 0-2 on /dev/null, ignores SIGPIPE, sets the name. */
void bakery_init(const char *argv0);

/* Records an error message; returns code so callers can `return bakery_fail(...)`. */
int bakery_fail(int code, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
const char *bakery_error(void);

/* Prints one error line on stderr in the log's format, whatever the
 * verbosity: "PROG: error: MSG", or a JSON line with "message". */
void bakery_print_error(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));
/* Whether BAKERY_LOG=json asks for JSON lines on stderr. */
int bakery_log_json(void);

/* Prints "PROG: error: MSG" and exits with code. For cmd/, and below it
 * only where the head of this file says. */
_Noreturn void bakery_die(int code, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Prints bakery_error() and exits with code. */
_Noreturn void bakery_die_last(int code);

enum bakery_level { LOG_ERROR, LOG_WARN, LOG_INFO, LOG_DEBUG };
/* -q and -v move this: errors and warnings show by default. */
extern int bakery_verbosity;
/* Set while a progress line (progress.h) waits on stderr without its
 * newline; a log line ends it first. */
extern int bakery_stderr_midline;
/* Logs EVENT with NULL-terminated key, value string pairs. */
void bakery_log(enum bakery_level level, const char *event, ...)
	__attribute__((sentinel));

/* Flushes and closes stdout; a failed write to stdout is an I/O error,
 * but for EPIPE: a reader gone (a listing cut short by head) is no
 * failure of the program's. */
int bakery_close_stdout(void);
/* bakery_close_stdout for the one answer a caller acts on (what place
 * placed, what pay paid): its reader gone (EPIPE) is an I/O error too. */
int bakery_close_answer(void);

/* Whether s is a valid BAKERY_NOW. */
int bakery_now_valid(const char *s);
/* The last instant bakery stamps: its timestamps have four-digit years
 * (9999-12-31T23:59:59.999Z). A time past it, from BAKERY_NOW or a file,
 * is refused, never carried into arithmetic or text. */
#define BAKERY_TIME_MAX_MS INT64_C(253402300799999)
/* Milliseconds since the epoch, UTC, honouring BAKERY_NOW. */
int64_t bakery_now_ms(void);
/* Milliseconds of CLOCK_MONOTONIC: for a process's own intervals, which a
 * step of the wall clock must not stretch or cut (BAKERY_NOW does not
 * move it). */
int64_t bakery_monotonic_ms(void);
/* "2026-11-30T10:00:00.000Z" (buf >= 32) and "2026-11-30" (buf >= 11). */
void bakery_format_time(int64_t ms, char *buf, size_t size);
void bakery_format_day(int64_t ms, char *buf, size_t size);
/* The time as a JSON string, or null when ms is 0 (never). */
jv bakery_time_jv(int64_t ms);
/* Seconds since the epoch of s's first 19 bytes, YYYY-MM-DDTHH:MM:SS, a
 * moment that exists (not 2026-02-30, not 25:00); -1 when not. *end is
 * where s goes on after them. */
int64_t bakery_parse_datetime(const char *s, const char **end);
/* Accepts a calendar day YYYY-MM-DD that exists. */
int bakery_day_valid(const char *day);

/* Whether len bytes of s are well-formed UTF-8 (RFC 3629: no overlong
 * form, no surrogate, nothing past U+10FFFF). */
int bakery_utf8_valid(const char *s, size_t len);
/* Whether s is text a person gave: 1 to max bytes of valid UTF-8 with no
 * control character (C0, DEL). */
int bakery_text_valid(const char *s, size_t max);

/* Whether s is a currency as Stripe writes one: three lowercase letters. */
int bakery_currency_valid(const char *s);

/* Whether s ends with end ("queue.db-wal", "-wal"). */
int bakery_ends_with(const char *s, const char *end);

/* The one integer parser: s is 1 or more ASCII digits and nothing else
 * (no sign, no blank, no suffix) naming a number from min to max. 0 with
 * *out set, else -1 (empty, malformed, overflowing or out of bounds) and
 * *out untouched; the caller says what it wanted. */
int bakery_parse_number(const char *s, long long min, long long max,
    long long *out);

/* Names of sandboxes, kinds, keys, accounts and ids:
 * [a-z0-9][a-z0-9_.-]{0,63}, no "..". The sizes that hold one: a name
 * and its NUL; an object's address, KIND/KEY, and its NUL. */
#define BAKERY_NAME_MAX 64
#define BAKERY_NAME_SIZE (BAKERY_NAME_MAX + 1)
#define BAKERY_ADDRESS_SIZE (2 * BAKERY_NAME_MAX + 2)
int bakery_name_valid(const char *name);
/* qsort's comparison of two char * by strcmp. */
int bakery_compare_strings(const void *a, const void *b);
/* n bytes of raw as 2n lowercase hex digits and a NUL in out. */
void bakery_hex(const unsigned char *raw, size_t n, char *out);
/* PREFIX + 24 random lowercase hex digits, e.g. "ord_9f2c...". */
void bakery_random_id(const char *prefix, char *buf, size_t size);

/* Kills the process with SIGKILL when BAKERY_CRASH_AT names this point
 * ("NAME" or "NAME:N" for the N-th time the point is passed); stops it
 * with SIGSTOP when BAKERY_STOP_AT does, so that a test can act while the
 * process stands there, and SIGCONT it on. */
void bakery_crash_point(const char *name);

/* malloc, realloc, strdup and asprintf that abort on out of memory
 * instead of returning NULL. */
void *bakery_xmalloc(size_t n);
void *bakery_xrealloc(void *p, size_t n);
char *bakery_xstrdup(const char *s);
char *bakery_xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
