/*
 * checker.c — reads every object, queue and dead-letter store of a home and
 * says, per event, what became of it, in Jepsen's total-queue categories.
 *
 *   checker [--drained] [--deliveries FILE]... [--placed FILE] [--paid FILE]
 *           [-v] HOME
 *
 * Every fact goes into an in-memory SQLite database first (each file is
 * attached read-only and copied with SQL, JSON included; an object file
 * must have a schema version this bakery reads, 0.1.0's (3: the lists
 * arrays of the state) or its own (4: the lists tables), and queue.db its
 * own (2, 0.1.0's too); one with no schema, whose creation never
 * committed, is skipped); the categories are then queries over it:
 *
 *   recorded     an event row in some object's `events` table
 *   lost         recorded, not applied at every routed subscriber, not
 *                dead-lettered, not pending (outbox row or queue message);
 *                also an order a client saw placed (--placed) or paid
 *                (--paid) without its OrderPlaced or PaymentSucceeded, and
 *                an order that applied a PaymentSucceeded without an
 *                OrderPaid
 *   unexpected   an id in a `seen` table that no object recorded, or an
 *                effect (card, confirmed card, ticket, hold, reservation,
 *                receipt, stop, customer order) for an order without the
 *                event behind it applied at that object
 *   duplicated   deliveries beyond the first: from the queue's counters of
 *                messages still there and from consumers' output lines
 *                (--deliveries), so a lower bound
 *   applied_twice  an effect twice: two holds, reservations, receipts,
 *                stops or customer entries for one order, a hold beside a
 *                reservation, a CRM count above the OrderPaid events the CRM
 *                applied, or two OrderPaid recorded for one order. The
 *                kitchen's cards and tickets are rows keyed by order, so a
 *                second application adds none; the CRM's count, which each
 *                application raises, is where one shows
 *   recovered    applied everywhere, after a duplicate delivery or a redrive
 *
 *   stuck        pending or dead-lettered, not applied everywhere; and
 *                every outbox event of an object whose alarm is armed
 *                with no entry in the alarm index (alarms_unfound: no
 *                alarm run would ever send it; not counted while the
 *                index awaits a new boot's restore)
 *
 * --drained says everything was drained: a pending or dead-lettered event
 * is then a failure too. Exit 1 on any lost, unexpected or applied twice,
 * on an alarm no alarm run can find (whatever --drained says: the promise
 * is broken as soon as it happens), or, with --drained, on stuck; 0
 * otherwise. Prints one JSON line; with -v each bad event (and each alarm
 * not found) on stderr.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sysexits.h>

#include <jv.h>
#include <sqlite3.h>

#include "../lib/core/kind.h"
#include "../lib/store/store.h"
#include "../lib/flow/routing.h"
#include "../lib/queue/queue-internal.h" /* queue_schema */
#include "../lib/base/util.h"

static sqlite3 *mem;
static int verbose;

static void
die(const char *what)
{
	fprintf(stderr, "checker: error: %s: %s\n", what, sqlite3_errmsg(mem));
	exit(EX_SOFTWARE);
}

static void
exec(const char *sql)
{
	char *err = NULL;
	if (sqlite3_exec(mem, sql, NULL, NULL, &err) != SQLITE_OK) {
		fprintf(stderr, "checker: error: %s\n  in: %.200s\n", err, sql);
		exit(EX_SOFTWARE);
	}
}

static long
one(const char *sql)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(mem, sql, -1, &st, NULL) != SQLITE_OK)
		die(sql);
	long v = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
	sqlite3_finalize(st);
	return v;
}

