import sys,re,subprocess
for d in sys.argv[1:]:
    print('==',d)
    fill=open(d+'/fill.txt').read()
    m=re.search(r'RESULT (.*)',fill)
    kv=dict(x.split('=',1) for x in m.group(1).split())
    el=float(kv['elapsed_s']); n=int(kv['created'])
    print('fill: %s creates in %.0fs = %s/s; server %.2f cores -> %.1f us/create; client %.2f; other %s; kernel %s'%(n,el,kv['creates_per_s'],float(kv['cpu_server']),float(kv['cpu_server'])*el/n*1e6,float(kv['cpu_client']),kv['cpu_other'],kv['cpu_kernel']))
    T=[];Z=[]
    for l in open(d+'/samples.txt'):
        if l.startswith('T '):
            p=l.split(); T.append(p)
        elif l.startswith('zk_'):
            w=l.split(); Z.append(dict(zip(w[0::2],w[1::2])))
    # schedstat over fill: first and last sample where znode count grows
    if len(T)>2 and len(T[1])>=9:
        a=T[1]; b=T[-2]
        run=(float(b[-2])-float(a[-2]))/1e9; wait=(float(b[-1])-float(a[-1]))/1e9
        print('server threads: ran %.1fs, waited for a CPU %.1fs (runqueue wait/run %.2f)'%(run,wait,wait/max(run,1e-9)))
    last=Z[-1]
    print('snapshots: %s, total %.1fs, max %s ms; fsyncs %s avg %.1f ms max %s; batch avg %s'%(last['zk_cnt_snapshottime'],float(last['zk_sum_snapshottime'])/1000,last['zk_max_snapshottime'],last['zk_cnt_fsynctime'],float(last['zk_sum_fsynctime'])/max(1,int(last['zk_cnt_fsynctime'])),last['zk_max_fsynctime'],last['zk_avg_sync_processor_batch_size']))
    try:
        for l in open(d+'/ops.txt'):
            kv=dict(x.split('=',1) for x in l.split()[1:] if '=' in x)
            print('  %-4s srv_us_per_op %s ops/s %s p50 %s p99 %s cpu_server %s cpu_other %s'%(kv.get('op'),kv.get('srv_us_per_op'),kv.get('ops_per_s'),kv.get('p50_ms'),kv.get('p99_ms'),kv.get('cpu_server'),kv.get('cpu_other')))
    except FileNotFoundError: pass
    g=[l for l in open(d+'/server.log') if l.startswith('gc ')]
    if g: print('gc cycles',len(g),'last:',g[-1].strip()[:150])
