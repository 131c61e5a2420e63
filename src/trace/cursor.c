/* Reading one stream file: walks its packets and decodes their events, checking every
 * length against the file. Damage is recorded and reading resumes: inside a packet
 * whose events cannot be decoded, at the next packet; after a broken packet header, at
 * the next place where the magic number is followed by the trace's uuid. */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static void sync_pub(struct stream *s)
{
	s->pub.damage = s->damage.items;
	s->pub.ndamage = s->damage.n;
	s->pub.ndamage_total = s->damage.total;
}

__attribute__((format(printf, 4, 5))) static long
report(struct vgt_cursor *c, enum vgt_damage_kind kind, size_t offset, const char *fmt, ...)
{
	char msg[400];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	long idx = vgt_damage_add(&c->s->damage, kind, c->s->path, offset, 0, 0, "%s", msg);
	sync_pub(c->s);
	return idx;
}

/* Are the bytes from off to the end of the stream all zero? A hole is, unread. */
static bool zero_tail(const struct stream *s, size_t off)
{
	if (off >= s->data_end)
		return true;
	const uint8_t *p = vgt_stream_bytes_at(s, off);
	size_t n = s->data_end - off;
	return p[0] == 0 && (n == 1 || !memcmp(p, p + 1, n - 1));
}

/* Where magic and uuid lie in a packet header: decoded once over zeros. */
static void header_geometry(const struct metadata *md, size_t *magic_at, size_t *uuid_at)
{
	static const uint8_t zeros[4096];
	size_t offsets[64], pos = 0;
	*magic_at = 0;
	*uuid_at = SIZE_MAX;
	struct vgt_value values[64];
	if (md->packet_header.nfields > 64 ||
	    vgt_layout_decode(&md->packet_header, zeros, &pos, sizeof zeros, values, offsets) !=
	        DEC_OK)
		return;
	if (md->magic >= 0)
		*magic_at = offsets[md->magic];
	if (md->uuid_field >= 0 && md->has_uuid)
		*uuid_at = offsets[md->uuid_field];
}

/* The first packet start at or after `from`: its magic, then the trace's uuid. */
static size_t find_packet(const struct vgt_cursor *c, size_t from)
{
	const struct metadata *md = c->md;
	if (md->magic < 0)
		return SIZE_MAX;
	size_t magic_at, uuid_at;
	header_geometry(md, &magic_at, &uuid_at);
	uint8_t magic[4] = {0xC1, 0x1F, 0xFC, 0xC1};
	for (unsigned i = 0; i < md->packet_header.nops; i++)
		if (md->packet_header.ops[i].field == md->magic &&
		    md->packet_header.ops[i].big_endian)
			memcpy(magic, "\xC1\xFC\x1F\xC1", 4);
	const struct stream *s = c->s;
	size_t size = s->size;
	size_t scan_end = s->data_end; /* no magic in a hole */
	for (size_t p = from + magic_at; p < scan_end;) {
		const uint8_t *m = memmem(vgt_stream_bytes_at(s, p), scan_end - p, magic, 4);
		if (!m)
			return SIZE_MAX;
		size_t at = p + (size_t)(m - vgt_stream_bytes_at(s, p));
		size_t start = at - magic_at;
		if (at >= magic_at && start >= from &&
		    (uuid_at == SIZE_MAX ||
		     (size - start >= uuid_at + 16 &&
		      !memcmp(vgt_stream_bytes_at(s, start + uuid_at), md->uuid, 16))))
			return start;
		p = at + 1;
	}
	return SIZE_MAX;
}

static void resync_from(struct vgt_cursor *c, size_t from, long damage)
{
	c->next = from;
	c->resync = true;
	c->resync_damage = damage;
	c->have_seq = false; /* the damage is reported: no "packets missing" on top */
}

static void stop(struct vgt_cursor *c)
{
	c->done = true;
	vgt_stream_drop_rest(c->s, &c->dropped);
	vgt_positions_release(c);
}

/* Following a stream still being written (trace/follow.h): what the file does not hold
 * yet, or holds half-written at its end, is waited for instead of reported. The cursor
 * stays at `off` (a packet start, or an event of the packet it is in) and is taken up
 * again once its stream has more bytes. */
