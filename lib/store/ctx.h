/*
 * ctx.h — the context every program carries: the home, the sandbox, the
 * settings read from flags and the environment, and the handles opened on
 * first use (the queue, queue.h's queue_ctx; the alarm index, alarm.h),
 * and the routes in effect (routing.h), loaded on first use.
 *
 * Owns: those handles and the routes; ctx_free closes and frees them, the
 * routes through routes_free, which routing.c sets (this layer knows
 * nothing of routes). Two contexts in one process may hold two tables.
 * The storage layer (home.c, database.c, schema.c, wal.c) reads the
 * settings and paths here and never the handles, so it includes this
 * header and no queue header: layers point down (docs/design.md). This
 * header includes none of the store's: the rooms of the store are in
 * store.h, which each file above the store includes for them.
 */
#ifndef BAKERY_CTX_H
#define BAKERY_CTX_H

#include <sqlite3.h>

typedef struct bakery_ctx bakery_ctx;

/* What home_make has to make before the first file in the home. */
enum home_pending {
	HOME_MADE,      /* nothing: the home and its mark are there */
	HOME_MISSING,   /* the folder, then the mark */
	HOME_UNMARKED,  /* the mark: a folder given empty, or one holding
			 * only bakery's own files */
	HOME_UNRECORDED, /* this bakery's record in the mark, which names
			 * an older bakery or none (0.1.0's) */
	HOME_NEWER,     /* nothing: a newer bakery wrote the home, and
			 * home_make refuses (EX_CONFIG) */
};

/* "99999.99999.99999" and its NUL: the longest version a mark records. */
#define HOME_VERSION_SIZE 18

struct bakery_queue;
struct birth_group;
struct capture_sink;
struct keep_pool;
struct routes;

struct bakery_ctx {
	char *home;            /* an absolute folder (home_init), never NULL */
	char *sandbox;         /* validated name, "default" unless -s */
	char *sandboxes;       /* HOME/sandboxes */
	enum home_pending home_pending; /* the home or its mark to make
				* before the first file in it (home_make) */
	char home_written_by[HOME_VERSION_SIZE]; /* the newest bakery that
				* wrote the home, as its mark says; "" none */
	long long home_mark_ino, home_mark_mtime_ns; /* the mark as
				* home_recheck last read it */
	char *queue_url;       /* NULL means sqlite:HOME/queue.db */
	int look_only;         /* a program that only looks (bakery-status,
				* -trace, -show, -doctor, -queue stats and
				* peek, -wipe --dry-run): it reads a file of
				* the current schema read-only */
	int write_nothing;     /* bakery-doctor: not even the -wal and -shm a
				* reader of a file in WAL makes (database.h) */
	int sync_normal;       /* BAKERY_SYNC=normal: loses commits on power loss */
	int busy_timeout_ms;   /* how long a writer waits for the lock */
	int queue_wait_ms;     /* how long a request to a NATS queue waits
				* for its answer; 0: the driver's own (5 s).
				* Shorter where a command sends its own
				* events (QUEUE_BRIEF_WAIT_MS, queue.h) */
	int alarm_delay_s;     /* an alarm fires this long after the commit */
	int subscriber_timeout_s; /* how long an external subscriber may take
				   * (--subscriber-timeout, external.h) */
	int files_opened;      /* counted so tests can prove O(due) scans */
	struct bakery_queue *queue; /* opened on first use, see queue.h */
	sqlite3 *alarms;       /* the alarm index, opened on first use */
	struct keep_pool *kept; /* objects' connections kept open (keep.h):
				 * NULL but in a long-running program */
	struct birth_group *births; /* new files named together (birth.h):
				 * NULL but inside a group */
	struct capture_sink *replica; /* a primary's commits recorded
				* through it (capture.h); NULL: not
				* replicated */
	int replica_standby;   /* the home is a standby: writers refused */
	int replica_applying;  /* bakery-standby, which writes a standby */
	int replica_batched;   /* records published without waiting, the
				* group's answers waiting for them all
				* (capture_settle): bakery-order --batch */
	int replica_unread;    /* HOME/.replica there but not readable by
				* this user: writers refused, readers read */
	struct routes *routes; /* the routes in effect, loaded on first use */
	void (*routes_free)(struct routes *); /* set with routes */
};

/* Fills ctx from flags (may be NULL) and the environment: BAKERY_SANDBOX,
 * BAKERY_QUEUE, BAKERY_SYNC, BAKERY_BUSY_TIMEOUT_MS, BAKERY_ALARM_DELAY,
 * BAKERY_NOW, BAKERY_LOG are checked here (EX_CONFIG; a bad sandbox name
 * EX_USAGE), then home_init checks the home (a folder that is not
 * bakery's is EX_CONFIG). */
int ctx_init(bakery_ctx *ctx, const char *home, const char *sandbox,
    const char *queue_url);
/* Closes the handles opened on first use and the connections kept, and
 * frees ctx's strings and routes. */
void ctx_free(bakery_ctx *ctx);

#endif
