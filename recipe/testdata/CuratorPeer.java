// CuratorPeer is driven by the Go interop tests (curator_interop_test.go):
// it runs Curator 5.4 recipes on the server given as its first argument
// and reads one command per line on stdin, answering one line per event
// on stdout. It exists only to check that Zoo's recipes and Curator's
// share node layouts and work together.
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.leader.LeaderLatch;
import org.apache.curator.framework.recipes.leader.LeaderLatchListener;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreV2;
import org.apache.curator.framework.recipes.locks.Lease;
import org.apache.curator.framework.recipes.queue.DistributedDelayQueue;
import org.apache.curator.framework.recipes.queue.QueueBuilder;
import org.apache.curator.framework.recipes.queue.QueueConsumer;
import org.apache.curator.framework.recipes.queue.QueueSerializer;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.framework.recipes.shared.SharedCount;
import org.apache.curator.retry.RetryForever;
import org.apache.curator.x.discovery.ServiceDiscovery;
import org.apache.curator.x.discovery.ServiceDiscoveryBuilder;
import org.apache.curator.x.discovery.ServiceInstance;
import org.apache.curator.x.discovery.UriSpec;
import org.apache.curator.x.discovery.details.JsonInstanceSerializer;

public class CuratorPeer {
    static final QueueSerializer<String> STRINGS = new QueueSerializer<String>() {
        public byte[] serialize(String s) { return s.getBytes(StandardCharsets.UTF_8); }
        public String deserialize(byte[] b) { return new String(b, StandardCharsets.UTF_8); }
    };

    static synchronized void say(String s) {
        System.out.println(s);
        System.out.flush();
    }

    public static void main(String[] args) throws Exception {
        CuratorFramework client = CuratorFrameworkFactory.builder()
                .connectString(args[0]).sessionTimeoutMs(10000).connectionTimeoutMs(10000)
                .retryPolicy(new RetryForever(100)).build();
        client.start();
        client.blockUntilConnected();
        say("ready");
        InterProcessMutex mutex = null;
        LeaderLatch latch = null;
        InterProcessSemaphoreV2 sem = null;
        Lease lease = null;
        List<ServiceDiscovery<Void>> discoveries = new ArrayList<>();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        for (String line; (line = in.readLine()) != null; ) {
            String[] f = line.trim().split(" ");
            try {
                switch (f[0]) {
                    case "lock":
                        mutex = new InterProcessMutex(client, f[1]);
                        mutex.acquire();
                        say("locked");
                        break;
                    case "unlock":
                        mutex.release();
                        say("unlocked");
                        break;
                    case "latch": {
                        latch = new LeaderLatch(client, f[1], f[2]);
                        final String id = f[2];
                        latch.addListener(new LeaderLatchListener() {
                            public void isLeader() { say("leader " + id); }
                            public void notLeader() { say("notleader " + id); }
                        });
                        latch.start();
                        say("started");
                        break;
                    }
                    case "leader":
                        say("leaderis " + latch.getLeader().getId());
                        break;
                    case "unlatch":
                        latch.close();
                        say("closed");
                        break;
                    case "sem":
                        sem = new InterProcessSemaphoreV2(client, f[1], Integer.parseInt(f[2]));
                        lease = sem.acquire();
                        say("leased");
                        break;
                    case "unsem":
                        lease.close();
                        say("returned");
                        break;
                    case "count": {
                        SharedCount c = new SharedCount(client, f[1], 0);
                        c.start();
                        c.setCount(Integer.parseInt(f[2]));
                        say("counted " + c.getCount());
                        c.close();
                        break;
                    }
                    case "register": { // register BASE NAME ID ADDRESS PORT
                        ServiceInstance<Void> inst = ServiceInstance.<Void>builder().name(f[2]).id(f[3])
                                .address(f[4]).port(Integer.parseInt(f[5]))
                                .uriSpec(new UriSpec("{scheme}://foo.com:{port}")).build();
                        ServiceDiscovery<Void> d = ServiceDiscoveryBuilder.builder(Void.class).client(client)
                                .basePath(f[1]).thisInstance(inst).build();
                        d.start();
                        discoveries.add(d);
                        say("registered " + new String(new JsonInstanceSerializer<>(Void.class).serialize(inst),
                                StandardCharsets.UTF_8));
                        break;
                    }
                    case "query": { // query BASE NAME
                        ServiceDiscovery<Void> d = ServiceDiscoveryBuilder.builder(Void.class).client(client)
                                .basePath(f[1]).build();
                        d.start();
                        Collection<ServiceInstance<Void>> all = d.queryForInstances(f[2]);
                        StringBuilder b = new StringBuilder("instances");
                        for (ServiceInstance<Void> i : all) {
                            b.append(' ').append(i.getId()).append('@').append(i.getAddress()).append(':').append(i.getPort());
                        }
                        say(b.toString());
                        break;
                    }
                    case "delayput": { // delayput PATH ITEM DELAYMS: a producer-only Curator delay queue
                        DistributedDelayQueue<String> q = QueueBuilder.builder(client, null, STRINGS, f[1]).buildDelayQueue();
                        q.start();
                        q.put(f[2], System.currentTimeMillis() + Long.parseLong(f[3]));
                        q.close();
                        say("put");
                        break;
                    }
                    case "delaytake": { // delaytake PATH: consume one item, say it
                        final java.util.concurrent.BlockingQueue<String> got = new java.util.concurrent.LinkedBlockingQueue<>();
                        QueueConsumer<String> consumer = new QueueConsumer<String>() {
                            public void consumeMessage(String m) { got.add(m); }
                            public void stateChanged(CuratorFramework c, ConnectionState s) {}
                        };
                        DistributedDelayQueue<String> q = QueueBuilder.builder(client, consumer, STRINGS, f[1]).buildDelayQueue();
                        q.start();
                        String m = got.take();
                        q.close();
                        say("took " + m);
                        break;
                    }
                    case "quit":
                        for (ServiceDiscovery<Void> d : discoveries) d.close();
                        client.close();
                        say("bye");
                        return;
                    default:
                        say("error unknown command " + f[0]);
                }
            } catch (Exception e) {
                say("error " + e.toString().replace('\n', ' '));
            }
        }
        client.close();
    }
}
