/*
 * object.h — one object's file and the one transaction that changes it.
 *
 * An object is a unit of state with storage of its own: one SQLite file
 * (store.h). Its state is one JSON document; beside it live the events it
 * recorded, its outbox, the ids of events it applied (seen), the keys of
 * commands it ran (commands_seen) and its alarm. A kind may keep what
 * grows with every order in rows of tables of its own instead
 * (object_exec, kind.h), which object_show puts back into the state it
 * shows.
 *
 * A change is always:
 *
 *   object_begin(o)                BEGIN IMMEDIATE, state loaded
 *   ... object_set_state(), object_record(), object_mark_seen(),
 *       object_remember_command() ...
 *   object_commit(o)               state, events, outbox rows, seen ids,
 *                                  command keys and the alarm: all or nothing
 *
 * This is invariant 1 (atomic record) and the receiving half of invariant 3
 * (idempotent receivers). No transaction ever spans two objects.
 *
 * In a long-running program (ctx->kept) object_close keeps the connection
 * and its statements for the next object_open of the same file (keep.h);
 * the sandbox's lock is taken at each open and given back at each close
 * all the same.
 *
 * The alarm. A commit that leaves outbox rows arms the object's alarm
 * ctx->alarm_delay_s out. Before the first arming, an entry is written in
 * the alarm index (HOME/alarms.db) so that `bakery-relay --due` finds the
 * object without opening every file; the entry is written before the
 * object commits, so a crash leaves at worst a stale entry, never an armed
 * alarm nobody can find. A file being made writes its own entry whatever
 * it finds, and an alarm run removes the entry of an object with no file
 * only under its making's lock (relay.c, drop_if_unborn).
 */
#ifndef BAKERY_OBJECT_H
#define BAKERY_OBJECT_H

#include <stdint.h>

#include <jv.h>
#include <sqlite3.h>

#include "../base/util.h"
#include "../store/store.h"
#include "kind.h"

typedef struct bakery_object {
	bakery_ctx *ctx;
	char sandbox[BAKERY_NAME_SIZE];
	char address[BAKERY_ADDRESS_SIZE];
	char kind[BAKERY_NAME_SIZE];
	char key[BAKERY_NAME_SIZE];
	const object_kind *desc; /* its kind's descriptor */
	sqlite3 *db;
	jv state;     /* jv_null() when the object has no state yet */
	int dirty;    /* state changed in this transaction: commit stores it */
	int recorded; /* events recorded in this transaction */
	/* Where its file stands, from its making to its first commit
	 * (birth.h): a new file's schema is written in a transaction
	 * object_open leaves open, which object_begin takes over, so that the
	 * first change commits with the schema; a rollback keeps the schema
	 * and drops the change. */
	birth birth;
	/* The sandbox's lock, held shared while the object is open, so that
	 * a wipe never sets its fence and moves the folder aside while the
	 * object is open (home_lock_sandbox). */
	int lock_fd;
	/* The sandbox's clock floor (wipe.h): no event is stamped earlier. */
	int64_t floor_ms;
	db_stmts stmts; /* object_prepare */
} bakery_object;

/* create=0: EX_NOINPUT when the object's file does not exist. A file
 * created here gets its schema in the transaction object_begin continues. */
int object_open(bakery_ctx *ctx, const char *sandbox, const char *address,
    int create, bakery_object **o);
void object_close(bakery_object *o);
/* Opens the object's file again after its first commit made it (the
 * connection of its private copy is closed then); 0 when open already. */
int object_connect(bakery_object *o);
/* 0 when the object's file, made by its first commit inside a group of
 * births (birth.h), has its name (its group settled first if need be); its
 * failure when it could not: that commit is lost. 0 for any other. */
int object_settled(bakery_object *o);

int object_begin(bakery_object *o);
int object_commit(bakery_object *o);
void object_rollback(bakery_object *o);

/* A savepoint within the transaction, for one of several changes made in
 * it (a subscriber applying the events of a batch): object_rollback_to()
 * undoes the rows written since object_savepoint() and restores the state,
 * keeping the transaction and what came before; object_release() keeps
 * both. Either ends the savepoint. They return nonzero when the
 * transaction itself is gone (SQLite rolls it back whole on some errors,
 * a full disk among them): nothing of it will commit. */
typedef struct object_savepoint {
	jv state;
	int dirty;
	int recorded;
} object_saved;
int object_savepoint(bakery_object *o, object_saved *sp);
int object_release(bakery_object *o, object_saved *sp);
int object_rollback_to(bakery_object *o, object_saved *sp);

