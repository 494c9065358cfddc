/*
 * dberr.c — the exit code of a failed SQLite or file operation (dberr.h).
 */
#include "dberr.h"
#include "../base/util.h"

#include <errno.h>

int
db_errno_code(int err)
{
	switch (err) {
	case ENOSPC:
	case EDQUOT:
	case EIO:
		return EX_IOERR;
	case EACCES:
	case EPERM:
	case EROFS:
		return EX_NOPERM;
	default:
		return EX_CANTCREAT;
	}
}

int
db_fail(sqlite3 *db, int rc, const char *what)
{
	int code;
	switch (rc & 0xff) {
	case SQLITE_FULL:
	case SQLITE_IOERR:
		code = EX_IOERR;
		break;
	case SQLITE_BUSY:
	case SQLITE_LOCKED:
		code = EX_TEMPFAIL;
		break;
	case SQLITE_CANTOPEN:
		code = EX_CANTCREAT;
		break;
	case SQLITE_NOTADB:
		code = EX_DATAERR; /* a file that is not bakery's */
		break;
	case SQLITE_READONLY:
	case SQLITE_PERM:
	case SQLITE_AUTH:
		code = EX_NOPERM;
		break;
	default:
		code = EX_SOFTWARE;
	}
	return bakery_fail(code, "%s: %s", what,
	    db ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
}
