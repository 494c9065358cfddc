/*
 * store.h — the storage layer's rooms, for those who use them:
 *   home.h      the home folder, its layout, paths, sandbox locks;
 *   database.h  a SQLite file opened safely, transactions, statements;
 *   schema.h    schema versions and migrations;
 *   wal.h       the journal mode and files in WAL.
 * An object's file, its kinds and addresses are the machinery's
 * (kind.h, object.h).
 */
#ifndef BAKERY_STORE_H
#define BAKERY_STORE_H

#include <jv.h>
#include <sqlite3.h>

#include "database.h"
#include "home.h"
#include "schema.h"
#include "wal.h"

/* The context (home, sandbox, settings, open handles) is lib/store/ctx.h's:
 * the storage layer reads its settings and knows nothing of the handles. */
typedef struct bakery_ctx bakery_ctx;

#endif
