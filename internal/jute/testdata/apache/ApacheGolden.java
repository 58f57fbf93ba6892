// ApacheGolden prints the bytes that Apache ZooKeeper's own jute classes
// write for a set of client-protocol records, one "name hex" line each.
// golden_test.go encodes the same values with package jute and compares.
//
// Regenerate (Debian's zookeeper package, 3.8):
//
//	cd internal/jute/testdata/apache
//	CP=/usr/share/java/zookeeper.jar:/usr/share/java/zookeeper-jute.jar
//	javac -cp $CP -d /tmp/golden ApacheGolden.java
//	java -cp $CP:/tmp/golden ApacheGolden > ../apache_golden.txt
//
// The values here must match goldenValues in golden_test.go.

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import org.apache.jute.BinaryOutputArchive;
import org.apache.jute.Record;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.MultiOperationRecord;
import org.apache.zookeeper.MultiResponse;
import org.apache.zookeeper.Op;
import org.apache.zookeeper.OpResult;
import org.apache.zookeeper.data.ACL;
import org.apache.zookeeper.data.ClientInfo;
import org.apache.zookeeper.data.Id;
import org.apache.zookeeper.data.Stat;
import org.apache.zookeeper.proto.*;

public class ApacheGolden {
    interface Body {
        void write(BinaryOutputArchive a) throws IOException;
    }

