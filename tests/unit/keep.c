/*
 * keep.c — connections kept open: at most max, the least recently used
 * closed first, closed when idle, and never handed back for a file that
 * is no longer the one at the path.
 */
#define _GNU_SOURCE
#include "tap.h"
#include "helpers.h"

#include <time.h>

#include "../../lib/store/keep.h"

static char *home;

static char *
path_of(const char *name)
{
	static char buf[3][4096];
	static int next;
	char *p = buf[next++ % 3];
	snprintf(p, 4096, "%s/%s.db", home, name);
	return p;
}

/* Opens name's file, makes it a SQLite file, and keeps the connection
 * with one prepared statement in its cache. */
static void
put(keep_pool *k, const char *name)
{
	sqlite3 *db;
	sqlite3_open(path_of(name), &db);
	sqlite3_exec(db, "CREATE TABLE IF NOT EXISTS t(x)", NULL, NULL, NULL);
	db_stmts c;
	memset(&c, 0, sizeof c);
	sqlite3_stmt *st;
	db_prepare(db, &c, "SELECT count(*) FROM t", &st);
	db_release(&c, st);
	keep_put(k, path_of(name), db, &c);
}

/* 1 when a connection to name is kept, and puts it back. */
static int
kept(keep_pool *k, const char *name)
{
	sqlite3 *db;
	db_stmts c;
	if (!keep_take(k, path_of(name), &db, &c))
		return 0;
	keep_put(k, path_of(name), db, &c);
	return 1;
}

static void
bound_and_order(void)
{
	keep_pool *k = keep_new(2, 60000);
	put(k, "a");
	put(k, "b");
	is_int(keep_count(k), 2, "two files kept under a bound of two");
	ok(kept(k, "a"), "a is used again (now the most recent)");
	put(k, "c");
	is_int(keep_count(k), 2, "a third file keeps the count at the bound");
	ok(!kept(k, "b"), "  the least recently used, b, was closed");
	ok(kept(k, "a") && kept(k, "c"), "  a and c are kept");
	put(k, "a");
	is_int(keep_count(k), 2, "the same file kept again is one entry");
	keep_free(k);
}

static void
handed_back(void)
{
	keep_pool *k = keep_new(4, 60000);
	put(k, "d");
	sqlite3 *db;
	db_stmts c;
	ok(keep_take(k, path_of("d"), &db, &c), "a kept file is handed back");
	is_int(keep_count(k), 0, "  and is no longer in the pool");
	sqlite3_stmt *st;
	is_int(db_prepare(db, &c, "SELECT count(*) FROM t", &st), SQLITE_OK,
	    "  with its statements");
	ok(c.slot[0].st == st, "  the one it had prepared");
	db_release(&c, st);
	keep_put(k, path_of("d"), db, &c);
	ok(!keep_take(k, path_of("e"), &db, &c), "a file never kept is not");
	keep_free(k);
}

static void
file_gone_or_replaced(void)
{
	keep_pool *k = keep_new(4, 60000);
	put(k, "f");
	put(k, "g");
	/* The folder moved aside by a wipe: the path names nothing. */
	rename(path_of("f"), path_of("f-aside"));
	ok(!kept(k, "f"), "a file moved away is not handed back");
	is_int(keep_count(k), 1, "  its connection is closed");
	/* A new file at the path (a new sandbox's object): another inode. */
	put(k, "f");
	rename(path_of("g"), path_of("g-aside"));
	FILE *fresh = fopen(path_of("g"), "w");
	fclose(fresh);
	ok(!kept(k, "g"), "a file replaced at the path is not handed back");
	ok(kept(k, "f"), "  the other one is");
	keep_free(k);
}

static void
idle(void)
{
	keep_pool *k = keep_new(4, 100);
	put(k, "h");
	keep_idle(k);
	is_int(keep_count(k), 1, "a file used just now stays when idle ones close");
	const struct timespec pause = { 0, 150 * 1000000 };
	nanosleep(&pause, NULL);
	put(k, "i");
	keep_idle(k);
	is_int(keep_count(k), 1, "one not used for the idle time is closed");
	ok(!kept(k, "h") && kept(k, "i"), "  the idle one, not the one just used");
	keep_idle(NULL);
	keep_free(k);
}

int
main(void)
{
	home = tmp_home();
	bound_and_order();
	handed_back();
	file_gone_or_replaced();
	idle();
	rm_home(home);
	return done_testing();
}
