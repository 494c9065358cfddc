/*
 * store.h — an object's file: its schema, kinds and addresses; and the
 * storage layer's rooms, for those who use them:
 *   home.h      the home folder, its layout, paths, sandbox locks;
 *   database.h  a SQLite file opened safely, transactions, statements;
 *   schema.h    schema versions and migrations;
 *   wal.h       the journal mode and files in WAL.
 */
#ifndef BAKERY_STORE_H
#define BAKERY_STORE_H

#include <jv.h>
#include <sqlite3.h>

#include "database.h"
#include "home.h"
#include "schema.h"
#include "wal.h"

/* The context (home, sandbox, settings, open handles) is lib/ctx.h's:
 * the storage layer reads its settings and knows nothing of the handles. */
typedef struct bakery_ctx bakery_ctx;

extern const schema_def store_object_schema;

/* Splits and checks "KIND/KEY". kind and key must hold 65 bytes. */
int store_parse_address(const char *address, char *kind, char *key);
int store_kind_valid(const char *kind);

/* Opens SANDBOX/KIND/KEY.db for ADDRESS in ctx->sandbox; create as for
 * db_open (object_open passes DB_OPEN_CREATE_BEGUN). */
int store_open_object(bakery_ctx *ctx, const char *sandbox,
    const char *address, int create, sqlite3 **db);

#endif
