// plainjob.mjs — B2's peer: plainjob 0.0.14 on better-sqlite3 12 doing
// enqueue + claim + done of N jobs with the same 200-byte payload.
//
//   node plainjob.mjs FILE N full|normal     prints msgs_per_s
//
// plainjob sets journal_mode=WAL and synchronous=NORMAL when it defines
// the queue; the synchronous setting is put back to the one asked for
// right after, so both sides run at the same setting.
import Database from "better-sqlite3";
import { better, defineQueue } from "plainjob";

const [file, count, sync] = process.argv.slice(2);
const n = Number(count);
if (!file || !(n > 0) || !["full", "normal"].includes(sync)) {
	process.stderr.write("usage: node plainjob.mjs FILE N full|normal\n");
	process.exit(64);
}
const db = new Database(file);
const queue = defineQueue({ connection: better(db) });
db.pragma(`synchronous = ${sync === "full" ? "FULL" : "NORMAL"}`);
const payload = { note: "x".repeat(188) }; // 200 bytes as JSON

const t0 = process.hrtime.bigint();
for (let i = 0; i < n; i++)
	queue.add("bench", payload);
let done = 0;
for (;;) {
	const job = queue.getAndMarkJobAsProcessing("bench");
	if (!job)
		break;
	queue.markJobAsDone(job.id);
	done++;
}
const s = Number(process.hrtime.bigint() - t0) / 1e9;
if (done !== n) {
	process.stderr.write(`plainjob.mjs: error: ${done} of ${n} jobs done\n`);
	process.exit(70);
}
process.stdout.write(`msgs_per_s ${(n / s).toFixed(1)}\n`);
queue.close();
db.close();
