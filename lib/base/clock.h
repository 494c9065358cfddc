/*
 * clock.h — the clock, and times written and read.
 *
 * Owns: the time bakery reads (bakery_now_ms), BAKERY_NOW, which pins it,
 * and the one form a time is written and read in.
 *
 * Promises: every time is UTC. BAKERY_NOW (seconds since the epoch, or
 * YYYY-MM-DDTHH:MM:SSZ) pins the clock so tests never wait for real time;
 * a BAKERY_NOW that is not valid leaves the clock alone. A date read is
 * one that exists (not 2026-02-30, not 25:00), and no time past
 * BAKERY_TIME_MAX_MS is read.
 */
#ifndef BAKERY_CLOCK_H
#define BAKERY_CLOCK_H

#include <stddef.h>
#include <stdint.h>

#include <jv.h>

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

#endif
