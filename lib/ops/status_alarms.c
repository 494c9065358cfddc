/*
 * status_alarms.c — the alarms no alarm run fired, for bakery-status.
 */
#include "status-internal.h"
#include "../core/alarm.h"
#include "../base/util.h"

#include <stdlib.h>

long
status_alarms_overdue(sqlite3 *index, const char *sandbox, int64_t now,
    int64_t max_age_s, jv *attention)
{
	long n;
	alarm_entry oldest;
	char *s;
	if (alarm_index_overdue(index, sandbox, now - max_age_s * 1000, &n,
		&oldest))
		s = bakery_xasprintf("sandbox %s: %s", sandbox, bakery_error());
	else if (n) {
		char at[32];
		bakery_format_time(oldest.fire_at, at, sizeof at);
		s = bakery_xasprintf("sandbox %s: %ld alarm%s overdue, the "
		    "oldest %s due at %s (%lld s ago): no alarm run fired %s; "
		    "bakery-relay --due says why (77: a file the relay's user "
		    "cannot open, as those a command run as root makes)",
		    sandbox, n, n > 1 ? "s" : "", oldest.address, at,
		    (long long)((now - oldest.fire_at) / 1000),
		    n > 1 ? "them" : "it");
	} else
		return 0;
	*attention = jv_array_append(*attention, jv_string(s));
	free(s);
	return n;
}