/* Arms the alarm in a transaction of its own when the outbox holds rows:
 * a command whose send was refused leaves them to the alarm. */
int object_arm(bakery_object *o);

/* Reads the state outside a write transaction. */
int object_load(bakery_object *o);
/* Consumes state. */
void object_set_state(bakery_object *o, jv state);

/* 1 when the event id was applied here before. */
int object_seen(bakery_object *o, const char *event_id);
int object_mark_seen(bakery_object *o, const char *event_id, const char *type);

/* 1 and *result when key was run before; 0 when not. */
int object_command_result(bakery_object *o, const char *key, jv *result);
/* Consumes result. */
int object_remember_command(bakery_object *o, const char *key, jv result);

/* Records an event: one row in events, in the outbox until it is relayed.
 * Consumes data; *env (if not NULL) receives a copy of the envelope. */
int object_record(bakery_object *o, const char *type, jv data, jv *env);

/* The alarm row: fire_at 0 when disarmed; rearms counted on day. */
typedef struct object_alarm {
	int64_t fire_at;
	int rearms;
	char day[11];
} object_alarm;
int object_alarm_get(bakery_object *o, object_alarm *a);
/* A re-arm count belongs to one UTC day: rearms until the UTC day of
 * now_ms is past day (may be NULL: 0), else 0. The one copy of the rule, for the relay
 * that counts, and for object_show and bakery-status that report. */
long object_rearms_today(const char *day, long rearms, int64_t now_ms);
/* Inside a transaction. */
int object_alarm_set(bakery_object *o, const object_alarm *a);

/* The envelopes the object recorded, oldest first (jv array). */
int object_events(bakery_object *o, jv *out);
/* {"address","sandbox","state","seen","outbox","alarm"}; the state holds
 * the kind's rows too (its descriptor's rows). */
/* The state of the object at address in sandbox (not NULL), read through
 * a connection that writes nothing, its kind's rows left out: jv_null
 * when it has no file or no state. For one object's look at another's
 * record (an order at its Billing's): no lock, nothing kept open. */
int object_peek(bakery_ctx *ctx, const char *sandbox, const char *address,
    jv *state);
int object_show(bakery_object *o, jv *out);
/* Up to limit records of the object's list (kind.h, .arrays) as a jv
 * array, in the order they came, from the one after the record of order
 * after (NULL: from the first): a long list read a page at a time.
 * EX_USAGE for a list the kind does not keep, EX_NOINPUT for an after
 * the list does not hold. */
int object_list_rows(bakery_object *o, const char *list, const char *after,
    long long limit, jv *out);
/* *has: whether the object's list holds a record of order. */
int object_list_has(bakery_object *o, const char *list, const char *order,
    int *has);

/* Runs a statement inside the object's transaction, for the kinds that
 * keep rows in tables of their own. args is a jv array of the parameters ?1, ?2, ...: strings
 * bind as text, whole numbers as integers, other numbers as reals, arrays
 * and objects as their JSON text, anything else (null, a missing value)
 * as NULL. Consumes args. *changes (if not NULL) receives the rows the
 * statement changed. object_show shows those rows inside the state. */
int object_exec(bakery_object *o, const char *sql, jv args, int *changes);
/* A statement on the object's connection, kept for the next use: bakery
 * exit code (the failure recorded); object_finish when done with it. */
int object_prepare(bakery_object *o, const char *sql, sqlite3_stmt **st);
void object_finish(bakery_object *o, sqlite3_stmt *st);

/* Lists the sandbox's objects as "KIND/KEY" strings (jv array). A folder
 * it cannot read is left out, unsaid. */
int object_list(bakery_ctx *ctx, const char *sandbox, jv *out);
/* object_list, of the kind only (NULL: of every kind), and what it
 * could not read in *unread: a jv array of {"address","file","error",
 * "code"}, here each folder (the sandbox's, a kind's) that could not be
 * opened, its address null, with what failed (naming it) and the exit
 * code that says it. The listing goes on past each; a sandbox without a
 * folder is no failure, it has no objects. A listing that reads each
 * object it lists adds the files it could not read (object_unread_add),
 * so that one is said, never dropped unsaid. */
int object_list_unread(bakery_ctx *ctx, const char *sandbox,
    const char *only, jv *out, jv *unread);
/* unread with {"address","file","error","code"} appended; address NULL
 * for a folder. Consumes unread. */
jv object_unread_add(jv unread, const char *address, const char *file,
    const char *error, int code);

#endif
