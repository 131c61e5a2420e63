// Decodes OTLP/JSON files (`vigil net export --format otlp`) with OpenTelemetry's own
// protobuf definitions: opentelemetry-proto compiled by protobufjs's pbjs, as shipped in
// @opentelemetry/otlp-proto-exporter-base (pinned in ui/package-lock.json; NODE_PATH
// names the node_modules holding it). docs/export.md, tests/export/export_test.py.
//
//   node otlp_proto_check.cjs FILE...
//
// Each file must be an ExportTraceServiceRequest under the protobuf JSON mapping with
// OTLP's documented exceptions (trace and span ids in hex, enums as integers):
//   * every key is a field of its message (an unknown or misspelt name fails);
//   * trace ids are 32 hex digits, span ids 16 (parentSpanId may be empty);
//   * fromObject + verify accept it, and toObject gives every value back exactly as
//     written (64-bit integers as strings of digits, enums and 32-bit integers as
//     numbers, strings as strings): a value of the wrong type fails;
//   * the binary encoding decodes back to the same message.
// Exit 0 with one summary line per file, or 1 with one line naming the file and the path.
"use strict";
const fs = require("fs");
const root = require("@opentelemetry/otlp-proto-exporter-base/build/src/generated/root.js");

const Request = root.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
const TO_OBJECT = { longs: String, enums: Number, bytes: String, defaults: false };
const ID_HEX = { traceId: 32, spanId: 16, parentSpanId: 16 };

class Bad extends Error {}

// OTLP/JSON ids (hex) into the protobuf JSON mapping's bytes (base64).
function canonical(v, path) {
  if (Array.isArray(v)) return v.map((x, i) => canonical(x, `${path}[${i}]`));
  if (v === null || typeof v !== "object") return v;
  const out = {};
  for (const [k, x] of Object.entries(v)) {
    if (k in ID_HEX) {
      const empty = k === "parentSpanId" && x === "";
      if (!empty && (typeof x !== "string" || !new RegExp(`^[0-9a-f]{${ID_HEX[k]}}$`).test(x)))
        throw new Bad(`${path}.${k}: ${JSON.stringify(x)} is not ${ID_HEX[k]} lowercase hex digits`);
      out[k] = Buffer.from(x, "hex").toString("base64");
    } else {
      out[k] = canonical(x, `${path}.${k}`);
    }
  }
  return out;
}

function isDefault(v) {
  return v === 0 || v === "" || v === "0" || v === false || (Array.isArray(v) && !v.length);
}

// Every key of `written` is a field of message m, and decodes (`back`) to what was written.
function same(written, back, m, path) {
  const proto = Object.getPrototypeOf(m);
  for (const [k, v] of Object.entries(written)) {
    if (!(k in proto) || typeof proto[k] === "function")
      throw new Bad(`${path}.${k}: not a field of ${m.constructor.name}`);
    const b = back ? back[k] : undefined;
    if (b === undefined) {
      if (!isDefault(v))
        throw new Bad(`${path}.${k}: ${JSON.stringify(v)} is lost in decoding (wrong type)`);
      continue;
    }
    value(v, b, m[k], `${path}.${k}`);
  }
}

function value(v, b, mv, path) {
  if (Array.isArray(v)) {
    if (!Array.isArray(b))
      throw new Bad(`${path}: a list where the field is not repeated`);
    if (b.length !== v.length)
      throw new Bad(`${path}: ${v.length} elements written, ${b && b.length} decoded`);
    v.forEach((x, i) => value(x, b[i], mv[i], `${path}[${i}]`));
  } else if (v !== null && typeof v === "object") {
    if (mv === null || typeof mv !== "object" || !mv.constructor || !mv.constructor.verify)
      throw new Bad(`${path}: an object where the field is not a message`);
    same(v, b, mv, path);
  } else if (v !== b) {
    throw new Bad(`${path}: ${JSON.stringify(v)} written, decodes as ${JSON.stringify(b)}`);
  }
}

function check(file) {
  let doc;
  try {
    doc = JSON.parse(fs.readFileSync(file, "utf8"));
  } catch (e) {
    throw new Bad(`not JSON: ${e.message}`);
  }
  const canon = canonical(doc, "");
  let msg;
  try {
    msg = Request.fromObject(canon);
  } catch (e) { // protobufjs throws TypeError naming the field: "...Span.links: array expected"
    throw new Bad(`fromObject: ${e.message}`);
  }
  const err = Request.verify(msg);
  if (err) throw new Bad(`verify: ${err}`);
  const back = Request.toObject(msg, TO_OBJECT);
  same(canon, back, msg, "");
  const again = Request.toObject(Request.decode(Request.encode(msg).finish()), TO_OBJECT);
  if (JSON.stringify(again) !== JSON.stringify(back))
    throw new Bad("the binary encoding does not decode to the same message");
  let spans = 0, links = 0;
  for (const rs of msg.resourceSpans)
    for (const ss of rs.scopeSpans)
      for (const sp of ss.spans) {
        spans++;
        links += sp.links.length;
      }
  return `${msg.resourceSpans.length} resources, ${spans} spans, ${links} links`;
}

let rc = 0;
for (const file of process.argv.slice(2)) {
  try {
    console.log(`${file}: ExportTraceServiceRequest: ${check(file)}`);
  } catch (e) {
    if (!(e instanceof Bad)) throw e;
    console.log(`${file}: ${e.message}`);
    rc = 1;
  }
}
process.exit(process.argv.length > 2 ? rc : 2);
