/*
 * mtrace_xen_linux_stubs.c - the xenif seam (xenif/xenif.h: libxengntshr, libxenevtchn,
 * libxenstore, or the simulated Xen) behind plain OCaml externals, for Mtrace_xen_linux:
 * the Linux instance of Mtrace_xen.Make's module types.
 *
 * One xenif handle per process, opened at the first use (backend "auto": the simulated
 * Xen when MTRACE_SIM_DIR is set), as mirage-xen's modules use the domain's one grant
 * table, event-channel interface and xenstore ring.  A xenif handle is not shared
 * between threads: no stub releases the OCaml runtime lock, so calls are serialized.
 *
 * Errors the OCaml side turns into mirage-xen's answers (ENOENT, EAGAIN, ENOSPC) come
 * back as values; any other raises Failure with the call and strerror.  Xen system time
 * (clock_pair) is None where it cannot be read: a session then announces no clock-sync.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <caml/alloc.h>
#include <caml/bigarray.h>
#include <caml/fail.h>
#include <caml/memory.h>
#include <caml/mlvalues.h>

#include "xenif.h"

#define PAGE 4096

static struct xenif *xif_handle;

static void fail_errno(const char *what, int e)
{
	char msg[160];

	snprintf(msg, sizeof(msg), "Mtrace_xen_linux: %s: %s", what, strerror(e));
	caml_failwith(msg);
}

static void open_backend(const char *backend)
{
	char err[256] = "";

	xif_handle = xenif_open(
	    backend, NULL, XENIF_GNTSHR | XENIF_EVTCHN | XENIF_XS | XENIF_CLOCK, err, sizeof(err));
	if (xif_handle == NULL) {
		char msg[320];
		snprintf(msg, sizeof(msg), "Mtrace_xen_linux: opening Xen: %s",
		    err[0] ? err : strerror(errno));
		caml_failwith(msg);
	}
}

static struct xenif *xif(void)
{
	if (xif_handle == NULL)
		open_backend(NULL);
	return xif_handle;
}

/* Paths go to C as strings: one with a NUL inside would name another node. */
static const char *path_val(value v)
{
	if (!caml_string_is_c_safe(v))
		caml_invalid_argument("Mtrace_xen_linux: a xenstore path holds a NUL byte");
	return String_val(v);
}

/* "" = auto.  Raises if a handle is open already with another backend asked for. */
value mtrace_xen_linux_open(value backend)
{
	const char *b = caml_string_length(backend) > 0 ? String_val(backend) : NULL;

	if (xif_handle != NULL) {
		if (b != NULL && strcmp(b, xif_handle->ops->name) != 0)
			caml_failwith("Mtrace_xen_linux.init: Xen is open with another backend");
		return Val_unit;
	}
	open_backend(b);
	return Val_unit;
}

value mtrace_xen_linux_backend(value unit)
{
	(void)unit;
	return caml_copy_string(xif()->ops->name);
}

/* Some (pages, refs), or None when the grant table is full (ENOSPC, gntalloc's limit). */
value mtrace_xen_linux_share(value domid, value count, value writable)
{
	CAMLparam3(domid, count, writable);
	CAMLlocal4(res, pair, ba, refs);
	struct xenif *x = xif();
	intnat n = Long_val(count);
	xenif_gref_t *r;
	void *pages;

	if (n < 1 || n > 1 << 20 || Long_val(domid) < 0)
		caml_invalid_argument("Mtrace_xen_linux.share_pages");
	r = calloc((size_t)n, sizeof(*r));
	if (r == NULL)
		caml_raise_out_of_memory();
	pages = x->ops->gntshr_share(
	    x, (xenif_domid_t)Long_val(domid), (uint32_t)n, r, Bool_val(writable));
	if (pages == NULL) {
		int e = errno;
		free(r);
		if (e == ENOSPC)
			CAMLreturn(Val_none);
		fail_errno("sharing pages", e);
	}
	/* The mapping is xenif's until unshare: the Bigarray does not own it. */
	ba = caml_ba_alloc_dims(
	    CAML_BA_CHAR | CAML_BA_C_LAYOUT | CAML_BA_EXTERNAL, 1, pages, (intnat)n * PAGE);
	refs = caml_alloc(n, 0);
	for (intnat i = 0; i < n; i++)
		Store_field(refs, i, Val_long(r[i]));
	free(r);
	pair = caml_alloc_tuple(2);
	Store_field(pair, 0, ba);
	Store_field(pair, 1, refs);
	res = caml_alloc_some(pair);
	CAMLreturn(res);
}

value mtrace_xen_linux_unshare(value ba)
{
	struct xenif *x = xif();
	intnat len = Caml_ba_array_val(ba)->dim[0];

	if (x->ops->gntshr_unshare(x, Caml_ba_data_val(ba), (uint32_t)(len / PAGE)) < 0)
		fail_errno("unsharing pages", errno);
	return Val_unit;
}

