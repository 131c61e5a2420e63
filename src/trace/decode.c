/* Decoding of compiled layouts: bounds-checked reads of integers, floats, strings,
 * bytes and references into typed values; bit fields and variants in layouts that have
 * them. Nothing read from the file is trusted. */
#include <string.h>

#include "internal.h"

static inline __attribute__((always_inline)) uint64_t read_uint(const uint8_t *p, unsigned size,
                                                                bool big_endian)
{
	uint64_t v = 0;
	if (big_endian) {
		for (unsigned i = 0; i < size; i++)
			v = v << 8 | p[i];
	} else if (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ && size == 8) {
		memcpy(&v, p, 8);
	} else if (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ && size == 4) {
		uint32_t w;
		memcpy(&w, p, 4);
		v = w;
	} else {
		for (unsigned i = size; i-- > 0;)
			v = v << 8 | p[i];
	}
	return v;
}

static inline int64_t sign_extend(uint64_t v, unsigned size)
{
	if (size >= 8)
		return (int64_t)v;
	unsigned shift = 64 - size * 8;
	return (int64_t)(v << shift) >> shift;
}

/* Decodes one op that starts on a byte boundary (alignment done) at *p. */
static inline __attribute__((always_inline)) enum decode_status
decode_op(const struct op *op, const uint8_t *base, size_t *pp, size_t end, struct vgt_value *out,
          size_t *offsets)
{
	size_t p = *pp;
	if (p > end) {
		*pp = end;
		return DEC_OVERRUN;
	}
	size_t room = end - p;
	struct vgt_value *v = op->field >= 0 ? &out[op->field] : NULL;
	if (offsets && op->field >= 0)
		offsets[op->field] = p;
	switch (op->kind) {
	case OP_INT: {
		if (room < op->size)
			return DEC_OVERRUN;
		uint64_t u = read_uint(base + p, op->size, op->big_endian);
		if (op->is_signed) {
			v->type = VGT_INT;
			v->i = sign_extend(u, op->size);
		} else {
			v->type = VGT_UINT;
			v->u = u;
		}
		p += op->size;
		break;
	}
	case OP_FLOAT:
		if (room < op->size)
			return DEC_OVERRUN;
		v->type = VGT_DOUBLE;
		if (op->size == 4) {
			uint32_t w = (uint32_t)read_uint(base + p, 4, op->big_endian);
			float f;
			memcpy(&f, &w, 4);
			v->d = f;
		} else {
			uint64_t w = read_uint(base + p, 8, op->big_endian);
			memcpy(&v->d, &w, 8);
		}
		p += op->size;
		break;
	case OP_STRING: {
		const uint8_t *nul = memchr(base + p, 0, room);
		if (!nul)
			return DEC_UNTERMINATED;
		v->type = VGT_STRING;
		v->str.ptr = (const char *)base + p;
		v->str.len = (size_t)(nul - (base + p));
		p += v->str.len + 1;
		break;
	}
	case OP_BYTES:
	case OP_SEQ: {
		uint64_t len = op->len;
		if (op->kind == OP_SEQ) {
			const struct vgt_value *lv = &out[op->len_field];
			if (lv->type == VGT_INT && lv->i < 0)
				return DEC_OVERRUN;
			len = lv->u; /* i and u share their bits */
		}
		if (room < len)
			return DEC_OVERRUN;
		v->type = VGT_BYTES;
		v->bytes.ptr = base + p;
		v->bytes.len = (size_t)len;
		p += (size_t)len;
		break;
	}
	case OP_REF:
		if (room < 12)
			return DEC_OVERRUN;
		v->type = VGT_REF;
		v->ref.id = read_uint(base + p, 8, op->big_endian);
		v->ref.gen = (uint32_t)read_uint(base + p + 8, 4, op->big_endian);
		p += 12;
		break;
	default: /* OP_ALIGN */
		break;
	}
	*pp = p;
	return DEC_OK;
}

/* A bit field of op->size bits starting `*bit` bits into byte *p (CTF 1.8 4.1.5: little
 * endian fields fill each byte from its least significant bit, big endian ones from its
 * most significant). */
static enum decode_status decode_bits(const struct op *op, const uint8_t *base, size_t *p,
                                      unsigned *bit, size_t end, struct vgt_value *v)
{
	unsigned need = (*bit + op->size + 7) / 8;
	if (*p > end || end - *p < need)
		return DEC_OVERRUN;
	unsigned __int128 acc = 0;
	const uint8_t *b = base + *p;
	uint64_t mask = op->size >= 64 ? UINT64_MAX : ((uint64_t)1 << op->size) - 1;
	uint64_t u;
	if (op->big_endian) {
		for (unsigned i = 0; i < need; i++)
			acc = acc << 8 | b[i];
		u = (uint64_t)(acc >> (need * 8 - *bit - op->size)) & mask;
	} else {
		for (unsigned i = need; i-- > 0;)
			acc = acc << 8 | b[i];
		u = (uint64_t)(acc >> *bit) & mask;
	}
	if (op->is_signed) {
		unsigned shift = 64 - op->size;
		v->type = VGT_INT;
		v->i = shift < 64 ? (int64_t)(u << shift) >> shift : (int64_t)u;
	} else {
		v->type = VGT_UINT;
		v->u = u;
	}
	*bit += op->size;
	*p += *bit / 8;
	*bit %= 8;
	return DEC_OK;
}