static bool hold(struct vgt_cursor *c, size_t off)
{
	if (!c->follow)
		return false;
	c->paused = true;
	c->held_at = off;
	c->held_clean = off >= c->s->size; /* at the end of the bytes: nothing to doubt */
	return true;
}

/* What a packet's context says that cannot be: reported, the packet still read. The
 * packet times are compared only when both are whole 64-bit (8-byte) clock values. */
static void check_context(struct vgt_cursor *c, const struct stream_class *sc,
                          const struct vgt_value *cv, size_t off)
{
	const struct vgt_field *f = sc->packet_context.fields;
	if (sc->ts_begin >= 0 && sc->ts_end >= 0 && f[sc->ts_begin].size == 8 &&
	    f[sc->ts_end].size == 8 && cv[sc->ts_end].u < cv[sc->ts_begin].u)
		report(c, VGT_DMG_PACKET_CONTEXT, off,
		       "timestamp_end %" PRIu64 " is before timestamp_begin %" PRIu64,
		       cv[sc->ts_end].u, cv[sc->ts_begin].u);
	if (c->have_context && sc->discarded >= 0 && cv[sc->discarded].u < c->prev_discarded)
		report(c, VGT_DMG_PACKET_CONTEXT, off,
		       "events_discarded %" PRIu64 " is less than the previous packet's %" PRIu64
		       " (the count only grows)",
		       cv[sc->discarded].u, c->prev_discarded);
	if (c->have_context && (sc->tid >= 0 || sc->thread_gen >= 0) &&
	    (c->tid != c->prev_tid || c->thread_gen != c->prev_thread_gen))
		report(c, VGT_DMG_PACKET_CONTEXT, off,
		       "thread %" PRIu32 "/%" PRIu32 " in a stream of thread %" PRIu32 "/%" PRIu32,
		       c->tid, c->thread_gen, c->prev_tid, c->prev_thread_gen);
	c->have_context = true;
	if (sc->discarded >= 0 && cv[sc->discarded].u > c->prev_discarded)
		c->prev_discarded = cv[sc->discarded].u;
	c->prev_tid = c->tid;
	c->prev_thread_gen = c->thread_gen;
}

/* Does the packet's context say that its events lie outside every class window? Only
 * whole 64-bit begin and end times that do not contradict each other are believed (a
 * count for --stats: each event is still compared with its class's window). */
static bool outside_windows(const struct vgt_cursor *c, const struct stream_class *sc,
                            const struct vgt_value *cv)
{
	const struct vgt_field *f = sc->packet_context.fields;
	if (sc->ts_begin < 0 || sc->ts_end < 0 || f[sc->ts_begin].size != 8 ||
	    f[sc->ts_end].size != 8 || cv[sc->ts_end].u < cv[sc->ts_begin].u ||
	    c->win_lo > c->win_hi)
		return false;
	int64_t b = vgt_image_abs_ns(c->s->img, cv[sc->ts_begin].u);
	int64_t e = vgt_image_abs_ns(c->s->img, cv[sc->ts_end].u);
	return e < c->win_lo || b > c->win_hi;
}

void vgt_cursor_windows(struct vgt_cursor *c, const struct vgt_class_window *w, size_t n)
{
	c->windows = w;
	c->win_lo = INT64_MAX;
	c->win_hi = INT64_MIN;
	for (size_t i = 0; w && i < n; i++)
		if (w[i].active) {
			if (w[i].lo < c->win_lo)
				c->win_lo = w[i].lo;
			if (w[i].hi > c->win_hi)
				c->win_hi = w[i].hi;
		}
}

/* Is the event's payload passed over: its class skipped, or its time outside its class's
 * window (unless the last event returned from the stream was a marker naming this one's
 * time: keep_next, set only when an event is returned, as the reader of markers sees
 * them). */
static bool pass_over(struct vgt_cursor *c, uint32_t class_id, uint64_t clock)
{
	if (c->skip && c->skip[class_id])
		return true;
	if (!c->windows)
		return false;
	const struct vgt_class_window *w = &c->windows[class_id];
	if (!w->active || c->keep_next)
		return false;
	int64_t ts = vgt_image_abs_ns(c->s->img, clock);
	if (ts >= w->lo && ts <= w->hi)
		return false;
	c->s->pub.stats.events_outside++;
	return true;
}