static const char schema[] =
	"CREATE TABLE recorded(id TEXT PRIMARY KEY, type TEXT, sandbox TEXT,"
	"  source TEXT, envelope TEXT, ord TEXT, customer TEXT, copies INT);"
	"CREATE TABLE routes(id TEXT, address TEXT);"
	"CREATE TABLE applied(id TEXT, address TEXT, type TEXT);"
	"CREATE TABLE pending(id TEXT, place TEXT);"
	"CREATE TABLE dead(id TEXT, sandbox TEXT);"
	"CREATE TABLE redriven(id TEXT);"
	"CREATE TABLE delivered(id TEXT, n INT);"
	"CREATE TABLE effects(address TEXT, what TEXT, ord TEXT, n INT);"
	"CREATE TABLE crm(address TEXT, customer TEXT, orders INT);"
	"CREATE TABLE expected(what TEXT, ord TEXT);"
	"CREATE TABLE armed(address TEXT PRIMARY KEY, fire_at INT);"
	"CREATE TABLE indexed(address TEXT PRIMARY KEY);"
	"CREATE TABLE files(path TEXT);";

/* Arrays of records keyed by order in the state, per kind; and the kinds
 * whose effects are rows of their own tables. Checked against the kinds'
 * descriptors (kind.h) at every start: a kind renamed or gone would
 * leave its effects uncounted, and every event routed to it lost. */
static const struct { const char *kind, *list, *what; } arrays[] = {
	{ "schedule", "holds", "hold" },
	{ "schedule", "reservations", "reservation" },
	{ "inbox", "receipts", "receipt" },
	{ "customer", "orders", "customer-order" },
	{ "dispatch", "stops", "stop" },
	{ NULL, NULL, NULL },
};
static const char *const row_kinds[] = { "kitchen", "crm", NULL };

static void
check_kind(const char *kind)
{
	if (kind_find(kind))
		return;
	fprintf(stderr, "checker: error: it reads the kind '%s', which bakery "
	    "does not have (lib/objects/kinds.c)\n", kind);
	exit(EX_SOFTWARE);
}

static void
check_kinds(void)
{
	for (int i = 0; arrays[i].kind; i++) {
		check_kind(arrays[i].kind);
		const object_kind *k = kind_find(arrays[i].kind);
		int listed = 0;
		for (size_t j = 0; k->arrays && k->arrays[j]; j++)
			listed |= strcmp(k->arrays[j], arrays[i].list) == 0;
		if (!listed) {
			fprintf(stderr, "checker: error: it reads the list '%s' "
			    "of the kind '%s', which has no such list (kind.h, "
			    ".arrays)\n", arrays[i].list, arrays[i].kind);
			exit(EX_SOFTWARE);
		}
	}
	for (int i = 0; row_kinds[i]; i++)
		check_kind(row_kinds[i]);
}

