# what the heartbeat in run.sh shows every minute: mtraced's CPU time, the domains'
# states and CPU seconds, the last console line of each domU
m=$(pidof mtraced)
[ -n "$m" ] && c=$(awk '{ printf "%.1fs(user:%.1f,sys:%.1f)", ($14 + $15) / 100, $14 / 100, $15 / 100 }' /proc/${m%% *}/stat)
echo "XENTEST INFO   mtraced-cpu=${c:--} domains: $(xl list 2>/dev/null |
	awk 'NR > 1 { printf "%s:%s:%.0fs ", $1, $5, $6 }')"
for f in /var/log/xen/guest-*.log; do
	[ -s "$f" ] && echo "XENTEST INFO   ${f##*/guest-}: $(tail -1 "$f" | cut -c1-120)"
done
