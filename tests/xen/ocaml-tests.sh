# The Lwt program of tests/ocaml (ocaml/test/lwt_threads.ml, through ppx_mtrace) in a
# Linux domU of its own on real Xen (sourced by dom0-tests.sh after the mtrace checks,
# whose helpers it uses): its own image (domU-ocaml.cpio: the OCaml program, xen-guest
# for the go key and publishing), 128 MB.  dom0 subscribes mtrace-cat -f json to the
# domain before the program starts (it waits for the go key), takes the program's own
# per-op account from xenstore once it has exited (it waits for mtraced to have read
# its ring down first), and reduces what mtrace-cat received to a small account --
# events per op, site names, threads per site, threads that carry a site -- which the
# host checks against the program's account and its source (check_ocaml_sites.py:
# the sites a scan of lwt_threads.ml finds, tests/ocaml/lwt_forms.py).  Under TCG a
# domU writes slowly, so this runs OCAML_BATCHES batches of ~620 threads, not the
# 50,000+ of the simulated-domain test (tests/ocaml/test-lwt.sh).
OCAML_BATCHES=${OCAML_BATCHES:-6}

# mtraced's journal lines that name a client called mtrace-cat
cat_clients() { journalctl -u mtraced --no-pager -o cat 2>/dev/null | grep -c mtrace-cat; }

ocaml_checks() {
	local D s rc n0 i sz last t0 t1
	phase ocaml-lwt-domU
	start_mtraced && pass ocaml_mtraced_starts || { fail ocaml_mtraced_starts; return; }
	if ! D=$(DOMU_MEM=128 DOMU_RAMDISK=/root/domU-ocaml.cpio \
		domu mtOC "go lwt_threads $OCAML_BATCHES 256 300 300"); then
		fail xl_create_ocaml_domU
		stop_mtraced
		return
	fi
	pass "xl_create_ocaml_domU (dom$D, 128 MB)"
	if ! wait_key $D state 3000; then
		fail boot_ocaml_domU
		xl destroy mtOC; stop_mtraced
		return
	fi
	# subscribed before the program opens its session: it gets every event from
	# RING_START on (one already read when the client came would never reach it)
	n0=$(cat_clients)
	mtrace-cat -f json -d $D -t 1100 > /run/ocaml.json 2> /run/ocaml-cat.err &
	CATO=$!
	i=0; while [ "$(cat_clients)" -le "$n0" ] && [ $i -lt 120 ]; do sleep 0.5; i=$((i+1)); done
	[ $i -lt 120 ] || info "ocaml: mtraced's journal never named the client; going on"
	t0=$(now_s)
	go $D
	if ! wait_key $D rc-0-n 9000; then
		fail "ocaml_lwt_ran: no exit in 900 s: $(stdout_of $D stderr-0 2>&1 | head -c 500)"
		kill -TERM $CATO; wait $CATO
		dump_domu mtOC 20; xl destroy mtOC; stop_mtraced
		return
	fi
	t1=$(now_s)
	rc=$(stdout_of $D rc-0 | tr -d ' \n')
	s=$(stdout_of $D stdout-0 | tr -d '\n' | sed 's/\\n$//')
	info "ocaml: lwt_threads rc=$rc in $((t1 - t0)) s: $s"
	[ "$rc" = 0 ] && pass "ocaml_lwt_ran ($(echo "$s" | json threads) threads, $(echo "$s" | json events) events in $((t1 - t0)) s)" ||
		fail "ocaml_lwt_ran: rc=$rc: $(stdout_of $D stderr-0 2>&1 | head -c 500)"
	# the program waited for mtraced to read its ring down before it exited: what is
	# left is mtraced -> mtrace-cat (its output block-buffered until it exits); wait
	# for the file to stop growing, then stop it (it flushes)
	last=-1 i=0
	while [ $i -lt 60 ]; do
		sleep 1
		sz=$(stat -c %s /run/ocaml.json)
		[ "$sz" = "$last" ] && break
		last=$sz i=$((i+1))
	done
	sleep 2
	kill -TERM $CATO; wait $CATO
	# what mtrace-cat received, reduced in dom0 (no python here): events per op, each
	# site's name and threads, and how many created threads carry a site
	{
		echo "summary $s"
		echo "rc $rc"
		awk '
		/"op":"/ { if (match($0, /"op":"[a-z_]+"/)) ops[substr($0, RSTART + 6, RLENGTH - 7)]++ }
		/"op":"creates"/ { if (match($0, /"arg":[0-9]+/)) { c[substr($0, RSTART + 6, RLENGTH - 6)] = 1; nc++ } }
		/"op":"site"/ {
			if (match($0, /"thread":[0-9]+/)) s[substr($0, RSTART + 9, RLENGTH - 9)] = 1
			if (match($0, /"arg":[0-9]+/)) u[substr($0, RSTART + 6, RLENGTH - 6)]++
		}
		/"op":"site_name"/ {
			id = ""
			if (match($0, /"arg":[0-9]+/)) id = substr($0, RSTART + 6, RLENGTH - 6)
			if (match($0, /"str":"[^"]*"/)) nm[id] = substr($0, RSTART + 7, RLENGTH - 8)
		}
		END {
			for (k in ops) print "op", k, ops[k]
			for (k in u) print "site", k, u[k]
			for (k in nm) print "name", k, nm[k]
			n = 0
			for (k in c) if (k in s) n++
			print "sited", n, nc
		}' /run/ocaml.json
	} > /run/ocaml.account
	info "ocaml: mtrace-cat received $(grep -c '"op"' /run/ocaml.json) events ($(head -c 300 /run/ocaml-cat.err))"
	info "ocaml domid $D"
	blob ocaml.account /run/ocaml.account
	xl destroy mtOC
	stop_mtraced
}
