// otlp-receiver.mjs — an OTLP/HTTP receiver for the tests: JSON encoding,
// POST /v1/traces, each request checked against OpenTelemetry's own
// protobuf definitions (the protobufjs root that
// @opentelemetry/otlp-transformer ships, 0.52), its spans written to OUT
// as JSON lines.
//
//   node otlp-receiver.mjs MODULES PORTFILE OUT [ok|500|hang]
//
// MODULES is the node_modules folder the package was installed in; the
// port it listens on (127.0.0.1, chosen by the kernel) is written to
// PORTFILE. A request that is not OTLP/JSON is answered 400 and a line
// {"invalid":WHY} is written to OUT, so that a test sees it. 500 answers
// every request 500 (after reading it, a line {"answered":500} in OUT);
// hang never answers. Only ok needs the package (MODULES may be "-").
import { createRequire } from 'node:module';
import { appendFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { resolve } from 'node:path';

const [modules, portFile, out, mode = 'ok'] = process.argv.slice(2);
// The package only for mode ok: hang and 500 need none.
const Request = mode === 'ok' ? createRequire(resolve(modules, 'x.js'))(
	'@opentelemetry/otlp-transformer/build/src/generated/root.js')
	.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest : null;

const HEX = { traceId: 32, spanId: 16, parentSpanId: 16 };

// OTLP/JSON: ids are lowercase hex, not base64; protobufjs's fromObject
// takes bytes as base64, so they are mapped, and checked as they go.
function ids(o, where) {
	for (const [k, n] of Object.entries(HEX)) {
		if (!(k in o))
			continue;
		if (typeof o[k] !== 'string' || !new RegExp(`^[0-9a-f]{${n}}$`).test(o[k]))
			throw new Error(`${where}.${k}: want ${n} lowercase hex digits`);
		o[k] = Buffer.from(o[k], 'hex').toString('base64');
	}
}

function check(body) {
	const req = JSON.parse(body);
	const spans = [];
	for (const rs of req.resourceSpans ?? []) {
		const resource = {};
		for (const a of rs.resource?.attributes ?? [])
			resource[a.key] = a.value.stringValue;
		for (const ss of rs.scopeSpans ?? []) {
			for (const s of ss.spans ?? []) {
				const plain = JSON.parse(JSON.stringify(s));
				for (const t of ['startTimeUnixNano', 'endTimeUnixNano'])
					if (typeof s[t] !== 'string' || !/^[0-9]{1,20}$/.test(s[t]))
						throw new Error(`${t}: want unix nanoseconds in a string`);
				if (!Number.isInteger(s.kind) || s.kind < 0 || s.kind > 5)
					throw new Error('kind: want an integer 0 to 5');
				ids(s, 'span');
				for (const l of s.links ?? [])
					ids(l, 'link');
				spans.push({ resource, ...plain });
			}
		}
	}
	const msg = Request.fromObject(req);
	const why = Request.verify(msg);
	if (why)
		throw new Error(why);
	// Through the wire format and back: what a collector would read.
	const back = Request.decode(Request.encode(msg).finish());
	const n = back.resourceSpans.reduce((a, rs) =>
		a + rs.scopeSpans.reduce((b, ss) => b + ss.spans.length, 0), 0);
	if (n !== spans.length)
		throw new Error(`${spans.length} spans sent, ${n} decoded`);
	return spans;
}

const server = createServer((req, res) => {
	let body = '';
	req.on('data', (c) => { body += c; });
	req.on('end', () => {
		if (mode === 'hang')
			return;
		if (mode === '500') {
			appendFileSync(out, JSON.stringify({ answered: 500 }) + '\n');
			res.writeHead(500).end();
			return;
		}
		try {
			if (req.method !== 'POST' || req.url !== '/v1/traces')
				throw new Error(`${req.method} ${req.url}: want POST /v1/traces`);
			if (req.headers['content-type'] !== 'application/json')
				throw new Error('want Content-Type: application/json');
			const spans = check(body);
			for (const s of spans)
				appendFileSync(out, JSON.stringify({ headers: req.headers, ...s }) + '\n');
			res.writeHead(200, { 'Content-Type': 'application/json' }).end('{}');
		} catch (e) {
			appendFileSync(out, JSON.stringify({ invalid: String(e.message) }) + '\n');
			res.writeHead(400).end();
		}
	});
});
server.listen(0, '127.0.0.1', () => {
	writeFileSync(portFile, String(server.address().port));
});
