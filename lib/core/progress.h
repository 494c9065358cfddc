/*
 * progress.h — a progress line on stderr for long operations.
 *
 * "PROG: WHAT 3/10" redrawn in place while stderr is a terminal, ending
 * with a newline; nothing at all when stderr is not a terminal (cron,
 * systemd, a pipe) or when logs are JSON lines (BAKERY_LOG=json), so a
 * log never holds carriage returns. Redraws at most every 100 ms, and
 * always at the end. Never touches stdout: stdout is data.
 */
#ifndef BAKERY_PROGRESS_H
#define BAKERY_PROGRESS_H

#include <stdint.h>

typedef struct bakery_progress {
	const char *what; /* "redrive", "wipe": a word, not a sentence */
	long total;       /* 0 when unknown: "3" rather than "3/10" */
	long done;
	int on;           /* stderr is a terminal */
	int64_t drawn_ms; /* when the line was last drawn */
} bakery_progress;

void progress_start(bakery_progress *p, const char *what, long total);
/* One more item done. */
void progress_step(bakery_progress *p);
/* Draws the final count and ends the line, if anything was drawn. */
void progress_end(bakery_progress *p);

#endif
