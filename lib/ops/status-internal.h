/*
 * status-internal.h — what status.c takes from the other files of the
 * status and nobody else needs.
 */
#ifndef BAKERY_STATUS_INTERNAL_H
#define BAKERY_STATUS_INTERNAL_H

#include <stdint.h>

#include <jv.h>

#include "../store/store.h"

/*
 * The alarms of sandbox that no alarm run fired: the entries of the
 * index (read-only, NULL: it cannot tell) due more than max_age_s before
 * now. Every entry a run fires is moved or removed, so these are ones a
 * run could not fire (an object file the relay's user cannot open, such
 * as one a command run as root made) or no run looked at. Returns how
 * many; when any, one sentence naming the oldest goes on *attention.
 */
long status_alarms_overdue(sqlite3 *index, const char *sandbox, int64_t now,
    int64_t max_age_s, jv *attention);

#endif
