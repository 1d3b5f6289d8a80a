// TreeRef applies the txns of javatree_test.go to a real ZooKeeper 3.8.0
// DataTree and prints what javatree_test.go compares (java_tree.txt), and
// writes the snapshot java_snapshot.13; given a second argument, a directory
// holding a snapshot.13, it loads that instead and prints the loaded tree.
// Build and run with the 3.8.0 jars (Debian: apt-get install zookeeper):
//   CP=/usr/share/java/zookeeper.jar:/usr/share/java/zookeeper-jute.jar:/usr/share/java/slf4j-api.jar:/usr/share/java/slf4j-nop.jar:/usr/share/java/metrics-core.jar
//   javac -cp $CP -d out TreeRef.java && java -cp out:$CP org.apache.zookeeper.server.TreeRef snapdir [loaddir]
package org.apache.zookeeper.server;

import java.io.*;
import java.nio.file.*;
import java.util.*;
import org.apache.jute.Record;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.data.*;
import org.apache.zookeeper.server.persistence.FileSnap;
import org.apache.zookeeper.txn.*;
import org.apache.jute.BinaryOutputArchive;

// Applies a fixed txn list to a real 3.8.0 DataTree, printing the tree digest
// after each txn, then writes a snapshot (FileSnap) of it to args[0]. With
// args[1], it loads the snapshot in that directory instead and prints the
// loaded tree.
public class TreeRef {
  static long t(long zxid) { return 1000 + zxid; }
  static TxnHeader h(long session, long zxid, int type) { return new TxnHeader(session, (int) zxid, zxid, t(zxid), type); }
  static Txn sub(int type, Record r) throws IOException {
    ByteArrayOutputStream b = new ByteArrayOutputStream();
    r.serialize(BinaryOutputArchive.getArchive(b), "txn");
    return new Txn(type, b.toByteArray());
  }
  public static void main(String[] a) throws Exception {
    List<ACL> digest = Arrays.asList(new ACL(31, new Id("digest", "u:p3Ghf6M1l4ZGMzsY7O7Ge+3XGmg=")));
    Object[][] txns = {
      {h(0x11, 1, ZooDefs.OpCode.createSession), new CreateSessionTxn(3000)},
      {h(0x11, 2, ZooDefs.OpCode.create), new CreateTxn("/a", "hello".getBytes(), ZooDefs.Ids.OPEN_ACL_UNSAFE, false, 1)},
      {h(0x11, 3, ZooDefs.OpCode.create), new CreateTxn("/a/b", new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, true, 1)},
      {h(0x11, 4, ZooDefs.OpCode.setData), new SetDataTxn("/a", "world".getBytes(), 1)},
      {h(0x11, 5, ZooDefs.OpCode.setACL), new SetACLTxn("/a", digest, 1)},
      {h(0x11, 6, ZooDefs.OpCode.create2), new CreateTxn("/c", null, ZooDefs.Ids.READ_ACL_UNSAFE, false, 2)},
      {h(0x11, 7, ZooDefs.OpCode.createContainer), new CreateContainerTxn("/box", "x".getBytes(), ZooDefs.Ids.OPEN_ACL_UNSAFE, 3)},
      {h(0x11, 8, ZooDefs.OpCode.multi), new MultiTxn(Arrays.asList(
          sub(ZooDefs.OpCode.create, new CreateTxn("/box/i", new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, false, 1)),
          sub(ZooDefs.OpCode.setData, new SetDataTxn("/c", "d".getBytes(), 1)),
          sub(ZooDefs.OpCode.delete, new DeleteTxn("/a/b"))))},
      {h(0x11, 9, ZooDefs.OpCode.multi), new MultiTxn(Arrays.asList(
          sub(ZooDefs.OpCode.create, new CreateTxn("/zz", new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, false, 4)),
          sub(ZooDefs.OpCode.error, new ErrorTxn(-103)),
          sub(ZooDefs.OpCode.error, new ErrorTxn(-2))))},
      {h(0x11, 10, ZooDefs.OpCode.create), new CreateTxn("/zookeeper/quota/a", new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, false, 1)},
      {h(0x11, 11, ZooDefs.OpCode.create), new CreateTxn("/zookeeper/quota/a/zookeeper_limits", "count=5,bytes=100".getBytes(), ZooDefs.Ids.OPEN_ACL_UNSAFE, false, 1)},
      {h(0x11, 12, ZooDefs.OpCode.create), new CreateTxn("/zookeeper/quota/a/zookeeper_stats", new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, false, 2)},
      {h(0x11, 13, ZooDefs.OpCode.create), new CreateTxn("/a/q", "12345".getBytes(), ZooDefs.Ids.OPEN_ACL_UNSAFE, false, 3)},
      {h(0x11, 14, ZooDefs.OpCode.delete), new DeleteTxn("/box/i")},
      {h(0x22, 15, ZooDefs.OpCode.create), new CreateTxn("/e", new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, true, 5)},
      {h(0x22, 16, ZooDefs.OpCode.create), new CreateTxn("/a/e2", "x".getBytes(), ZooDefs.Ids.CREATOR_ALL_ACL, true, 4)},
      {h(0x22, 17, ZooDefs.OpCode.closeSession), new CloseSessionTxn(Arrays.asList("/e"))},
      {h(0x11, 18, ZooDefs.OpCode.error), new ErrorTxn(-101)},
      {h(0x11, 19, ZooDefs.OpCode.setData), new SetDataTxn("/", "root".getBytes(), 1)},
    };
    if (a.length > 1) { load(a[1]); return; }
    DataTree dt = new DataTree();
    System.out.println("digest 0 " + dt.getTreeDigest());
    for (Object[] x : txns) {
      TxnHeader hdr = (TxnHeader) x[0];
      DataTree.ProcessTxnResult rc = dt.processTxn(hdr, (Record) x[1], null);
      System.out.println("digest " + hdr.getZxid() + " " + dt.getTreeDigest() + " err " + rc.err);
    }
    Map<Long, Integer> sessions = new HashMap<>();
    sessions.put(0x11L, 3000);
    sessions.put(0x22L, 5000);
    File dir = new File(a[0]);
    dir.mkdirs();
    new FileSnap(dir).serialize(dt, sessions, new File(dir, "snapshot.13"), true);
    dump(dt, sessions);
  }
  static void load(String dir) throws Exception {
    DataTree dt = new DataTree();
    Map<Long, Integer> sessions = new HashMap<>();
    long zxid = new FileSnap(new File(dir)).deserialize(dt, sessions);
    System.out.println("loaded zxid " + zxid + " digest " + dt.getTreeDigest());
    dump(dt, sessions);
  }
  static void dump(DataTree dt, Map<Long, Integer> sessions) throws Exception {
    System.out.println("sessions " + new TreeMap<>(sessions));
    TreeSet<String> paths = new TreeSet<>();
    java.lang.reflect.Field f = DataTree.class.getDeclaredField("nodes");
    f.setAccessible(true);
    for (Map.Entry<String, DataNode> e : ((NodeHashMap) f.get(dt)).entrySet()) paths.add(e.getKey());
    for (String p : paths) {
      Stat s = new Stat();
      DataNode n = dt.getNode(p);
      n.copyStat(s);
      System.out.println("node " + p + " " + s.getCzxid() + " " + s.getMzxid() + " " + s.getPzxid() + " " + s.getCversion()
        + " " + s.getVersion() + " " + s.getAversion() + " " + s.getEphemeralOwner() + " " + s.getDataLength() + " " + s.getNumChildren()
        + " " + dt.getACL(n) + " " + (n.getData() == null ? "null" : new String(n.getData())));
    }
    System.out.println("ephemerals " + new TreeMap<>(dt.getEphemerals()) + " containers " + new TreeSet<>(dt.getContainers()));
  }
}
