#!/bin/bash
# restart.sh BIN LABEL [env...]: start BIN on /tmp/mem/d1.cfg, wait until it serves all znodes
B=$1; L=$2; shift 2
cd /tmp/mem
t0=$(date +%s.%N)
env "$@" $B server -cpuprofile /tmp/mem/restart-$L.prof d1.cfg > /tmp/mem/restart-$L.log 2>&1 &
pid=$!
cnt=0
for i in $(seq 1 6000); do
  cnt=$( { exec 3<>/dev/tcp/127.0.0.1/24581 && printf mntr >&3 && timeout 2 cat <&3; } 2>/dev/null | awk '$1=="zk_znode_count" {print $2}') || true
  [[ -n $cnt && $cnt -ge 1000000 ]] && break
  sleep 0.05
done
t1=$(date +%s.%N)
read ut st <<<$(awk '{print $14, $15}' /proc/$pid/stat)
rss=$(awk '/^VmRSS/ {print $2}' /proc/$pid/status)
sleep 5
rss5=$(awk '/^VmRSS/ {print $2}' /proc/$pid/status)
hwm=$(awk '/^VmHWM/ {print $2}' /proc/$pid/status)
kill $pid; wait $pid
echo "RESTART $L wall_s=$(awk -v a=$t0 -v b=$t1 'BEGIN{printf "%.2f", b-a}') cpu_s=$(awk -v u=$ut -v s=$st 'BEGIN{printf "%.2f",(u+s)/100}') rss_mib=$((rss/1024)) rss5_mib=$((rss5/1024)) hwm_mib=$((hwm/1024)) znodes=$cnt load=$(cut -d' ' -f1 /proc/loadavg)"
