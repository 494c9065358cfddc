/*
 * crash.c — crash, stop and power-cut points for the tests (crash.h).
 */
#include "crash.h"
#include "log.h"
#include "../store/testvfs.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
	static int kill_hits[64], stop_hits[64], cut_hits[64];
	static const char *kill_names[64], *stop_names[64], *cut_names[64];
	if (point_due("BAKERY_POWERCUT_AT", name, cut_hits, cut_names))
		testvfs_cut_now();
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
