# lib.sh - what the exporter tests add to tests/rig.sh: mtrace-exporter and Prometheus
# started on free loopback ports (stopped at exit with the rest), a scrape checked by
# promtool, and the blocks of docs/fleet.md.
# Environment (tests/exporter/meson.build): rig_env, EXPORTER.
. "$MTRACE_SRC/tests/rig.sh"
FIXTURE=$MTRACE_SRC/data/mirage/log-x86.sexp
TESTS=$MTRACE_SRC/tests/exporter
EXP_PID= PROM_PID= EXP_URL= PROM_URL=

need() {	# programs or commands the test cannot do without: a skip, said why
	local p
	for p in "$@"; do
		[ -x "$p" ] || command -v "$p" >/dev/null ||
			{ echo "SKIP: $p is not available" >&2; exit 77; }
	done
}

free_port() {
	"$PYTHON" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# exporter_start ARGS...: mtrace-exporter on a free port of 127.0.0.1; sets EXP_URL.
exporter_start() {
	local port
	"$EXPORTER" -s "$SOCK" -l 127.0.0.1:0 "$@" 2>"$T/exporter.log" &
	EXP_PID=$!
	PIDS+=("$EXP_PID")
	for _ in $(seq 100); do
		port=$(sed -n 's|^mtrace-exporter: listening on http://127.0.0.1:\([0-9]*\)/metrics$|\1|p' "$T/exporter.log")
		[ -n "$port" ] && { EXP_URL=http://127.0.0.1:$port; return 0; }
		kill -0 "$EXP_PID" 2>/dev/null || break
		sleep 0.1
	done
	echo "mtrace-exporter did not start" >&2
	return 1
}

# scrape FILE [ACCEPT]: GET /metrics into FILE, checked with promtool check metrics.
scrape() {
	"$PYTHON" "$TESTS/promcheck.py" fetch "$EXP_URL/metrics" "$1" "${2:-}" || return 1
	promtool check metrics <"$1" >"$1.lint" 2>&1 || {
		echo "promtool check metrics on $1:" >&2
		cat "$1.lint" >&2
		return 1
	}
}

# extract NAME: the block marked "<!-- extract: NAME -->" in docs/fleet.md, into $T/NAME.
extract() {
	awk -v want="<!-- extract: $1 -->" '
		$0 == want { armed = 1; next }
		armed && /^```/ { if (inblock) exit; inblock = 1; next }
		inblock { print }' "$MTRACE_SRC/docs/fleet.md" >"$T/$1"
	[ -s "$T/$1" ] || { echo "docs/fleet.md has no block $1" >&2; return 1; }
}

# prom_start TARGET RULES: Prometheus on a free port scraping TARGET every second,
# evaluating RULES every second; sets PROM_URL.
prom_start() {
	local port
	port=$(free_port)
	cat >"$T/prometheus.yml" <<CONF
global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
rule_files:
  - $2
scrape_configs:
  - job_name: mtrace
    static_configs:
      - targets: ['$1']
CONF
	promtool check config "$T/prometheus.yml" >"$T/promtool-config.out" 2>&1 ||
		{ cat "$T/promtool-config.out" >&2; return 1; }
	prometheus --config.file="$T/prometheus.yml" --storage.tsdb.path="$T/tsdb" \
		--web.listen-address="127.0.0.1:$port" --log.level=warn \
		>"$T/prometheus.log" 2>&1 &
	PROM_PID=$!
	PIDS+=("$PROM_PID")
	PROM_URL=http://127.0.0.1:$port
	"$PYTHON" "$TESTS/promcheck.py" wait-up "$PROM_URL" 60
}
