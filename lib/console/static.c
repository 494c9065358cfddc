/*
 * static.c — the console's one stylesheet and its icon, served by the
 * program itself so that the Content-Security-Policy's 'self' covers
 * them and no inline style is needed (console.h).
 */
#include "console.h"

static const char stylesheet[] =
	"body{font:15px/1.45 system-ui,sans-serif;margin:0;color:#222;"
	"background:#fbf8f3}\n"
	"header{background:#5b3a1e;color:#fff;padding:.5em 1em;display:flex;"
	"flex-wrap:wrap;gap:1em;align-items:center}\n"
	"header a{color:#fff;text-decoration:none;font-weight:600}\n"
	"header a:hover{text-decoration:underline}\n"
	"header .who{margin-left:auto}\n"
	"header form{display:inline}\n"
	"main{padding:1em 1.5em;max-width:96em}\n"
	"h1{font-size:1.5em;margin:.3em 0 .6em}\n"
	"h2{font-size:1.15em;margin:1.4em 0 .4em}\n"
	"table{border-collapse:collapse;margin:.4em 0 1em;background:#fff;"
	"max-width:100%}\n"
	"th,td{border:1px solid #ddd2c4;padding:.3em .6em;text-align:left;"
	"vertical-align:top}\n"
	"td.id{font-family:monospace;font-size:.9em}\n"
	"td.id,td a{overflow-wrap:anywhere}\n"
	"th{background:#f1e9de}\n"
	".notice{padding:.5em 1em;border-left:4px solid #2e7d32;"
	"background:#e8f5e9}\n"
	".warn{padding:.5em 1em;border-left:4px solid #c62828;"
	"background:#ffebee}\n"
	".muted{color:#777}\n"
	"label{display:block;margin:.3em 0}\n"
	"input[type=number]{width:4em}\n"
	"button{padding:.3em .9em;cursor:pointer;white-space:nowrap}\n"
	".applied{color:#2e7d32}.waiting{color:#b26a00}.dead{color:#c62828}\n";

static const char icon[] =
	"<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 16 16\">"
	"<circle cx=\"8\" cy=\"9\" r=\"6\" fill=\"#c8893f\"/>"
	"<path d=\"M5 8q3-3 6 0\" stroke=\"#5b3a1e\" fill=\"none\"/></svg>\n";

void
console_style(console_req *r)
{
	r->type = "text/css; charset=utf-8";
	r->fixed = stylesheet;
}

void
console_icon(console_req *r)
{
	r->type = "image/svg+xml";
	r->fixed = icon;
}
