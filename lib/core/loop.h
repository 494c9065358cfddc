/*
 * loop.h — the long-running loops' shared pieces: stopping on SIGTERM or
 * SIGINT, and waiting on an idle queue (bakery-consume --follow,
 * bakery-dlq drain --follow, bakery-relay --watch).
 *
 * A signal only sets a flag: the loop finishes the batch in hand (its
 * results printed, its acks sent) and stops at the top of the next turn.
 * No SA_RESTART, so a signal cuts a sleep short.
 */
#ifndef BAKERY_LOOP_H
#define BAKERY_LOOP_H

#include <stdint.h>

/* SIGTERM and SIGINT set the stop flag from now on. */
void loop_catch_signals(void);
/* 1 once SIGTERM or SIGINT arrived. */
int loop_stopping(void);
/* Sleeps ms milliseconds, or less when a signal arrives. */
void loop_sleep_ms(int64_t ms);
/* An idle turn: waits a little longer each time (5, 10, 20 ... up to
 * 500 ms). *idle_ms is 0 after a turn that found work. */
void loop_idle_wait(long *idle_ms);

#endif