/* The packet the cursor is in runs past the end of the file: reported once. */
static long report_past_eof(struct vgt_cursor *c)
{
	struct packet_info *pk = &c->pkt;
	pk->past_said = true;
	return report(c, VGT_DMG_PACKET_PAST_EOF, pk->start,
	              "packet_size of %" PRIu64 " bytes runs past the end of the file "
	              "(%zu bytes left)",
	              pk->claimed_end - pk->start, c->s->size - pk->start);
}

void vgt_cursor_settle(struct vgt_cursor *c)
{
	if (!c->follow && c->in_packet && !c->pkt.past_said && c->pkt.claimed_end > c->s->size)
		report_past_eof(c);
}

/* Reads the header and context of the packet at c->next. */
static bool open_packet(struct vgt_cursor *c)
{
	const struct metadata *md = c->md;
	struct stream *s = c->s;
	while (!c->done) {
		size_t off = c->next;
		if (c->resync) {
			c->resync = false;
			size_t found = off < s->size ? find_packet(c, off) : SIZE_MAX;
			if (found == SIZE_MAX && hold(c, off)) {
				c->resync = true; /* searched again when more is written */
				break;
			}
			if (found == SIZE_MAX) {
				vgt_damage_append(&s->damage, c->resync_damage,
				                  "; no packet after it");
				sync_pub(s);
				stop(c);
				break;
			}
			vgt_damage_append(&s->damage, c->resync_damage, "; resumed at byte %zu",
			                  found);
			sync_pub(s);
			off = found;
		}
		c->resync_damage = -1;
		if (off >= s->size) {
			if (!hold(c, off))
				stop(c);
			break;
		}
		const uint8_t *base = vgt_stream_bytes_at(s, off);
		size_t avail = s->size - off, pos = 0;
		struct vgt_value *hv = c->header_values;
		if (vgt_layout_decode(&md->packet_header, base, &pos, avail, hv, NULL) != DEC_OK) {
			if (hold(c, off))
				break;
			if (zero_tail(s, off))
				report(c, VGT_DMG_TRAILING_ZEROS, off,
				       "%zu bytes of zero-filled space after the last packet",
				       avail);
			else
				report(c, VGT_DMG_TRUNCATED, off,
				       "the file ends inside a packet header (%zu bytes left)",
				       avail);
			stop(c);
			break;
		}
		if (md->magic >= 0 && hv[md->magic].u != VGT_CTF_MAGIC) {
			if (hold(c, off))
				break; /* not written yet, or being written */
			if (zero_tail(s, off)) {
				report(c, VGT_DMG_TRAILING_ZEROS, off,
				       "%zu bytes of zero-filled space after the last packet",
				       avail);
				stop(c);
				break;
			}
			long d = report(c, VGT_DMG_BAD_MAGIC, off,
			                "bad packet magic 0x%08" PRIx64 " (expected 0xc1fc1fc1)",
			                hv[md->magic].u);
			resync_from(c, off + 1, d);
			continue;
		}
		if (md->uuid_field >= 0 && md->has_uuid &&
		    memcmp(hv[md->uuid_field].bytes.ptr, md->uuid, 16)) {
			if (hold(c, off))
				break;
			long d = report(c, VGT_DMG_UUID_MISMATCH, off,
			                "packet uuid is not the trace's uuid");
			resync_from(c, off + 1, d);
			continue;
		}
		uint64_t sid = md->stream_id >= 0  ? hv[md->stream_id].u
		               : md->nstreams == 1 ? md->streams[0]->id
		                                   : 0;
		const struct stream_class *sc = vgt_metadata_stream(md, sid);
		if (!sc) {
			if (hold(c, off))
				break;
			long d =
			    report(c, VGT_DMG_UNKNOWN_STREAM, off,
			           "packet of stream_id %" PRIu64 ", which is not declared", sid);
			resync_from(c, off + 1, d);
			continue;
		}
		struct vgt_value *cv = c->values;
		if (vgt_layout_decode(&sc->packet_context, base, &pos, avail, cv,
		                      c->header_offsets) != DEC_OK) {
			if (hold(c, off))
				break;
			report(c, VGT_DMG_TRUNCATED, off,
			       "the file ends inside a packet header (%zu bytes left)", avail);
			stop(c);
			break;
		}
		size_t header_end = pos;
		uint64_t psize = sc->packet_size >= 0 ? cv[sc->packet_size].u : (uint64_t)avail * 8;
		uint64_t csize = sc->content_size >= 0 ? cv[sc->content_size].u : psize;
		if (psize % 8 || psize / 8 < header_end || !psize) {
			if (hold(c, off))
				break; /* a header half-written: its sizes come last */
			long d = report(c, VGT_DMG_BAD_PACKET_SIZE, off,
			                "packet_size of %" PRIu64 " bits is %s", psize,
			                psize % 8 ? "not whole bytes"
			                : psize   ? "smaller than the packet header"
			                          : "zero");
			resync_from(c, off + 1, d);
			continue;
		}
		struct packet_info *pk = &c->pkt;
		*pk = (struct packet_info){.start = off, .header_end = off + header_end};
		pk->claimed_end = off + psize / 8;
		pk->end = pk->claimed_end > s->size ? s->size : (size_t)pk->claimed_end;
		pk->packet_size_at = pk->content_size_at = SIZE_MAX;
		if (sc->packet_size >= 0) {
			pk->packet_size_at = off + c->header_offsets[sc->packet_size];
			pk->size_field_len =
			    (uint8_t)sc->packet_context.fields[sc->packet_size].size;
		}
		if (sc->content_size >= 0)
			pk->content_size_at = off + c->header_offsets[sc->content_size];
		for (unsigned i = 0; i < sc->packet_context.nops; i++)
			if (sc->packet_context.ops[i].field == sc->packet_size)
				pk->big_endian = sc->packet_context.ops[i].big_endian;
		long past = -1;
		if (pk->claimed_end > s->size && !c->follow) /* followed: still growing */
			past = report_past_eof(c);
		if (csize > psize) {
			report(c, VGT_DMG_CONTENT_SIZE, off,
			       "content_size of %" PRIu64 " bits exceeds packet_size of %" PRIu64
			       " bits; events read up to the packet end",
			       csize, psize);
			pk->claimed_content = pk->claimed_end;
		} else if (csize < (uint64_t)header_end * 8) {
			report(c, VGT_DMG_CONTENT_SIZE, off,
			       "content_size of %" PRIu64 " bits is smaller than the packet header "
			       "(%zu bytes); no events read from this packet",
			       csize, header_end);
			pk->claimed_content = off + header_end;
		} else {
			pk->claimed_content = off + (csize + 7) / 8;
		}
		pk->content_end =
		    pk->claimed_content > s->size ? s->size : (size_t)pk->claimed_content;
		pk->last_event_end = pk->header_end;
		if (past >= 0)
			resync_from(c, pk->content_end, past);
		else
			c->next = pk->end;

		if (sc->seq_num >= 0) {
			uint64_t seq = cv[sc->seq_num].u;
			if (c->have_seq && seq != c->seq + 1)
				report(c, VGT_DMG_PACKETS_MISSING, off,
				       seq > c->seq + 1 ? "packet_seq_num %" PRIu64
				                          " follows %" PRIu64 " (packets missing)"
				                        : "packet_seq_num %" PRIu64
				                          " follows %" PRIu64 " (out of order)",
				       seq, c->seq);
			c->have_seq = true;
			c->seq = seq;
		}
		struct vgt_stream_stats *st = &s->pub.stats;
		if (sc->discarded >= 0 && cv[sc->discarded].u >= s->discarded_base &&
		    cv[sc->discarded].u - s->discarded_base > st->events_discarded)
			st->events_discarded = cv[sc->discarded].u - s->discarded_base;
		c->tid = sc->tid >= 0 ? (uint32_t)cv[sc->tid].u : 0;
		c->thread_gen = sc->thread_gen >= 0 ? (uint32_t)cv[sc->thread_gen].u : 0;
		check_context(c, sc, cv, off);
		if (sc->ts_begin >= 0 && sc->ts_bits < 64)
			c->clock = cv[sc->ts_begin].u;
		st->packets++;
		if (c->windows && outside_windows(c, sc, cv))
			st->packets_outside++;
		c->sc = sc;
		c->have_packet = true;
		c->in_packet = true;
		c->pos = pk->header_end;
		vgt_stream_drop_behind(s, &c->dropped, off);
		return true;
	}
	return false;
}

