/*
 * alarm.h — the alarm index: which objects may have an alarm due.
 *
 * The truth is each object's own alarm row (object.c). The index,
 * HOME/alarms.db, only lets `bakery-relay --due` find due objects at a cost
 * that grows with the number of due alarms, not with the number of objects.
 *
 * The rule: an armed alarm always has an index entry that fires no later
 * than it. A command that arms a disarmed alarm, holding the object's write
 * lock, writes an entry before its commit unless an entry for the object
 * already fires no later (the entry an earlier arming left: an outbox
 * emptied by a send disarms the alarm but leaves its entry). An entry is
 * moved or removed only by an alarm run, and removed only while the run
 * holds the object's write lock and sees it disarmed, or once its file is
 * gone; so a command that found an entry under the lock keeps it. Each
 * write of an entry bumps its generation, and an alarm run moves or
 * removes an entry only if the generation is the one it read. A crash at
 * any point leaves at worst a stale entry (one extra open), never an armed
 * alarm that cannot be found.
 */
#ifndef BAKERY_ALARM_H
#define BAKERY_ALARM_H

#include <stddef.h>
#include <stdint.h>

#include "../base/util.h"
#include "../store/store.h"

typedef struct alarm_entry {
	char sandbox[BAKERY_NAME_SIZE];
	char address[BAKERY_ADDRESS_SIZE];
	int64_t fire_at;
	int64_t gen;
	int64_t armed_at; /* when the entry was written; 0: unknown */
} alarm_entry;

/* HOME/alarms.db's schema. */
extern const schema_def alarms_schema;

/* Writes the entry (a new generation) for an alarm being armed. */
int alarm_index_add(bakery_ctx *ctx, const char *sandbox, const char *address,
    int64_t fire_at);
/* Sets *lost when the index may lack entries a power loss took: its
 * commits are not synced (alarm.c), and its boot row is missing or names
 * another boot. Then alarm_index_restore each armed alarm, and
 * alarm_index_booted. */
int alarm_index_boot(bakery_ctx *ctx, int *lost);
/* Writes an armed alarm's entry back, keeping an earlier one. */
int alarm_index_restore(bakery_ctx *ctx, const char *sandbox,
    const char *address, int64_t fire_at);
/* The index holds every entry of this boot: a restore is done. */
int alarm_index_booted(bakery_ctx *ctx);
/* 1 when the index holds an entry for the object firing at or before
 * fire_at, 0 when not (or when the index cannot be read). */
int alarm_index_covers(bakery_ctx *ctx, const char *sandbox,
    const char *address, int64_t fire_at);
/*
 * For a reader that writes nothing (bakery-status, bakery-doctor): the
 * index opened read-only in *db (close it with sqlite3_close), or *db NULL
 * when it cannot tell which armed alarms lack an entry: the index is not
 * made, or it does not hold every entry of this boot (a power loss may
 * have taken some; the next alarm run writes them back from the objects).
 */
int alarm_index_reader(bakery_ctx *ctx, sqlite3 **db);
/* With such a reader: 0 when the index has no entry for the object (an
 * armed alarm then is one no alarm run will fire), else 1 (db NULL
 * included). Any entry counts: one firing later than the alarm it stands
 * for still fires it. */
int alarm_index_has(sqlite3 *db, const char *sandbox, const char *address);
/*
 * Whether the alarm of entry e, whose object says fire_at, is due at now:
 * fire_at has passed, or the entry was written later than now and fires
 * further ahead than an alarm is armed (ctx->alarm_delay_s): the wall
 * clock was stepped back since, and the alarm would otherwise wait for the
 * step too (NTP steps an hour: an hour late). Firing it early only sends
 * an outbox sooner; the sends are idempotent.
 */
int alarm_due(const bakery_ctx *ctx, const alarm_entry *e, int64_t fire_at,
    int64_t now);
/* Whether the UTC day of now is later than day (YYYY-MM-DD): the re-arm
 * count of day is over. A clock stepped back over midnight does not go
 * back to the day before: the count of the later day goes on, so that it
 * is reset once a day, never twice. */
int alarm_day_over(const char *day, int64_t now);
/* Up to max entries due at now (alarm_due), in the order of (fire_at,
 * sandbox, address), from the one after `after` (NULL: from the first):
 * an alarm run pages with the last entry of a page, so that it reads
 * each due entry once, past those it could not fire. */
int alarm_index_due(bakery_ctx *ctx, int64_t now, const alarm_entry *after,
    size_t max, alarm_entry *out, size_t *n);
/* Removes or moves e if its generation is unchanged. */
int alarm_index_remove(bakery_ctx *ctx, const alarm_entry *e);
int alarm_index_move(bakery_ctx *ctx, const alarm_entry *e, int64_t fire_at);
/* The earliest fire_at in the index later than after; 0 when none. */
int alarm_index_next(bakery_ctx *ctx, int64_t after, int64_t *fire_at);
/*
 * With a reader (alarm_index_reader): how many entries of sandbox fire
 * before `before`, and the earliest of them in *oldest. An alarm run
 * moves or removes every entry it fires, so one long past its time is
 * one that no run could fire (an object file the relay's user cannot
 * open) or that no run looked at. db NULL: 0.
 */
int alarm_index_overdue(sqlite3 *db, const char *sandbox, int64_t before,
    long *count, alarm_entry *oldest);
/* Removes every entry of a sandbox (the wipe). */
int alarm_index_remove_sandbox(bakery_ctx *ctx, const char *sandbox);

#endif
