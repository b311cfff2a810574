# clock-reduce.awk - mtrace-cat -f json of the clock phase reduced to what
# check_clock.py reads (dom0 has no python, and its awk is busybox's: index/substr
# only).  One line of output per line of interest, fields as docs/json.md names them:
#   ev D TS OP HOST PORT        an event-channel event: guest ns, mtraced's host ns ("-"
#                               when the event carries none: off the timeline), its port
#   map D CLOCK OFFSET UNC SOURCE SINCE SEQ      a clock_map line
#   link D PORT REMOTE_D REMOTE_PORT              an evtchn_link line
#   pair SD SPORT STS SHOST RD RPORT RTS RHOST GAP UNC ORDER   an evtchn_pair line
# usage: awk -f clock-reduce.awk CAPTURE.json

# the value of "key": in s, quotes dropped; "-" when absent
function val(s, key,    i, r) {
	i = index(s, "\"" key "\":")
	if (!i)
		return "-"
	r = substr(s, i + length(key) + 3)
	sub(/[,}].*/, "", r)
	gsub(/"/, "", r)
	return r
}

/"type":"event"/ {
	op = val($0, "op")
	if (op == "evtchn_send" || op == "evtchn_recv")
		print "ev", val($0, "domid"), val($0, "ts"), op, val($0, "host_ns"), val($0, "arg")
	next
}
/"type":"clock_map"/ {
	print "map", val($0, "domid"), val($0, "clock"), val($0, "offset_ns"),
		val($0, "uncertainty_ns"), val($0, "source"), val($0, "since_host_ns"), val($0, "seq")
	next
}
/"type":"evtchn_link"/ {
	print "link", val($0, "domid"), val($0, "port"), val($0, "remote_domid"),
		val($0, "remote_port")
	next
}
/"type":"evtchn_pair"/ {
	i = index($0, "\"recv\":")
	s = substr($0, 1, i - 1)
	r = substr($0, i)
	print "pair", val(s, "domid"), val(s, "port"), val(s, "ts"), val(s, "host_ns"),
		val(r, "domid"), val(r, "port"), val(r, "ts"), val(r, "host_ns"),
		val(r, "gap_ns"), val(r, "uncertainty_ns"), val(r, "order")
	next
}