/* Whether the attached file has a table named name. */
static int
list_table(const char *name)
{
	sqlite3_stmt *st;
	int has = sqlite3_prepare_v2(mem, "SELECT 1 FROM o.sqlite_master WHERE"
	    " type = 'table' AND name = ?1", -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW;
	sqlite3_finalize(st);
	return has;
}

/* Copies one attached object file (schema `o`) into the tables. */
static void
load_object(const char *sandbox, const char *kind, const char *key)
{
	char *addr = sqlite3_mprintf("%s/%s/%s", sandbox, kind, key);
	char *sql = sqlite3_mprintf(
	    "INSERT OR IGNORE INTO recorded SELECT id, type, %Q, %Q, envelope,"
	    "  json_extract(envelope, '$.data.order'),"
	    "  json_extract(envelope, '$.data.customer'), 1 FROM o.events;"
	    "INSERT INTO applied SELECT event_id, %Q, type FROM o.seen;"
	    "INSERT INTO pending SELECT event_id, 'outbox ' || %Q FROM o.outbox;"
	    "INSERT INTO armed SELECT %Q, fire_at FROM o.alarm WHERE fire_at > 0;",
	    sandbox, addr, addr, addr, addr);
	exec(sql);
	sqlite3_free(sql);
	for (int i = 0; arrays[i].kind; i++) {
		if (strcmp(arrays[i].kind, kind) != 0)
			continue;
		/* A list is a table of the file (kind.h, .arrays); in a file
		 * of version 3, an array of its state. */
		sql = list_table(arrays[i].list)
		    ? sqlite3_mprintf("INSERT INTO effects SELECT %Q, %Q,"
			"  order_id, count(*) FROM o.\"%w\" GROUP BY 3", addr,
			arrays[i].what, arrays[i].list)
		    : sqlite3_mprintf("INSERT INTO effects SELECT %Q, %Q,"
			"  json_extract(e.value, '$.order'), count(*)"
			" FROM o.state, json_each(o.state.json, '$.' || %Q) e"
			" GROUP BY 3", addr, arrays[i].what, arrays[i].list);
		exec(sql);
		sqlite3_free(sql);
	}
	/* The kitchen's and the CRM's rows: a card needs its OrderPlaced, a
	 * confirmed card and a ticket their OrderPaid (unexpected_ids). */
	if (strcmp(kind, "kitchen") == 0) {
		sql = sqlite3_mprintf("INSERT INTO effects SELECT %Q, 'card',"
		    " order_id, count(*) FROM o.cards GROUP BY 3;"
		    "INSERT INTO effects SELECT %Q, 'confirmed card',"
		    " order_id, count(*) FROM o.cards WHERE status = 'confirmed'"
		    " GROUP BY 3;"
		    "INSERT INTO effects SELECT %Q, 'ticket',"
		    " order_id, count(*) FROM o.tickets GROUP BY 3",
		    addr, addr, addr);
		exec(sql);
		sqlite3_free(sql);
	}
	if (strcmp(kind, "crm") == 0) {
		sql = sqlite3_mprintf("INSERT INTO crm SELECT %Q, customer,"
		    " orders FROM o.crm_customers", addr);
		exec(sql);
		sqlite3_free(sql);
	}
	sqlite3_free(addr);
}

static void
attach(const char *path)
{
	char *sql = sqlite3_mprintf("ATTACH 'file:%q?mode=ro' AS o", path);
	exec(sql);
	sqlite3_free(sql);
	sql = sqlite3_mprintf("INSERT INTO files VALUES (%Q)", path);
	exec(sql);
	sqlite3_free(sql);
}

/* The attached file has a schema this checker reads: from def's
 * read_from on. For an object file that is version 3, the one 0.1.0
 * wrote (the outbox a view, the kitchen's and the CRM's rows), and 4 (the
 * lists rows too); for queue.db 2, the one 0.1.0 wrote and this bakery's.
 * An older one only a bakery before 0.1.0 made, and none migrates it; a
 * newer one is a later bakery's, whose tables the checker may misread.
 * Either is refused, exit 78. Version 0 is a file whose creation never
 * committed (schema.c: "not a bakery file yet", as bakery-show and the
 * lists treat it): 0, and the file is skipped; an order promised in it is
 * lost by --placed. */
static int
check_version(const char *path, const schema_def *def)
{
	long version = one("PRAGMA o.user_version");
	if (version == 0 && one("SELECT count(*) FROM o.sqlite_schema") == 0)
		return 0;
	if (version >= 1 && version < def->oldest) {
		fprintf(stderr, "checker: error: %s: schema version %ld was "
		    "made by a bakery before 0.1.0, and no release migrates "
		    "it\n", path, version);
		exit(EX_CONFIG);
	}
	if (version < def->read_from || version > def->count) {
		fprintf(stderr, "checker: error: %s: schema version %ld, the "
		    "checker reads %d to %d\n", path, version,
		    def->read_from, def->count);
		exit(EX_CONFIG);
	}
	return 1;
}

static void
detach(void)
{
	exec("DETACH o");
}

static int
is_dir(const char *path)
{
	struct stat sb;
	return stat(path, &sb) == 0 && S_ISDIR(sb.st_mode);
}

static int
exists(const char *path)
{
	struct stat sb;
	return stat(path, &sb) == 0;
}

static void
load_sandbox(const char *home, const char *sandbox)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/%s/sandbox.db", home, sandbox);
	if (exists(path)) {
		attach(path);
		char *sql = sqlite3_mprintf(
		    "INSERT INTO dead SELECT event_id, %Q FROM o.dead_letters;"
		    "INSERT INTO redriven SELECT event_id FROM o.redrives;",
		    sandbox);
		exec(sql);
		sqlite3_free(sql);
		detach();
	}
	/* Every kind's folder (kind.h): a kind it did not read would count
	 * every event routed to it as lost. */
	for (int k = 0; object_kinds[k]; k++) {
		const char *kind = object_kinds[k]->name;
		char dir[2600];
		snprintf(dir, sizeof dir, "%s/%s/%s", home, sandbox, kind);
		DIR *d = opendir(dir);
		if (!d)
			continue;
		struct dirent *e;
		while ((e = readdir(d))) {
			size_t n = strlen(e->d_name);
			if (n < 4 || strcmp(e->d_name + n - 3, ".db") != 0)
				continue;
			char key[256];
			snprintf(key, sizeof key, "%.*s", (int)(n - 3), e->d_name);
			snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
			attach(path);
			if (check_version(path, &object_schema))
				load_object(sandbox, kind, key);
			detach();
		}
		closedir(d);
	}
}

