/*
 * alarm.h — the alarm index: which objects may have an alarm due.
 *
 * The truth is each object's own alarm row (object.c). The index,
 * HOME/alarms.db, only lets `bakery-relay --due` find due objects at a cost
 * that grows with the number of due alarms, not with the number of objects.
 * An entry is added before the object that arms commits and removed only
 * after an alarm run has looked at the object, so a crash at any point
 * leaves at worst a stale entry (one extra open), never a lost alarm.
 */
#ifndef BAKERY_ALARM_H
#define BAKERY_ALARM_H

#include <stdint.h>

#include "store.h"

int alarm_index_add(bakery_ctx *ctx, const char *sandbox, const char *address,
    int64_t fire_at);
int alarm_index_remove(bakery_ctx *ctx, const char *sandbox,
    const char *address);

#endif
