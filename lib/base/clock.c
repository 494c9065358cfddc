/*
 * clock.c — the clock, BAKERY_NOW, and times written and read (clock.h).
 */
#define _GNU_SOURCE
#include "clock.h"
#include "text.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jv.h>

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
