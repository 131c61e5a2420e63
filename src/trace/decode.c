/* Decoding of compiled layouts: bounds-checked reads of integers, floats, strings,
 * bytes and references into typed values. Nothing read from the file is trusted. */
#include <string.h>

#include "internal.h"

static uint64_t read_uint(const uint8_t *p, unsigned size, bool big_endian)
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

static int64_t sign_extend(uint64_t v, unsigned size)
{
	if (size >= 8)
		return (int64_t)v;
	unsigned shift = 64 - size * 8;
	return (int64_t)(v << shift) >> shift;
}

enum decode_status vgt_layout_decode(const struct layout *l, const uint8_t *base, size_t *pos,
                                     size_t end, struct vgt_value *out, size_t *offsets)
{
	size_t p = *pos;
	for (unsigned i = 0; i < l->nops; i++) {
		const struct op *op = &l->ops[i];
		if (op->align > 1 && p % op->align)
			p += op->align - p % op->align;
		if (p > end) {
			*pos = end;
			return DEC_OVERRUN;
		}
		size_t room = end - p;
		struct vgt_value *v = op->field >= 0 ? &out[op->field] : NULL;
		if (offsets && op->field >= 0)
			offsets[op->field] = p;
		switch (op->kind) {
		case OP_ALIGN:
			break;
		case OP_INT: {
			if (room < op->size)
				goto overrun;
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
				goto overrun;
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
			if (!nul) {
				*pos = p;
				return DEC_UNTERMINATED;
			}
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
					goto overrun;
				len = lv->u; /* i and u share their bits */
			}
			if (room < len)
				goto overrun;
			v->type = VGT_BYTES;
			v->bytes.ptr = base + p;
			v->bytes.len = (size_t)len;
			p += (size_t)len;
			break;
		}
		case OP_REF:
			if (room < 12)
				goto overrun;
			v->type = VGT_REF;
			v->ref.id = read_uint(base + p, 8, op->big_endian);
			v->ref.gen = (uint32_t)read_uint(base + p + 8, 4, op->big_endian);
			p += 12;
			break;
		}
		continue;
	overrun:
		*pos = p;
		return DEC_OVERRUN;
	}
	*pos = p;
	return DEC_OK;
}