    static void emit(String name, Body body) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        body.write(BinaryOutputArchive.getArchive(out));
        StringBuilder sb = new StringBuilder(name).append(' ');
        for (byte b : out.toByteArray()) {
            sb.append(String.format("%02x", b));
        }
        System.out.println(sb);
    }

    static void emit(String name, Record r) throws IOException {
        emit(name, a -> r.serialize(a, "r"));
    }

    static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    public static void main(String[] args) throws IOException {
        Stat stat = new Stat(0x100000001L, 0x200000002L, 1700000000000L, 1700000000001L,
            5, 6, 7, 0x7fffffff00000001L, 9, 10, 0x300000003L);
        List<ACL> open = Collections.singletonList(new ACL(31, new Id("world", "anyone")));
        List<ACL> two = Arrays.asList(new ACL(1, new Id("digest", "u:h=")), new ACL(31, new Id("ip", "10.0.0.1")));
        byte[] passwd = new byte[16];
        for (int i = 0; i < 16; i++) {
            passwd[i] = (byte) (i + 1);
        }

        // The Java client writes the readOnly byte after the record itself
        // (ClientCnxn.Packet.createBB); a pre-3.4 client does not.
        ConnectRequest creq = new ConnectRequest(0, 0x500000007L, 30000, 0x1234567890abcdefL, passwd);
        emit("ConnectRequest", creq);
        emit("ConnectRequestRO", a -> { creq.serialize(a, "connect"); a.writeBool(true, "readOnly"); });
        ConnectResponse crsp = new ConnectResponse(0, 10000, 0x1234567890abcdefL, passwd);
        emit("ConnectResponse", crsp);
        emit("ConnectResponseRO", a -> { crsp.serialize(a, "connect"); a.writeBool(false, "readOnly"); });

        emit("RequestHeader", new RequestHeader(7, 4));
        emit("ReplyHeader", new ReplyHeader(-1, 0x100000002L, -101));
        emit("MultiHeader", new MultiHeader(-1, true, -1));
        emit("AuthPacket", new AuthPacket(0, "digest", bytes("user:pass")));
        emit("SetWatches", new SetWatches(0x42L, Arrays.asList("/a", "/b"), Collections.emptyList(), Arrays.asList("/c")));
        emit("SetWatches2", new SetWatches2(0x43L, Arrays.asList("/d"), Arrays.asList("/e", "/f"), Collections.emptyList(),
            Arrays.asList("/p"), Arrays.asList("/r", "/s")));

        emit("GetDataRequest", new GetDataRequest("/zoo/a", true));
        emit("ExistsRequest", new ExistsRequest("/zoo", false));
        emit("GetACLRequest", new GetACLRequest("/zoo"));
        emit("CreateRequest", new CreateRequest("/zoo/n-", bytes("hello"), two, 3));
        emit("CreateRequestNullData", new CreateRequest("/x", null, open, 0));
        emit("CreateTTLRequest", new CreateTTLRequest("/ttl", bytes("t"), open, 5, 60000L));
        emit("DeleteRequest", new DeleteRequest("/zoo/a", -1));
        emit("SetDataRequest", new SetDataRequest("/zoo/a", bytes("new"), 3));
        emit("SetACLRequest", new SetACLRequest("/zoo/a", open, 2));
        emit("ReconfigRequest", new ReconfigRequest(null, "3", null, -1L));
        emit("AddWatchRequest", new AddWatchRequest("/w", 1));
        emit("RemoveWatchesRequest", new RemoveWatchesRequest("/w", 3));
        emit("GetSASLRequest", new GetSASLRequest(bytes("tok")));

        List<Op> ops = new ArrayList<>();
        ops.add(Op.create("/m", bytes("x"), open, CreateMode.PERSISTENT));
        ops.add(Op.delete("/m/old", 4));
        ops.add(Op.check("/m", 1));
        emit("Multi", new MultiOperationRecord(ops));
        List<Op> ops2 = new ArrayList<>();
        ops2.add(Op.create("/c", null, open, CreateMode.CONTAINER));
        ops2.add(Op.create("/t", bytes("y"), open, CreateMode.PERSISTENT_WITH_TTL, 1000L));
        ops2.add(Op.setData("/m", bytes("z"), -1));
        emit("MultiContainerTTL", new MultiOperationRecord(ops2));
        emit("MultiRead", new MultiOperationRecord(Arrays.asList(Op.getData("/a"), Op.getChildren("/b"))));
        emit("MultiEmpty", new MultiOperationRecord(Collections.emptyList()));

        emit("CreateResponse", new CreateResponse("/zoo/n-0000000001"));
        emit("Create2Response", new Create2Response("/zoo/n-0000000001", stat));
        emit("SetDataResponse", new SetDataResponse(stat));
        emit("GetDataResponse", new GetDataResponse(bytes("hello"), stat));
        emit("GetDataResponseNull", new GetDataResponse(null, stat));
        emit("GetChildrenResponse", new GetChildrenResponse(Arrays.asList("a", "bb")));
        emit("GetChildren2Response", new GetChildren2Response(Collections.emptyList(), stat));
        emit("GetACLResponse", new GetACLResponse(two, stat));
        emit("GetAllChildrenNumberResponse", new GetAllChildrenNumberResponse(12));
        emit("GetEphemeralsResponse", new GetEphemeralsResponse(Arrays.asList("/e1", "/e2")));
        emit("WhoAmIResponse", new WhoAmIResponse(Arrays.asList(new ClientInfo("ip", "127.0.0.1"), new ClientInfo("digest", "u"))));
        emit("ErrorResponse", new ErrorResponse(-110));
        emit("WatcherEvent", new WatcherEvent(2, 3, "/zoo/a"));
        emit("SyncResponse", new SyncResponse("/zoo"));
        emit("SetSASLResponse", new SetSASLResponse(null));

        MultiResponse ok = new MultiResponse();
        ok.add(new OpResult.CreateResult("/m"));
        ok.add(new OpResult.CreateResult("/m2", stat));
        ok.add(new OpResult.DeleteResult());
        ok.add(new OpResult.SetDataResult(stat));
        ok.add(new OpResult.CheckResult());
        emit("MultiResponse", ok);
        // A failed multi: ops before the failing one OK, after it RuntimeInconsistency.
        MultiResponse failed = new MultiResponse();
        failed.add(new OpResult.ErrorResult(0));
        failed.add(new OpResult.ErrorResult(-101));
        failed.add(new OpResult.ErrorResult(-2));
        emit("MultiResponseFailed", failed);
        MultiResponse read = new MultiResponse();
        read.add(new OpResult.GetDataResult(bytes("d"), stat));
        read.add(new OpResult.GetChildrenResult(Arrays.asList("x")));
        read.add(new OpResult.ErrorResult(-101));
        emit("MultiResponseRead", read);
        emit("MultiResponseEmpty", new MultiResponse());
    }
}
