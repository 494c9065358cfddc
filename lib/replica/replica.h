/*
 * replica.h — a replicated home: its role, its NATS connection, its
 * stream, and the sink every commit of a primary is recorded through.
 *
 * A home whose queue is nats:// may have a standby on a second host
 * (docs/adr/0011-a-standby-on-jetstream.md). HOME/.replica says which
 * this home is: the primary, whose every commit is recorded in the
 * stream BAKERY_REPLICA before anything of it leaves the host (the
 * capture: lib/store/capture.h), or the standby, which applies the
 * stream (standby.h) and refuses every other writer. Without the file
 * the home is not replicated and pays nothing.
 *
 * Owns: HOME/.replica, the connection the records go through, the
 * stream and the lease's bucket made or moved to an epoch, a record
 * published and its answer classified (sent, fenced, unreachable).
 */
#ifndef BAKERY_REPLICA_H
#define BAKERY_REPLICA_H

#include "../lazy/lazy_nats.h"

#include <pthread.h>

typedef struct bakery_ctx bakery_ctx;

#define REPLICA_STREAM "BAKERY_REPLICA"
#define REPLICA_LEASE_BUCKET "BAKERY_REPLICA_LEASE"
#define REPLICA_LEASE_KEY "primary"
#define REPLICA_PREFIX "bakery.replica"
/* 16 lowercase hex digits and a NUL: a host's id, an epoch. */
#define REPLICA_ID_SIZE 17

enum replica_role { REPLICA_NONE, REPLICA_PRIMARY, REPLICA_STANDBY };

typedef struct replica_conf {
	enum replica_role role;
	char host[REPLICA_ID_SIZE];  /* this home's id, made once */
	char epoch[REPLICA_ID_SIZE]; /* the primary's epoch; "none" */
} replica_conf;

/* HOME/.replica read: role REPLICA_NONE when there is none; a file
 * bakery did not write (a bad line, a symlink, too long) EX_CONFIG. */
int replica_conf_read(bakery_ctx *ctx, replica_conf *c);
/* HOME/.replica put in place whole, synced (file_put), 0600. */
int replica_conf_write(bakery_ctx *ctx, const replica_conf *c);
/* A new id: 16 random lowercase hex digits. */
void replica_new_id(char out[REPLICA_ID_SIZE]);
/* 1 when s is an id replica_new_id could have made. */
int replica_id_valid(const char *s);

/* The connection records go through, made from ctx->queue_url (which
 * must be nats://: EX_CONFIG else). */
typedef struct replica_nats {
	natsConnection *nc;
	jsCtx *js;
	int servers; /* in the URL: the stream's replicas, up to 3 */
	/* Publishes not waited for (a --batch group's records): how many
	 * since the last wait, and the first failure the stream answered
	 * (set on the client's thread, under mu). */
	pthread_mutex_t mu;
	long async_sent;
	natsStatus async_err;
	char async_error[256];
} replica_nats;
int replica_connect(bakery_ctx *ctx, replica_nats **out);
void replica_disconnect(replica_nats *rn);
/* The stream made (replicas: 0 for one a server in the URL, up to 3)
 * or, when it is there, moved to take epoch's subjects only: from then
 * on a publish of another epoch finds no stream. The lease's bucket
 * made too. */
int replica_stream_epoch(replica_nats *rn, const char *epoch, int replicas);
/* bakery.replica.EPOCH.TOK for the file at relpath (relative to the
 * home: '.' written '~', '/' written '.'): 0, or EX_SOFTWARE when it
 * does not fit. */
int replica_subject(const char *epoch, const char *relpath, char *buf,
    size_t size);

/* At ctx_init: the home's role read; a primary's commits are recorded
 * from then on (the capture's sink set on ctx), a standby's writers
 * refused (home_make_for), unless ctx->replica_applying. */
int replica_attach(bakery_ctx *ctx);
/* The sink and its connection closed (ctx_free). */
void replica_detach(bakery_ctx *ctx);

#endif
