/*
 * mprof-writer.c - mirage-profile's writer algorithm (see mprof-writer.h).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "mprof-writer.h"

static const uint8_t uuid[16] = { 0x05, 0x88, 0x3b, 0x8d, 0x52, 0x1a, 0x48, 0x7b, 0xb3, 0x97, 0x45,
	0x6a, 0xb1, 0x50, 0x68, 0x0c };

/* Byte stores: events are packed (unaligned), and volatile keeps the program order. */
static void st8(struct mprof_writer *w, uint32_t off, uint8_t v)
{
	w->buf[off] = v;
}

static void st16(struct mprof_writer *w, uint32_t off, uint16_t v)
{
	st8(w, off, (uint8_t)v);
	st8(w, off + 1, (uint8_t)(v >> 8));
}

static void st32(struct mprof_writer *w, uint32_t off, uint32_t v)
{
	st16(w, off, (uint16_t)v);
	st16(w, off + 2, (uint16_t)(v >> 16));
}

/* Packet.set_content_end: two u16 stores, low half first, as the original does. */
static void set_content_end(struct mprof_writer *w, unsigned pkt, uint32_t end)
{
	uint32_t bits = (end - w->pstart[pkt]) * 8;

	st16(w, w->pstart[pkt] + 26, (uint16_t)(bits & 0xffff));
	st16(w, w->pstart[pkt] + 28, (uint16_t)(bits >> 16));
}

/* Packet.clear: counter first, then content_size back to the header alone. */
static void clear_packet(struct mprof_writer *w, unsigned pkt, uint32_t count)
{
	st16(w, w->pstart[pkt] + 24, (uint16_t)count);
	set_content_end(w, pkt, w->pstart[pkt] + MPW_HDR);
}

int mpw_init(struct mprof_writer *w, void *buf, size_t len)
{
	size_t ps = len / MPW_PACKETS;

	if (len < MPW_PACKETS * (MPW_HDR + 64) || len > (1u << 28)) {
		errno = EINVAL;
		return -1;
	}
	memset(w, 0, sizeof(*w));
	w->buf = buf;
	w->len = len;
	for (unsigned i = 0; i < MPW_PACKETS; i++) {
		uint32_t start = (uint32_t)(i * ps);
		uint32_t plen = (uint32_t)(i == MPW_PACKETS - 1 ? len - i * ps : ps);

		w->pstart[i] = start;
		w->pend[i] = start + plen;
		st32(w, start, 0xc1fc1fc1u);
		for (unsigned j = 0; j < sizeof(uuid); j++)
			st8(w, start + 4 + j, uuid[j]);
		st32(w, start + 20, plen * 8);
		clear_packet(w, i, i);
	}
	w->active = 0;
	w->next_event = w->pstart[0] + MPW_HDR;
	w->next_count = 1;
	w->packets_started = 1;
	return 0;
}

static uint32_t payload_len(uint8_t op, const char *str, bool *ok)
{
	size_t sl = str ? strlen(str) : 0;

	*ok = true;
	switch (op) {
	case 0:
		return 17;
	case 1:
	case 2:
	case 4:
	case 9:
	case 10:
	case 12:
	case 13:
		return 16;
	case 3:
	case 6:
	case 11:
		break;
	case 5:
		if (sl > 4000)
			break;
		return (uint32_t)(8 + sl + 1);
	case 7:
	case 8:
		return 8;
	default:
		*ok = false;
		return 0;
	}
	if (sl > 4000) {
		*ok = false;
		return 0;
	}
	return (uint32_t)(16 + sl + 1);
}

uint32_t mpw_event_len(const struct mprof_writer *w, const struct mpw_event *ev)
{
	bool ok;
	uint32_t n = payload_len(ev->op, ev->str, &ok);

	/* It must fit in an empty packet, or add_event would loop. */
	if (!ok || 9 + n >= w->pend[0] - w->pstart[0] - MPW_HDR)
		return 0;
	return 9 + n;
}

static void put64(uint8_t *p, uint64_t v)
{
	for (unsigned i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

bool mpw_begin(struct mprof_writer *w, const struct mpw_event *ev, bool *ok)
{
	uint32_t n = mpw_event_len(w, ev), i, new_i;
	bool moved = false;
	uint8_t *p = w->pending;

	*ok = n != 0;
	if (!*ok)
		return false;
	/* Control.add_event: ">= rather than >" so next_event never reaches the packet end. */
	for (;;) {
		i = w->next_event;
		new_i = i + n;
		if (new_i < w->pend[w->active])
			break;
		/* next_packet: the oldest packet is overwritten whole. */
		w->active = (w->active + 1) % MPW_PACKETS;
		w->next_event = w->pstart[w->active] + MPW_HDR;
		clear_packet(w, w->active, w->next_count);
		w->next_count++;
		w->packets_started++;
		moved = true;
	}
	w->next_event = new_i;
	set_content_end(w, w->active, new_i);

	/* The bytes, in the order the original writes them: timestamp, op, fields. */
	put64(p, ev->ts);
	p[8] = ev->op;
	p += 9;
	if (ev->op == 8) {
		put64(p, ev->arg);
		p += 8;
	} else {
		put64(p, ev->thread);
		p += 8;
		if (ev->op != 5 && ev->op != 7) {
			put64(p, ev->arg);
			p += 8;
		}
		if (ev->op == 0)
			*p++ = ev->type;
		if (ev->op == 3 || ev->op == 5 || ev->op == 6 || ev->op == 11) {
			size_t sl = strlen(ev->str ? ev->str : "");

			memcpy(p, ev->str ? ev->str : "", sl + 1);
			p += sl + 1;
		}
	}
	w->pending_len = (uint32_t)(p - w->pending);
	w->pending_at = i;
	w->pending_done = 0;
	return moved;
}

void mpw_write(struct mprof_writer *w, uint32_t upto)
{
	if (upto > w->pending_len)
		upto = w->pending_len;
	for (; w->pending_done < upto; w->pending_done++)
		st8(w, w->pending_at + w->pending_done, w->pending[w->pending_done]);
}

bool mpw_emit(struct mprof_writer *w, const struct mpw_event *ev, bool *ok)
{
	bool moved = mpw_begin(w, ev, ok);

	if (*ok)
		mpw_write(w, UINT32_MAX);
	return moved;
}

void mpw_gen(uint64_t i, struct mpw_event *ev, char *strbuf, size_t len)
{
	memset(ev, 0, sizeof(*ev));
	ev->ts = MPW_GEN_T0 + i * 1000;
	ev->op = (uint8_t)(i % 14);
	ev->thread = i % 50;
	ev->arg = 1000 + i % 77;
	switch (ev->op) {
	case 0:
		ev->type = (uint8_t)(i % 20);
		break;
	case 3:
		snprintf(strbuf, len, "Exn_%u", (unsigned)(i % 3));
		ev->str = strbuf;
		break;
	case 5:
		snprintf(strbuf, len, "label-%u", (unsigned)(i % 7));
		ev->str = strbuf;
		ev->arg = 0; /* a label has no second field */
		break;
	case 6:
	case 11:
		snprintf(strbuf, len, "ctr-%u", (unsigned)(i % 4));
		ev->str = strbuf;
		break;
	case 7:
		if (i % 5 == 0)
			ev->thread = UINT64_MAX;
		ev->arg = 0;
		break;
	case 8:
		ev->thread = UINT64_MAX;
		ev->arg = i;
		break;
	default:
		break;
	}
}