static void
load_queue(const char *home)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/queue.db", home);
	if (!exists(path))
		return;
	attach(path);
	if (!check_version(path, &queue_schema)) {
		detach();
		return;
	}
	exec("INSERT INTO pending SELECT id, 'queue ' || queue FROM o.messages"
	     "  WHERE queue = 'bakery-events';"
	     /* A DLQ message not yet drained is a dead letter on its way. */
	     "INSERT INTO dead SELECT id, sandbox FROM o.messages"
	     "  WHERE queue = 'bakery-events-dlq';"
	     "INSERT INTO delivered SELECT id, deliveries FROM o.messages"
	     "  WHERE queue = 'bakery-events' AND deliveries > 0;"
	     "INSERT INTO delivered SELECT id, attempts FROM o.messages"
	     "  WHERE queue = 'bakery-events-dlq';");
	detach();
}

/* The alarm index's entries, when it holds every entry of this boot (the
 * boot row: alarm.c); otherwise its next alarm run restores it, and an
 * armed alarm without an entry is no fault yet: every one counts as
 * indexed. */
static void
load_alarm_index(const char *home)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/alarms.db", home);
	if (!exists(path)) {
		exec("INSERT INTO indexed SELECT address FROM armed");
		return;
	}
	attach(path);
	const char *env = getenv("BAKERY_BOOT_ID");
	char boot[80] = "";
	FILE *f = env && *env ? NULL : fopen("/proc/sys/kernel/random/boot_id", "re");
	snprintf(boot, sizeof boot, "%s", env && *env ? env : "");
	if (f && fgets(boot, sizeof boot, f))
		boot[strcspn(boot, "\n")] = '\0';
	if (f)
		fclose(f);
	char *sql = sqlite3_mprintf("SELECT %Q = '' OR EXISTS (SELECT 1 FROM"
	    " o.boot WHERE boot_id = %Q)", boot, boot);
	long current = one(sql);
	sqlite3_free(sql);
	exec(current ? "INSERT OR IGNORE INTO indexed SELECT sandbox || '/' ||"
	    " address FROM o.alarms" :
	    "INSERT INTO indexed SELECT address FROM armed");
	detach();
}

/* Consumers' output: one JSON line per delivery, {"id","delivery",...}. */
static void
load_deliveries(const char *file)
{
	FILE *f = fopen(file, "r");
	if (!f) {
		perror(file);
		exit(EX_NOINPUT);
	}
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(mem, "INSERT INTO delivered"
		" SELECT json_extract(?1, '$.id'), json_extract(?1, '$.delivery')"
		" WHERE json_valid(?1) AND json_extract(?1, '$.delivery') > 0",
		-1, &st, NULL) != SQLITE_OK)
		die("deliveries");
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	while ((len = getline(&line, &cap, f)) > 0) {
		sqlite3_bind_text(st, 1, line, (int)len, SQLITE_STATIC);
		sqlite3_step(st);
		sqlite3_reset(st);
	}
	free(line);
	sqlite3_finalize(st);
	fclose(f);
}

/* A file of order ids (the last word of each line) a client was told were
 * placed or paid. */
