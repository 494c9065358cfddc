/*
 * progress.c — a progress line on stderr, only on a terminal.
 */
#include "progress.h"
#include "../base/util.h"

#include <stdio.h>
#include <time.h>
#include <unistd.h>

static void
draw(bakery_progress *p)
{
	if (p->total)
		fprintf(stderr, "\r%s: %s %ld/%ld", bakery_prog, p->what,
		    p->done, p->total);
	else
		fprintf(stderr, "\r%s: %s %ld", bakery_prog, p->what, p->done);
	fflush(stderr);
	bakery_stderr_midline = 1;
	p->drawn_ms = bakery_monotonic_ms();
}

void
progress_start(bakery_progress *p, const char *what, long total)
{
	p->what = what;
	p->total = total > 0 ? total : 0;
	p->done = 0;
	p->drawn_ms = 0;
	p->on = isatty(STDERR_FILENO) && !bakery_log_json() &&
	    bakery_verbosity > LOG_ERROR;
	if (p->on)
		draw(p);
}

void
progress_step(bakery_progress *p)
{
	p->done++;
	if (p->on && bakery_monotonic_ms() - p->drawn_ms >= 100)
		draw(p);
}

void
progress_end(bakery_progress *p)
{
	if (!p->on)
		return;
	draw(p);
	fputc('\n', stderr);
	bakery_stderr_midline = 0;
	p->on = 0;
}
