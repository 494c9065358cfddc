/*
 * loop.c — stopping on a signal, and the idle back-off (loop.h).
 */
#include "loop.h"
#include "../net/span.h"

#include <signal.h>
#include <time.h>

static volatile sig_atomic_t stopping;

static void
on_signal(int sig)
{
	(void)sig;
	stopping = 1;
}

void
loop_catch_signals(void)
{
	struct sigaction sa = { .sa_handler = on_signal };
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
}

int
loop_stopping(void)
{
	return stopping;
}

void
loop_sleep_ms(int64_t ms)
{
	struct timespec ts = { (time_t)(ms / 1000), (long)(ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

void
loop_idle_wait(long *idle_ms)
{
	*idle_ms = *idle_ms ? (*idle_ms * 2 > 500 ? 500 : *idle_ms * 2) : 5;
	/* An idle follower sends the spans it holds (span.h). */
	if (span_on())
		span_flush();
	loop_sleep_ms(*idle_ms);
}
