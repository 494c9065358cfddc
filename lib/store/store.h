/*
 * store.h — the storage layer's rooms, for those who use them:
 *   home.h      the home folder, its layout, paths, sandbox locks;
 *   ctx.h       the context: home, sandbox, settings, handles;
 *   database.h  a SQLite file that is there, opened safely;
 *   birth.h     a file that is not there, made: never seen half made;
 *   sql.h       transactions, statements, a failure's exit code;
 *   schema.h    schema versions and migrations;
 *   wal.h       the journal mode and files in WAL.
 * An object's file, its kinds and addresses are the machinery's
 * (kind.h, object.h). No file of the store includes this header: each
 * includes the rooms it uses, so that they include each other one way.
 */
#ifndef BAKERY_STORE_H
#define BAKERY_STORE_H

#include <jv.h>
#include <sqlite3.h>

#include "birth.h"
#include "ctx.h"
#include "database.h"
#include "home.h"
#include "schema.h"
#include "sql.h"
#include "wal.h"

#endif
