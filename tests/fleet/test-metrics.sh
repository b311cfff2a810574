#!/bin/bash
# mtrace-ship --metrics: its own figures on /metrics, scraped while it ships, while NATS
# is away (it spools) and after (it drains).  Every scrape passes promtool check metrics;
# the values follow what happened and, once the shipper is idle, equal the figures in
# its log; a real Prometheus scrapes it and holds the same values.
. "$(dirname "$0")/../rig.sh"
. "$HERE/lib.sh"
PROMCHECK=$MTRACE_SRC/tests/exporter/promcheck.py
for p in promtool prometheus; do
	command -v "$p" >/dev/null || { echo "SKIP: no $p"; exit 77; }
done

nats_start
host_up h1
# no statistics: once the guest is done nothing moves, and the figures can be compared
ship h1 --spool "$T/h1/spool" --ack-ms 1000 --stats 0 --metrics 127.0.0.1:0
wait_until 10 grep -q 'metrics on http://127.0.0.1:[0-9]*/metrics' "$T/h1.ship.log" ||
	fail "mtrace-ship does not say where its metrics are"
URL=$(grep -o 'http://127.0.0.1:[0-9]*/metrics' "$T/h1.ship.log" | head -1)
host_clients h1 1
scrape() {	# the metrics into a new $T/scrape.* (checked by promtool); $S is the file
	S=$(mktemp "$T/scrape.XXXXXX")
	"$PYTHON" "$PROMCHECK" fetch "$URL" "$S" || fail "GET $URL failed"
	promtool check metrics <"$S" >"$S.lint" 2>&1 || fail "promtool check metrics: $(cat "$S.lint")"
}
m() {	# NAME: its value in a fresh scrape
	scrape
	"$PYTHON" "$HERE/metric.py" "$S" "$1" || fail "no $1 in $S"
}
scrape
grep -q '^text/plain; version=0.0.4' "$S.ctype" || fail "content type $(cat "$S.ctype")"
[ "$(m mtrace_ship_mtraced_up)" = 1 ] || fail "mtraced_up is not 1"
[ "$(m mtrace_ship_nats_up)" = 1 ] || fail "nats_up is not 1"
note "first scrape: $(grep -vc '^#' "$S") samples, promtool check metrics says nothing"

# a real Prometheus scraping the shipper every second
PROM_PORT=$(free_port)
cat >"$T/prometheus.yml" <<CONF
global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: mtrace
    static_configs:
      - targets: ['${URL#http://}']
CONF
sed -i "s|/metrics'\]|']|" "$T/prometheus.yml"
promtool check config "$T/prometheus.yml" >"$T/promtool.out" 2>&1 || fail "$(cat "$T/promtool.out")"
prometheus --config.file="$T/prometheus.yml" --storage.tsdb.path="$T/tsdb" \
	--web.listen-address="127.0.0.1:$PROM_PORT" --log.level=warn >"$T/prometheus.log" 2>&1 &
PIDS+=("$!")
PROM=http://127.0.0.1:$PROM_PORT
"$PYTHON" "$PROMCHECK" wait-up "$PROM" 60 || fail "Prometheus does not scrape mtrace-ship"

host_guest h1 load --domid 11 -- "$LOAD" --wait-reader 10 --linger 10 \
	--summary "$T/h1/load.json" -n 200000 -p 64 --rate 20000 >/dev/null
WANT=50 wait_progress "shipped_messages_total" 10 30 m mtrace_ship_shipped_messages_total
nats_kill
note "nats-server killed"
wait_until 20 eval '[ "$(m mtrace_ship_nats_up)" = 0 ]' || fail "nats_up stays 1 with NATS away"
WANT=50 wait_progress "spool_messages while NATS is away" 10 30 m mtrace_ship_spool_messages
[ "$(m mtrace_ship_spool_bytes)" -gt 0 ] || fail "spool_bytes is 0 with messages in the spool"
nats_start
note "nats-server back"
wait_until 30 eval '[ "$(m mtrace_ship_spool_messages)" = 0 ] && [ "$(m mtrace_ship_nats_up)" = 1 ]' ||
	fail "the spool is not drained: spool_messages $(m mtrace_ship_spool_messages)"
host_idle h1
# idle: the scrape equals the figures the log prints every second
keys="shipped:shipped_messages_total bytes:shipped_bytes_total spooled:spooled_messages_total
drained:drained_messages_total dropped:dropped_messages_total retried:retried_publishes_total
in_flight_max:acks_pending_max split:split_messages_total set_aside:set_aside_messages_total
taken:taken_ids_total spool_bad:spool_invalid_records_total"
same() {
	local k
	scrape
	for k in $keys; do
		[ "$(figure h1 "${k%%:*}")" = "$("$PYTHON" "$HERE/metric.py" "$S" "mtrace_ship_${k#*:}")" ] ||
			return 1
	done
}
wait_until 30 same || fail "the scrape and the log disagree: $(grep 'figures:' "$T/h1.ship.log" | tail -1) / $(grep -v '^#' "$S" | tr '\n' ' ')"
spooled=$(figure h1 spooled)
[ "$spooled" -gt 0 ] && [ "$(figure h1 drained)" = "$spooled" ] ||
	fail "spooled $spooled, drained $(figure h1 drained)"
[ "$(m mtrace_ship_acks_pending)" = 0 ] || fail "acks pending while idle"
note "scrape = log: $(grep 'figures:' "$T/h1.ship.log" | tail -1)"
# Prometheus holds what the shipper serves
shipped=$(figure h1 shipped)
wait_until 20 eval '[ "$("$PYTHON" "$HERE/metric.py" --prom "$PROM" mtrace_ship_shipped_messages_total)" = "$shipped" ]' ||
	fail "Prometheus has shipped=$("$PYTHON" "$HERE/metric.py" --prom "$PROM" mtrace_ship_shipped_messages_total), the shipper $shipped"
[ "$("$PYTHON" "$HERE/metric.py" --prom "$PROM" mtrace_ship_spooled_messages_total)" = "$spooled" ] ||
	fail "Prometheus has another spooled figure"
"$PYTHON" "$PROMCHECK" scrape-health "$PROM" || fail "Prometheus refused samples"
ship_stop h1
n=$(ls "$T"/scrape.* | grep -vc '\.\(lint\|ctype\)$')
pass "mtrace-ship /metrics: $n scrapes pass promtool; spooled $spooled, drained, shipped $shipped as in the log and in Prometheus"
