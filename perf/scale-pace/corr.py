import sys,re,datetime
d=sys.argv[1]
# snapshot intervals: end time from log, duration from mntr sum deltas -> approximate by snapshottime max? use log end + per-snapshot durations from cnt/sum deltas
ends=[]
for l in open(d+'/server.log'):
    if 'snapshot taken' in l:
        t=re.search(r'time=(\S+)',l).group(1)
        ends.append(datetime.datetime.fromisoformat(t.replace('Z','+00:00')).timestamp())
rows=[];T=None
for l in open(d+'/samples.txt'):
    if l.startswith('T '):
        p=l.split(); T=(float(p[1]),int(p[2])+int(p[3]),int(p[5]) if len(p)>5 else 0)
    elif l.startswith('zk_') and T:
        kv=dict(zip(l.split()[0::2],l.split()[1::2]))
        rows.append((T[0],T[1],T[2],int(kv.get('zk_cnt_fsynctime',0)),float(kv.get('zk_sum_fsynctime',0)),int(kv.get('zk_cnt_snapshottime',0)),float(kv.get('zk_sum_snapshottime',0)),int(kv.get('zk_znode_count',0))))
# snapshot durations: sum deltas at count change
durs=[];pc,ps=0,0
for r in rows:
    if r[5]>pc: durs.append((r[6]-ps)/max(1,r[5]-pc)); pc,ps=r[5],r[6]
spans=[(e-dd/1000,e) for e,dd in zip(ends,durs)]
insnap=[0,0,0];out=[0,0,0]
for a,b in zip(rows,rows[1:]):
    n=b[3]-a[3]; s=b[4]-a[4]; mid=(a[0]+b[0])/2
    z=b[7]-a[7]; dt=b[0]-a[0]
    during=any(x<=mid<=y for x,y in spans)
    acc=insnap if during else out
    acc[0]+=n;acc[1]+=s;acc[2]+=z/dt
    acc.append(z/dt)
for name,acc in (('during snapshot',insnap),('between',out)):
    k=len(acc)-3
    print(name, 'intervals',k,'fsyncs',acc[0],'avg fsync ms %.1f'%(acc[1]/max(1,acc[0])),'creates/s mean %.0f'%(acc[2]/max(1,k)))
print('snapshots (dur ms):',[round(x) for x in durs])
