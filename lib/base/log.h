/*
 * log.h — errors, logs and the end of a program: everything a bakery
 * program writes to stderr.
 *
 * Owns: the program's name (bakery_prog), the last error's message
 * (bakery_fail, bakery_error), the verbosity, the log's two formats and
 * the journal's priorities, and the close of stdout at the end.
 *
 * Promises: a library function that can fail returns 0 or a sysexits
 * code (EX_USAGE, EX_DATAERR, ...) and leaves a message in
 * bakery_error(); the program prints it as "PROG: error: MESSAGE" and
 * exits with that code. Who may exit below cmd/ is util.h's to say
 * ("Errors"); bakery_die and bakery_die_last are the means.
 *
 * Everything a program writes to stderr is a log record: one line
 * "PROG: LEVEL: EVENT key=value ...", an error "PROG: error: MESSAGE", or,
 * when BAKERY_LOG=json, one JSON object per line with time, prog, level and
 * event (errors carry "message"). When stderr is the journal (JOURNAL_STREAM
 * names stderr's device and inode, as systemd sets it), plain lines start
 * with the syslog priority journald reads: <3> error, <4> warning, <6> info,
 * <7> debug. A JSON line never gets a prefix: it must stay parseable. A
 * value never ends its line or forges another: control characters and
 * invalid UTF-8 are escaped.
 */
#ifndef BAKERY_LOG_H
#define BAKERY_LOG_H

#include <sysexits.h>

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
 * only where the head of util.h says. */
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

#endif