static bool in_range(const struct variant_map *vm, const struct variant_range *r, uint64_t v)
{
	if (vm->is_signed)
		return (int64_t)v >= (int64_t)r->lo && (int64_t)v <= (int64_t)r->hi;
	return v >= r->lo && v <= r->hi;
}

/* Layouts with bit fields or variants: the position is kept in bits. */
static enum decode_status decode_general(const struct layout *l, const uint8_t *base, size_t *pos,
                                         size_t end, struct vgt_value *out, size_t *offsets)
{
	for (unsigned k = 0; k < l->nvariants; k++)
		out[l->variants[k].slot] = (struct vgt_value){.type = VGT_UINT, .u = 0};
	size_t p = *pos;
	unsigned bit = 0;
	enum decode_status st = DEC_OK;
	for (unsigned i = 0; i < l->nops; i++) {
		const struct op *op = &l->ops[i];
		if (op->kind == OP_BITS) {
			if (offsets)
				offsets[op->field] = p;
			st = decode_bits(op, base, &p, &bit, end, &out[op->field]);
		} else if (op->kind == OP_VARIANT) {
			const struct variant_map *vm = &l->variants[op->len];
			uint64_t tag = out[op->len_field].u; /* i and u share their bits */
			unsigned r = 0;
			while (r < vm->nranges && !in_range(vm, &vm->ranges[r], tag))
				r++;
			if (r == vm->nranges) {
				st = DEC_BAD_TAG;
			} else {
				out[vm->slot].u = vm->ranges[r].option + 1;
				i = vm->start[vm->ranges[r].option] - 1;
			}
		} else if (op->kind == OP_JUMP) {
			i = op->len - 1;
		} else {
			if (bit) { /* every other op starts on a byte */
				p++;
				bit = 0;
			}
			if (op->align > 1 && p % op->align)
				p += op->align - p % op->align;
			st = decode_op(op, base, &p, end, out, offsets);
		}
		if (st != DEC_OK) {
			*pos = p > end ? end : p;
			return st;
		}
	}
	*pos = p + (bit != 0);
	return DEC_OK;
}

enum decode_status vgt_layout_decode(const struct layout *l, const uint8_t *base, size_t *pos,
                                     size_t end, struct vgt_value *out, size_t *offsets)
{
	if (l->general)
		return decode_general(l, base, pos, end, out, offsets);
	size_t p = *pos;
	for (unsigned i = 0; i < l->nops; i++) {
		const struct op *op = &l->ops[i];
		if (op->align > 1 && p % op->align)
			p += op->align - p % op->align;
		enum decode_status st = decode_op(op, base, &p, end, out, offsets);
		if (st != DEC_OK) {
			*pos = p;
			return st;
		}
	}
	*pos = p;
	return DEC_OK;
}

/* As vgt_layout_decode, the same checks and failures, without keeping the values: strings
 * are still searched for their end. Layouts whose lengths or options depend on earlier
 * values (sequences, variants, bit fields) are decoded into `scratch`. */
enum decode_status vgt_layout_skip(const struct layout *l, const uint8_t *base, size_t *pos,
                                   size_t end, struct vgt_value *scratch)
{
	if (l->general)
		return decode_general(l, base, pos, end, scratch, NULL);
	size_t p = *pos;
	for (unsigned i = 0; i < l->nops; i++) {
		const struct op *op = &l->ops[i];
		if (op->align > 1 && p % op->align)
			p += op->align - p % op->align;
		if (p > end) {
			*pos = end;
			return DEC_OVERRUN;
		}
		size_t room = end - p, len = 0;
		switch (op->kind) {
		case OP_INT:
		case OP_FLOAT:
			len = op->size;
			break;
		case OP_REF:
			len = 12;
			break;
		case OP_BYTES:
			len = op->len;
			break;
		case OP_STRING: {
			const uint8_t *nul = memchr(base + p, 0, room);
			if (!nul) {
				*pos = p;
				return DEC_UNTERMINATED;
			}
			len = (size_t)(nul - (base + p)) + 1;
			break;
		}
		case OP_ALIGN:
			continue;
		default: /* OP_SEQ: its length is a value */
			return vgt_layout_decode(l, base, pos, end, scratch, NULL);
		}
		if (room < len) {
			*pos = p;
			return DEC_OVERRUN;
		}
		p += len;
	}
	*pos = p;
	return DEC_OK;
}