value mtrace_xen_linux_bind_unbound(value domid)
{
	struct xenif *x = xif();
	int port = x->ops->evtchn_bind_unbound(x, (xenif_domid_t)Long_val(domid));

	if (port < 0)
		fail_errno("binding an unbound event channel", errno);
	return Val_long(port);
}

value mtrace_xen_linux_notify(value port)
{
	struct xenif *x = xif();

	if (x->ops->evtchn_notify(x, (xenif_port_t)Long_val(port)) < 0)
		fail_errno("notifying the event channel", errno);
	return Val_unit;
}

value mtrace_xen_linux_unbind(value port)
{
	struct xenif *x = xif();

	if (x->ops->evtchn_unbind(x, (xenif_port_t)Long_val(port)) < 0)
		fail_errno("unbinding the event channel", errno);
	return Val_unit;
}

/* Some value, or None when the node does not exist. */
value mtrace_xen_linux_xs_read(value tx, value path)
{
	CAMLparam2(tx, path);
	CAMLlocal2(s, res);
	struct xenif *x = xif();
	size_t len = 0;
	char *v = x->ops->xs_read(x, (uint32_t)Long_val(tx), path_val(path), &len);

	if (v == NULL) {
		if (errno == ENOENT)
			CAMLreturn(Val_none);
		fail_errno("xenstore read", errno);
	}
	s = caml_alloc_initialized_string(len, v);
	free(v);
	res = caml_alloc_some(s);
	CAMLreturn(res);
}

value mtrace_xen_linux_xs_write(value tx, value path, value v)
{
	struct xenif *x = xif();

	if (x->ops->xs_write(x, (uint32_t)Long_val(tx), path_val(path), String_val(v),
	        caml_string_length(v)) < 0)
		fail_errno("xenstore write", errno);
	return Val_unit;
}

/* false when the node (and its parent) does not exist */
value mtrace_xen_linux_xs_rm(value tx, value path)
{
	struct xenif *x = xif();

	if (x->ops->xs_rm(x, (uint32_t)Long_val(tx), path_val(path)) < 0) {
		if (errno == ENOENT)
			return Val_false;
		fail_errno("xenstore rm", errno);
	}
	return Val_true;
}

/* Some names, or None when the node does not exist. */
value mtrace_xen_linux_xs_directory(value tx, value path)
{
	CAMLparam2(tx, path);
	CAMLlocal3(arr, s, res);
	struct xenif *x = xif();
	unsigned n = 0;
	char **d = x->ops->xs_directory(x, (uint32_t)Long_val(tx), path_val(path), &n);

	if (d == NULL) {
		if (errno == ENOENT)
			CAMLreturn(Val_none);
		fail_errno("xenstore directory", errno);
	}
	arr = caml_alloc(n, 0);
	for (unsigned i = 0; i < n; i++) {
		s = caml_copy_string(d[i]);
		Store_field(arr, i, s);
	}
	free(d);
	res = caml_alloc_some(arr);
	CAMLreturn(res);
}

value mtrace_xen_linux_xs_tx_start(value unit)
{
	struct xenif *x = xif();
	uint32_t tx;

	(void)unit;
	tx = x->ops->xs_transaction_start(x);
	if (tx == 0)
		fail_errno("xenstore transaction start", errno);
	return Val_long(tx);
}

/* false when the commit conflicted (EAGAIN: run the transaction again) */
value mtrace_xen_linux_xs_tx_end(value tx, value abort)
{
	struct xenif *x = xif();

	if (x->ops->xs_transaction_end(x, (uint32_t)Long_val(tx), Bool_val(abort)) < 0) {
		if (errno == EAGAIN && !Bool_val(abort))
			return Val_false;
		fail_errno("xenstore transaction end", errno);
	}
	return Val_true;
}

/* Xen system time and CLOCK_REALTIME (true) or CLOCK_MONOTONIC read together (xenif's
 * clock_pair): Some (clock_ns, xen_ns, width_ns), or None where there is no source. */
value mtrace_xen_linux_clock_pair(value realtime)
{
	CAMLparam1(realtime);
	CAMLlocal2(t, res);
	struct xenif_clock_pair p;
	struct xenif *x = xif();

	if (!x->ops->clock_pair ||
	    x->ops->clock_pair(x, Bool_val(realtime) ? CLOCK_REALTIME : CLOCK_MONOTONIC, &p) < 0 ||
	    p.clk_ns < 0 || p.xen_ns > (uint64_t)Max_long || p.width_ns > (uint64_t)Max_long ||
	    p.clk_ns > Max_long)
		CAMLreturn(Val_none);
	t = caml_alloc_tuple(3);
	Store_field(t, 0, Val_long(p.clk_ns));
	Store_field(t, 1, Val_long((intnat)p.xen_ns));
	Store_field(t, 2, Val_long((intnat)p.width_ns));
	res = caml_alloc_some(t);
	CAMLreturn(res);
}