static void
load_expected(const char *what, const char *file)
{
	FILE *f = fopen(file, "r");
	if (!f) {
		perror(file);
		exit(EX_NOINPUT);
	}
	char line[512];
	while (fgets(line, sizeof line, f)) {
		line[strcspn(line, "\r\n")] = '\0';
		char *word = strrchr(line, ' ');
		word = word ? word + 1 : line;
		if (!*word)
			continue;
		char *sql = sqlite3_mprintf("INSERT INTO expected VALUES (%Q, %Q)",
		    what, word);
		exec(sql);
		sqlite3_free(sql);
	}
	fclose(f);
}

/* Where each recorded event should be applied, from the routing table of
 * home (the home's routes). */
static void
compute_routes(bakery_ctx *home)
{
	sqlite3_stmt *st, *ins;
	if (sqlite3_prepare_v2(mem, "SELECT id, sandbox, envelope FROM recorded",
		-1, &st, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(mem, "INSERT INTO routes VALUES (?1, ?2)", -1,
		&ins, NULL) != SQLITE_OK)
		die("routes");
	exec("BEGIN");
	while (sqlite3_step(st) == SQLITE_ROW) {
		const char *id = (const char *)sqlite3_column_text(st, 0);
		const char *sandbox = (const char *)sqlite3_column_text(st, 1);
		const char *text = (const char *)sqlite3_column_text(st, 2);
		jv env = jv_parse(text);
		char addresses[ROUTING_MAX_SUBSCRIBERS][BAKERY_ADDRESS_SIZE];
		size_t n = 0;
		if (jv_is_valid(env) && routing_subscribers(home, env, addresses, &n)
			== 0)
			for (size_t i = 0; i < n; i++) {
				char *a = sqlite3_mprintf("%s/%s", sandbox,
				    addresses[i]);
				sqlite3_bind_text(ins, 1, id, -1, SQLITE_TRANSIENT);
				sqlite3_bind_text(ins, 2, a, -1, sqlite3_free);
				sqlite3_step(ins);
				sqlite3_reset(ins);
			}
		jv_free(env);
	}
	exec("COMMIT");
	sqlite3_finalize(st);
	sqlite3_finalize(ins);
}

static void
report(const char *what, const char *sql)
{
	if (!verbose)
		return;
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(mem, sql, -1, &st, NULL) != SQLITE_OK)
		die(sql);
	while (sqlite3_step(st) == SQLITE_ROW)
		fprintf(stderr, "checker: %s: %s\n", what,
		    (const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
}

/* The analysis, as views over the loaded facts. */
static const char views[] =
	"CREATE INDEX applied_i ON applied(id, address);"
	"CREATE INDEX applied_a ON applied(address, id);"
	"CREATE INDEX recorded_o ON recorded(ord, type);"
	"CREATE INDEX pending_i ON pending(id);"
	"CREATE INDEX dead_i ON dead(id);"
	"CREATE INDEX delivered_i ON delivered(id);"
	"CREATE INDEX routes_i ON routes(id);"
	"CREATE INDEX effects_i ON effects(ord);"
	"CREATE TEMP VIEW missing AS SELECT r.id, r.address FROM routes r"
	"  WHERE NOT EXISTS (SELECT 1 FROM applied a"
	"    WHERE a.id = r.id AND a.address = r.address);"
	"CREATE TEMP VIEW lost_events AS SELECT DISTINCT m.id FROM missing m"
	"  WHERE m.id NOT IN (SELECT id FROM dead)"
	"    AND m.id NOT IN (SELECT id FROM pending);"
	"CREATE TEMP VIEW lost_orders AS"
	"  SELECT x.what || ' ' || x.ord AS id FROM expected x"
	"  WHERE NOT EXISTS (SELECT 1 FROM recorded r WHERE r.ord = x.ord"
	"    AND r.type = CASE x.what WHEN 'placed' THEN 'OrderPlaced'"
	"      ELSE 'PaymentSucceeded' END);"
	/* An order that applied a PaymentSucceeded records its OrderPaid in
	 * the same transaction. */
	"CREATE TEMP VIEW lost_paid AS SELECT 'OrderPaid of ' || r.ord AS id"
	"  FROM applied a JOIN recorded r ON r.id = a.id"
	"  WHERE r.type = 'PaymentSucceeded' AND a.address LIKE '%/order/%'"
	"  AND NOT EXISTS (SELECT 1 FROM recorded p WHERE p.type = 'OrderPaid'"
	"    AND p.ord = r.ord) GROUP BY r.ord;"
	/* An armed alarm with no index entry: no alarm run finds it, and its
	 * outbox waits for the object's next command or the wipe. */
	"CREATE TEMP VIEW unfound AS SELECT address FROM armed"
	"  WHERE address NOT IN (SELECT address FROM indexed);"
	"CREATE TEMP VIEW stuck AS SELECT DISTINCT m.id FROM missing m"
	"  WHERE m.id IN (SELECT id FROM dead) OR m.id IN (SELECT id FROM pending)"
	"  UNION SELECT p.id FROM pending p, unfound u"
	"  WHERE p.place = 'outbox ' || u.address;"
	"CREATE TEMP VIEW unexpected_ids AS"
	"  SELECT 'seen ' || a.id || ' at ' || a.address AS id FROM applied a"
	"  WHERE a.id NOT IN (SELECT id FROM recorded)"
	"  UNION ALL"
	/* An effect needs the event that makes it, applied at that object. */
	"  SELECT e.what || ' of ' || e.ord || ' at ' || e.address FROM effects e"
	"  WHERE e.ord IS NOT NULL AND NOT EXISTS (SELECT 1 FROM applied a"
	"    JOIN recorded r ON r.id = a.id WHERE a.address = e.address"
	"    AND r.ord = e.ord AND r.type = CASE WHEN e.what IN ('card', 'hold')"
	"      THEN 'OrderPlaced' ELSE 'OrderPaid' END);"
	"CREATE TEMP VIEW twice AS"
	"  SELECT e.what || ' x' || e.n || ' of ' || e.ord || ' at ' || e.address"
	"    AS id FROM effects e WHERE e.n > 1"
	"  UNION ALL SELECT 'hold and reservation of ' || h.ord || ' at ' ||"
	"    h.address FROM effects h JOIN effects r ON r.address = h.address"
	"    AND r.ord = h.ord AND h.what = 'hold' AND r.what = 'reservation'"
	"  UNION ALL SELECT 'OrderPaid x' || count(*) || ' of ' || ord FROM"
	"    recorded WHERE type = 'OrderPaid' GROUP BY ord HAVING count(*) > 1"
	"  UNION ALL SELECT 'crm orders ' || c.orders || ' for ' || c.customer"
	"    || ' at ' || c.address FROM crm c WHERE c.orders > (SELECT"
	"    count(DISTINCT r.ord) FROM applied a JOIN recorded r ON r.id = a.id"
	"    WHERE a.address = c.address AND r.customer = c.customer"
	"    AND r.type = 'OrderPaid');"
	"CREATE TEMP VIEW deliveries AS SELECT id, max(count(*), max(n)) AS n"
	"  FROM delivered GROUP BY id;"
	"CREATE TEMP VIEW recovered AS SELECT DISTINCT r.id FROM recorded r"
	"  WHERE r.id NOT IN (SELECT id FROM missing) AND (r.id IN"
	"    (SELECT id FROM redriven) OR r.id IN"
	"    (SELECT id FROM deliveries WHERE n > 1));";

int
main(int argc, char **argv)
{
	int drained = 0;
	const char *home = NULL;
	if (sqlite3_open_v2(":memory:", &mem, SQLITE_OPEN_READWRITE |
		SQLITE_OPEN_CREATE | SQLITE_OPEN_URI, NULL) != SQLITE_OK)
		die("open");
	exec(schema);
	check_kinds();
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--drained") == 0)
			drained = 1;
		else if (strcmp(argv[i], "-v") == 0)
			verbose = 1;
		else if (strcmp(argv[i], "--deliveries") == 0 && i + 1 < argc)
			load_deliveries(argv[++i]);
		else if (strcmp(argv[i], "--placed") == 0 && i + 1 < argc)
			load_expected("placed", argv[++i]);
		else if (strcmp(argv[i], "--paid") == 0 && i + 1 < argc)
			load_expected("paid", argv[++i]);
		else if (argv[i][0] != '-' && !home)
			home = argv[i];
		else {
			fprintf(stderr, "usage: checker [--drained] [--deliveries "
			    "FILE]... [--placed FILE] [--paid FILE] [-v] HOME\n");
			return EX_USAGE;
		}
	}
	if (!home || !is_dir(home)) {
		fprintf(stderr, "checker: error: no such home: '%s'\n",
		    home ? home : "");
		return EX_NOINPUT;
	}
	/* Sandboxes are in HOME/sandboxes (docs/design.md). */
	char root[2048];
	snprintf(root, sizeof root, "%s/sandboxes", home);
	DIR *d = opendir(root);
	struct dirent *e;
	while (d && (e = readdir(d))) {
		char path[2400];
		snprintf(path, sizeof path, "%s/%s", root, e->d_name);
		/* Sandboxes; a wipe's ".wipe-*" folders are on their way out. */
		if (e->d_name[0] != '.' && bakery_name_valid(e->d_name) &&
		    is_dir(path))
			load_sandbox(root, e->d_name);
	}
	if (d)
		closedir(d);
	load_queue(home);
	load_alarm_index(home);
	/* The routes in effect for this home: HOME/routes, or the default. */
	bakery_ctx home_ctx = { 0 };
	home_ctx.home = bakery_xstrdup(home);
	if (routing_load(&home_ctx, NULL)) {
		fprintf(stderr, "checker: error: %s\n", bakery_error());
		return EX_CONFIG;
	}
	compute_routes(&home_ctx);
	ctx_free(&home_ctx);
	exec(views);

	long recorded = one("SELECT count(*) FROM recorded");
	long lost = one("SELECT count(*) FROM lost_events") +
	    one("SELECT count(*) FROM lost_orders") +
	    one("SELECT count(*) FROM lost_paid");
	long unexpected = one("SELECT count(*) FROM unexpected_ids");
	long twice = one("SELECT count(*) FROM twice");
	long dup = one("SELECT coalesce(sum(n - 1), 0) FROM deliveries");
	long recovered = one("SELECT count(*) FROM recovered");
	long stuck = one("SELECT count(*) FROM stuck");
	long pending = one("SELECT count(DISTINCT id) FROM pending");
	long dead = one("SELECT count(DISTINCT id) FROM dead");
	long complete = recorded - one("SELECT count(DISTINCT id) FROM missing");
	report("lost", "SELECT id FROM lost_events UNION ALL"
	    " SELECT id FROM lost_orders UNION ALL SELECT id FROM lost_paid");
	report("unexpected", "SELECT id FROM unexpected_ids");
	report("applied twice", "SELECT id FROM twice");
	long unfound = one("SELECT count(*) FROM unfound");
	if (drained)
		report("stuck", "SELECT m.id || ' at ' || m.address FROM missing m"
		    " WHERE m.id IN (SELECT id FROM stuck)");
	report("stuck", "SELECT address || ': alarm armed, no entry in the"
	    " alarm index' FROM unfound");
	printf("{\"files\":%ld,\"orders\":%ld,\"paid\":%ld,\"recorded\":%ld,"
	    "\"applied\":%ld,\"lost\":%ld,\"unexpected\":%ld,"
	    "\"duplicated\":%ld,\"applied_twice\":%ld,\"recovered\":%ld,"
	    "\"pending\":%ld,\"dead_lettered\":%ld,\"stuck\":%ld,"
	    "\"alarms_unfound\":%ld}\n",
	    one("SELECT count(*) FROM files"),
	    one("SELECT count(*) FROM recorded WHERE type = 'OrderPlaced'"),
	    one("SELECT count(*) FROM recorded WHERE type = 'OrderPaid'"),
	    recorded, complete, lost, unexpected, dup, twice, recovered,
	    pending, dead, stuck, unfound);
	sqlite3_close(mem);
	if (fflush(stdout) != 0)
		return EX_IOERR;
	return lost || unexpected || twice || unfound || (drained && stuck)
	    ? 1 : 0;
}