static uint64_t full_clock(uint64_t clock, uint64_t raw, unsigned bits)
{
	if (bits >= 64)
		return raw;
	uint64_t mask = ((uint64_t)1 << bits) - 1;
	uint64_t v = (clock & ~mask) | raw;
	if (raw < (clock & mask))
		v += mask + 1;
	return v;
}

/* The compact header (stream_class.compact_id_bits), read directly. */
static enum decode_status compact_header(const struct stream_class *sc, const uint8_t *base,
                                         size_t *pos, size_t end, uint64_t clock, uint64_t *id,
                                         uint64_t *out_clock)
{
	size_t p = *pos;
	if (end - p < 4)
		return DEC_OVERRUN;
	const uint8_t *b = base + p;
	uint32_t w =
	    (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
	unsigned bits = sc->compact_id_bits;
	uint32_t escape = ((uint32_t)1 << bits) - 1;
	if ((w & escape) != escape) {
		*id = w & escape;
		*out_clock = full_clock(clock, w >> bits, 32 - bits);
		*pos = p + 4;
		return DEC_OK;
	}
	unsigned n = sc->compact_ext_id_size;
	if (end - p < 1 + n + 8)
		return DEC_OVERRUN;
	uint64_t v = 0;
	for (unsigned i = n; i-- > 0;)
		v = v << 8 | b[1 + i];
	*id = v;
	uint64_t t = 0;
	for (unsigned i = 8; i-- > 0;)
		t = t << 8 | b[1 + n + i];
	*out_clock = t;
	*pos = p + 1 + n + 8;
	return DEC_OK;
}

/* A header with variants: the id and clock of the fields decoded, in order. */
static void header_roles(const struct stream_class *sc, const struct vgt_value *hv, uint64_t clock,
                         uint64_t *id, uint64_t *out_clock)
{
	const struct layout *eh = &sc->event_header;
	*id = 0;
	for (unsigned i = 0; i < sc->nroles; i++) {
		int slot = sc->roles[i].slot;
		const struct field_place *pl = &eh->place[slot];
		if (pl->variant_slot >= 0 && hv[pl->variant_slot].u != pl->option)
			continue;
		if (sc->roles[i].is_ts)
			clock = full_clock(clock, hv[slot].u, pl->bits);
		else
			*id = hv[slot].u;
	}
	*out_clock = clock;
}

/* The event header at pos (relative to base, the packet's start): its id and full clock,
 * counted from `clock`, the one before it. */
static enum decode_status decode_header(struct vgt_cursor *c, const uint8_t *base, size_t *pos,
                                        size_t end, uint64_t clock, uint64_t *id,
                                        uint64_t *out_clock)
{
	const struct stream_class *sc = c->sc;
	enum decode_status st =
	    sc->compact_id_bits
	        ? compact_header(sc, base, pos, end, clock, id, out_clock)
	        : vgt_layout_decode(&sc->event_header, base, pos, end, c->header_values, NULL);
	if (st != DEC_OK)
		return st;
	if (!sc->roles) { /* plain: one id, one timestamp */
		*id = c->header_values[sc->ev_id].u;
		*out_clock = full_clock(clock, c->header_values[sc->ev_ts].u, sc->ts_bits);
	} else if (!sc->compact_id_bits) {
		header_roles(sc, c->header_values, clock, id, out_clock);
	}
	return DEC_OK;
}

bool vgt_cursor_header_at(struct vgt_cursor *c, size_t at, uint64_t clock, uint64_t *id,
                          uint64_t *out_clock)
{
	const struct packet_info *pk = &c->pkt;
	if (at < pk->header_end || at >= pk->content_end)
		return false;
	size_t pos = at - pk->start;
	return decode_header(c, vgt_stream_bytes_at(c->s, pk->start), &pos,
	                     pk->content_end - pk->start, clock, id, out_clock) == DEC_OK;
}

/* An event that cannot be decoded: the rest of its packet is skipped. */
static void bad_event(struct vgt_cursor *c, enum decode_status st, size_t at, const char *what)
{
	const struct packet_info *pk = &c->pkt;
	size_t rest = pk->content_end - at;
	if (pk->claimed_content > c->s->size)
		report(c, VGT_DMG_TRUNCATED, at, "the file ends inside %s", what);
	else if (st == DEC_BAD_TAG)
		report(c, VGT_DMG_FIELD_OVERRUN, at,
		       "%s: a variant's tag selects none of its options; %zu bytes skipped", what,
		       rest);
	else if (st == DEC_UNTERMINATED)
		report(c, VGT_DMG_UNTERMINATED_STRING, at,
		       "%s: a string runs past the packet content; %zu bytes skipped", what, rest);
	else
		report(c, VGT_DMG_FIELD_OVERRUN, at,
		       "%s runs past the packet content; %zu bytes skipped", what, rest);
	c->in_packet = false;
}

/* Followed: may the packet the cursor is in still grow? While it reaches the end of the
 * bytes read, its writer may commit more events to it (or has closed it: told only by
 * what comes after it, or by the end of the run). */
static bool packet_open(const struct vgt_cursor *c)
{
	return c->follow && c->pkt.claimed_end >= c->s->size;
}

/* The sizes of the packet the cursor is in, as its header says them now. */
static void refresh_sizes(struct vgt_cursor *c, const struct stream_class *sc,
                          const struct vgt_value *cv)
{
	struct stream *s = c->s;
	struct packet_info *pk = &c->pkt;
	size_t off = pk->start, avail = s->size - off;
	uint64_t psize = sc->packet_size >= 0 ? cv[sc->packet_size].u : (uint64_t)avail * 8;
	uint64_t csize = sc->content_size >= 0 ? cv[sc->content_size].u : psize;
	if (psize % 8 || psize / 8 < pk->header_end - off || csize > psize ||
	    off + (csize + 7) / 8 < pk->last_event_end)
		return; /* sizes that cannot be: read as they were */
	pk->claimed_end = off + psize / 8;
	pk->end = pk->claimed_end > s->size ? s->size : (size_t)pk->claimed_end;
	pk->claimed_content = off + (csize + 7) / 8;
	pk->content_end = pk->claimed_content > s->size ? s->size : (size_t)pk->claimed_content;
	c->next = pk->end;
	struct vgt_stream_stats *st = &s->pub.stats;
	if (sc->discarded >= 0 && cv[sc->discarded].u >= s->discarded_base &&
	    cv[sc->discarded].u - s->discarded_base > st->events_discarded)
		st->events_discarded = cv[sc->discarded].u - s->discarded_base;
	if (sc->discarded >= 0 && cv[sc->discarded].u > c->prev_discarded)
		c->prev_discarded = cv[sc->discarded].u;
}

bool vgt_cursor_packet_at(const struct vgt_cursor *c, size_t off, uint64_t *end,
                          uint64_t *content_end)
{
	const struct metadata *md = c->md;
	const struct stream *s = c->s;
	if (!md || off >= s->size)
		return false;
	size_t pos = 0, avail = s->size - off;
	const uint8_t *base = vgt_stream_bytes_at(s, off);
	struct vgt_value *hv = vgt__xcalloc(md->max_fields + 1, sizeof *hv);
	struct vgt_value *cv = vgt__xcalloc(md->max_fields + 1, sizeof *cv);
	bool ok = vgt_layout_decode(&md->packet_header, base, &pos, avail, hv, NULL) == DEC_OK &&
	          (md->magic < 0 || hv[md->magic].u == VGT_CTF_MAGIC);
	const struct stream_class *sc = NULL;
	if (ok) {
		uint64_t sid = md->stream_id >= 0  ? hv[md->stream_id].u
		               : md->nstreams == 1 ? md->streams[0]->id
		                                   : 0;
		sc = vgt_metadata_stream(md, sid);
	}
	ok = ok && sc && sc->packet_size >= 0 && sc->content_size >= 0 &&
	     vgt_layout_decode(&sc->packet_context, base, &pos, avail, cv, NULL) == DEC_OK;
	if (ok) {
		uint64_t psize = cv[sc->packet_size].u, csize = cv[sc->content_size].u;
		ok = psize && psize % 8 == 0 && psize / 8 >= pos && csize <= psize &&
		     csize / 8 >= pos;
		*end = off + psize / 8;
		*content_end = off + (csize + 7) / 8;
	}
	free(hv);
	free(cv);
	return ok;
}

void vgt_cursor_refresh(struct vgt_cursor *c)
{
	c->paused = false;
	if (!c->in_packet || !c->md)
		return;
	struct stream *s = c->s;
	struct packet_info *pk = &c->pkt;
	const struct metadata *md = c->md;
	size_t off = pk->start, pos = 0, avail = s->size - off;
	const uint8_t *base = vgt_stream_bytes_at(s, off);
	/* its own values: the cursor's may hold the event it returned last */
	struct vgt_value *hv = vgt__xcalloc(md->max_fields + 1, sizeof *hv);
	struct vgt_value *cv = vgt__xcalloc(md->max_fields + 1, sizeof *cv);
	const struct stream_class *sc = c->sc;
	if (vgt_layout_decode(&md->packet_header, base, &pos, avail, hv, NULL) == DEC_OK &&
	    vgt_layout_decode(&sc->packet_context, base, &pos, avail, cv, NULL) == DEC_OK)
		refresh_sizes(c, sc, cv); /* else: only a file cut under the reader does this */
	free(hv);
	free(cv);
}
bool vgt_cursor_advance(struct vgt_cursor *c)
{
	struct stream *s = c->s;
	while (!c->done || c->in_packet) {
		if (!c->in_packet) {
			if (!open_packet(c)) {
				if (c->done)
					vgt_summary_stream_end(c);
				return false;
			}
			if (vgt_summary_skip(c))
				continue;
		}
		if (c->jumping && !vgt_positions_next(c)) /* read by its summary's positions */
			continue;
		struct packet_info *pk = &c->pkt;
		const struct stream_class *sc = c->sc;
		const uint8_t *base = vgt_stream_bytes_at(s, pk->start);
		size_t at = c->pos, pos = at - pk->start;
		size_t end = pk->content_end - pk->start;
		if (pos >= end) {
			if (packet_open(c) && hold(c, at)) {
				c->held_clean = true; /* its writer has not committed more (yet) */
				return false;
			}
			vgt_summary_packet_end(c);
			c->in_packet = false;
			continue;
		}
		uint64_t id, clock;
		enum decode_status st = decode_header(c, base, &pos, end, c->clock, &id, &clock);
		if (st != DEC_OK) {
			if (pk->claimed_content > s->size && hold(c, at))
				return false;
			bad_event(c, st, at, "an event header");
			continue;
		}
		const struct event_class *ec = vgt_stream_class_event(sc, id);
		if (!ec && hold(c, at)) { /* declared since the metadata was read? */
			c->wants_metadata = true;
			return false;
		}
		if (!ec || !ec->usable) {
			if (ec)
				report(c, VGT_DMG_UNKNOWN_EVENT, at,
				       "event '%s' has no usable declaration; %zu bytes skipped",
				       ec->pub.name, pk->content_end - at);
			else
				report(c, VGT_DMG_UNKNOWN_EVENT, at,
				       "unknown event id %" PRIu64 "; %zu bytes skipped", id,
				       pk->content_end - at);
			c->in_packet = false;
			continue;
		}
		bool skip = pass_over(c, ec->pub.class_id, clock);
		st = skip ? vgt_layout_skip(&ec->payload, base, &pos, end, c->values)
		          : vgt_layout_decode(&ec->payload, base, &pos, end, c->values, NULL);
		if (st != DEC_OK) {
			if (pk->claimed_content > s->size && hold(c, at))
				return false;
			char what[200];
			snprintf(what, sizeof what, "event '%s'", ec->pub.name);
			bad_event(c, st, at, what);
			continue;
		}
		c->clock = clock;
		int64_t ts = vgt_image_abs_ns(s->img, c->clock);
		if (c->have_ts && ts < c->last_ts)
			report(c, VGT_DMG_TIME_BACKWARDS, at,
			       "event '%s' is %" PRId64 " ns older than the one before it",
			       ec->pub.name, c->last_ts - ts);
		c->have_ts = true;
		c->last_ts = ts;
		struct vgt_stream_stats *sst = &s->pub.stats;
		if (!sst->events++)
			sst->first_ts = ts;
		sst->last_ts = ts;
		vgt_summary_event(c, id, ts, at);
		pk->last_event_end = pk->start + pos;
		c->ev.type = &ec->pub;
		c->ev.tid = c->tid;
		c->ev.thread_gen = c->thread_gen;
		c->ev.ts = ts;
		c->ev.clock_value = c->clock;
		c->ev.values = skip ? NULL : c->values;
		c->keep_next = c->windows && c->windows[ec->pub.class_id].keeps_next;
		c->ev.offset = at;
		c->pos = pk->last_event_end;
		return true;
	}
	return false;
}

bool vgt_cursor_resume(struct vgt_cursor *c, size_t prev, size_t at, uint64_t clock,
                       int64_t last_ts)
{
	struct vgt_stream_stats keep = c->s->pub.stats;
	uint64_t damage = c->s->damage.total;
	c->next = prev;
	c->done = false;
	bool opened = open_packet(c) && c->pkt.start == prev && c->pkt.end == at;
	c->s->pub.stats = keep; /* the packet before is not this reader's */
	c->in_packet = false;
	c->next = c->dropped = at;
	c->done = at >= c->s->size;
	c->clock = clock;
	c->have_ts = true;
	c->last_ts = last_ts;
	return opened && c->s->damage.total == damage;
}

void vgt_cursor_init(struct vgt_cursor *c, struct stream *s)
{
	*c = (struct vgt_cursor){.s = s, .md = s->img->md, .resync_damage = -1};
	vgt_damage_clear(&s->damage);
	if (s->open_error)
		vgt_damage_add(&s->damage, VGT_DMG_IO, s->path, 0, 0, 0, "%s", s->open_error);
	sync_pub(s);
	s->pub.stats = (struct vgt_stream_stats){0};
	size_t n = c->md ? c->md->max_fields + 1 : 1;
	c->values = vgt__xcalloc(n, sizeof *c->values);
	c->header_values = vgt__xcalloc(n, sizeof *c->header_values);
	c->header_offsets = vgt__xcalloc(n, sizeof *c->header_offsets);
	c->ev.image = &s->img->pub;
	c->ev.stream = &s->pub;
	c->next = c->dropped = s->start;
	c->done = !c->md || s->size <= s->start;
}

void vgt_cursor_fini(struct vgt_cursor *c)
{
	vgt_summary_detach(c);
	free(c->values);
	free(c->header_values);
	free(c->header_offsets);
	c->values = c->header_values = NULL;
	c->header_offsets = NULL;
}

struct vgt_cursor *vgt_cursor_open(struct vgt_trace *t, size_t stream_index)
{
	if (stream_index >= t->nstreams)
		return NULL;
	struct vgt_cursor *c = vgt__xmalloc(sizeof *c);
	vgt_cursor_init(c, t->streams[stream_index]);
	if (t->summaries) /* a reader of one stream alone passes over packets too */
		vgt_summary_attach(c);
	return c;
}

const struct vgt_event *vgt_cursor_next(struct vgt_cursor *c)
{
	return vgt_cursor_advance(c) ? &c->ev : NULL;
}

void vgt_cursor_close(struct vgt_cursor *c)
{
	if (!c)
		return;
	vgt_cursor_fini(c);
	free(c);
}

int vgt_event_header_at(const struct vgt_image *pub, const uint8_t *packet, size_t end, size_t off,
                        uint64_t *id, size_t *next)
{
	const struct image *img = (const struct image *)pub;
	const struct stream_class *sc = img->md ? vgt_metadata_stream(img->md, 0) : NULL;
	struct vgt_value v[16];
	if (!sc || sc->event_header.nfields > 16 || off > end)
		return -1;
	size_t pos = off;
	if (vgt_layout_decode(&sc->event_header, packet, &pos, end, v, NULL) != DEC_OK)
		return -1;
	uint64_t clock;
	if (sc->roles)
		header_roles(sc, v, 0, id, &clock);
	else
		*id = v[sc->ev_id].u;
	*next = pos;
	return 0;
}
