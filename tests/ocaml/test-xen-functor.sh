#!/bin/sh
# Mtrace_xen.Make driven by its in-memory instance (ocaml/xen/test/xen_functor.ml): the
# announcement, grants, records and bytes checked from dom0's side, then withdrawal,
# re-announcement and every failure path.  It prints a line per check; any FAIL fails.
: "${OCAML_XEN_FUNCTOR:?}"
exec "$OCAML_XEN_FUNCTOR"
