/*
 * mtrace_guest_stubs.c - the C guest library (libmtrace-guest: grants, event channel,
 * xenstore announcement, on Xen or the simulated Xen) behind plain OCaml externals.
 * The rings' pages go to OCaml as Bigarrays over the library's own mappings, so the
 * OCaml writer (Mtrace_ring) writes exactly the memory dom0 reads.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <caml/alloc.h>
#include <caml/bigarray.h>
#include <caml/callback.h>
#include <caml/fail.h>
#include <caml/memory.h>
#include <caml/mlvalues.h>

#include "mtrace-guest.h"

/* An out-of-heap pointer in an abstract block: the GC never looks inside it. */
static struct mtrace_guest *guest_val(value v)
{
	struct mtrace_guest *g = *(struct mtrace_guest **)Data_abstract_val(v);

	if (g == NULL)
		caml_failwith("Mtrace_guest: session is closed");
	return g;
}

static struct mtrace_ring *ring_val(value g, value i)
{
	struct mtrace_ring *r = mtrace_guest_ring(guest_val(g), (unsigned)Long_val(i));

	if (r == NULL)
		caml_invalid_argument("Mtrace_guest: no such ring");
	return r;
}

/*
 * Whether mtrace_guest_open failed for want of a domain (Mtrace_guest.Unavailable):
 * EPERM is the reader's own domain (mtrace-guest(3)); ENOENT (no /dev/xen device) or
 * ENOSYS (no real backend in this build) where the backend was left to choose and no
 * simulated Xen was set, the case libmtrace-guest explains (guest.c, no_domain_hint).
 */
static bool no_domain(int e, const char *backend)
{
	const char *sim = getenv("MTRACE_SIM_DIR");

	if (e == EPERM)
		return true;
	return (e == ENOENT || e == ENOSYS) && (backend == NULL || strcmp(backend, "auto") == 0) &&
	    (sim == NULL || *sim == '\0');
}

value mtrace_ocaml_guest_open(value rings, value pages, value clock, value backend)
{
	CAMLparam4(rings, pages, clock, backend);
	CAMLlocal1(v);
	struct mtrace_guest_config cfg;
	struct mtrace_guest *g;
	char err[320] = "";

	memset(&cfg, 0, sizeof(cfg));
	cfg.rings = (unsigned)Long_val(rings);
	cfg.data_pages = (unsigned)Long_val(pages);
	cfg.clock = (uint32_t)Long_val(clock);
	cfg.backend = caml_string_length(backend) > 0 ? String_val(backend) : NULL;
	g = mtrace_guest_open(&cfg, err, sizeof(err));
	if (g == NULL) {
		int e = errno;
		const value *unavailable = caml_named_value("Mtrace_guest.Unavailable");
		if (unavailable != NULL && no_domain(e, cfg.backend))
			caml_raise_with_string(*unavailable, err);
		caml_failwith(err[0] ? err : "mtrace_guest_open failed");
	}
	v = caml_alloc(1, Abstract_tag);
	*(struct mtrace_guest **)Data_abstract_val(v) = g;
	CAMLreturn(v);
}

value mtrace_ocaml_guest_close(value v)
{
	struct mtrace_guest **p = (struct mtrace_guest **)Data_abstract_val(v);

	if (*p != NULL)
		mtrace_guest_close(*p);
	*p = NULL;
	return Val_unit;
}

value mtrace_ocaml_guest_hdr(value g, value i)
{
	struct mtrace_ring *r = ring_val(g, i);

	return caml_ba_alloc_dims(CAML_BA_UINT8 | CAML_BA_C_LAYOUT | CAML_BA_EXTERNAL, 1, r->hdr,
	    (intnat)MTRACE_PAGE_SIZE);
}

value mtrace_ocaml_guest_data(value g, value i)
{
	struct mtrace_ring *r = ring_val(g, i);

	return caml_ba_alloc_dims(
	    CAML_BA_UINT8 | CAML_BA_C_LAYOUT | CAML_BA_EXTERNAL, 1, r->data, (intnat)(r->mask + 1));
}

/* The next sequence number: what the C writer (RING_START at open) left. */
value mtrace_ocaml_guest_seq(value g, value i)
{
	return Val_long(ring_val(g, i)->seq);
}

/* The session's notification, without the header counter (the OCaml writer keeps it). */
value mtrace_ocaml_guest_kick(value g, value i)
{
	struct mtrace_ring *r = ring_val(g, i);

	if (r->notify != NULL)
		r->notify(r->guest);
	return Val_unit;
}

value mtrace_ocaml_guest_domid(value g)
{
	return Val_long(mtrace_guest_domid(guest_val(g)));
}

value mtrace_ocaml_guest_port(value g)
{
	return Val_long(mtrace_guest_port(guest_val(g)));
}

value mtrace_ocaml_guest_clock(value g)
{
	return Val_long(mtrace_guest_clock(guest_val(g)));
}
