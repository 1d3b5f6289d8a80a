import java.util.*;
import java.util.concurrent.ConcurrentHashMap;
// Generates java_orders.txt: HashSet<String> and ConcurrentHashMap<Id> iteration orders
// as a JDK 17 produces them. Run with the zookeeper-jute jar on the classpath:
//   javac -cp zookeeper-jute.jar JavaOrders.java && java -cp .:zookeeper-jute.jar JavaOrders
public class JavaOrders {
  public static void main(String[] a) {
    Random r = new Random(42);
    // HashSet<String>: adds, removes, clone.
    for (int round = 0; round < 4; round++) {
      HashSet<String> s = new HashSet<>();
      List<String> ops = new ArrayList<>();
      int n = new int[]{5, 20, 100, 300}[round];
      for (int i = 0; i < n; i++) {
        String p = "/n" + r.nextInt(1000) + "/e-" + Integer.toString(r.nextInt(100000), 36);
        s.add(p); ops.add("+" + p);
        if (r.nextInt(4) == 0) { String victim = ops.get(r.nextInt(ops.size())).substring(1); s.remove(victim); ops.add("-" + victim); }
      }
      System.out.println("SET " + String.join(" ", ops));
      System.out.println("ORDER " + String.join(" ", s));
      @SuppressWarnings("unchecked") HashSet<String> c = (HashSet<String>) s.clone();
      System.out.println("CLONE " + String.join(" ", c));
    }
    // ConcurrentHashMap key set of "scheme:id" identities.
    for (int round = 0; round < 3; round++) {
      Set<org.apache.zookeeper.data.Id> s = Collections.newSetFromMap(new ConcurrentHashMap<org.apache.zookeeper.data.Id, Boolean>());
      List<String> ops = new ArrayList<>();
      int n = new int[]{3, 15, 60}[round];
      s.add(new org.apache.zookeeper.data.Id("ip", "127.0.0.1")); ops.add("ip|127.0.0.1");
      for (int i = 0; i < n; i++) {
        String id = "u" + r.nextInt(500) + ":" + Integer.toString(r.nextInt(1 << 30), 36);
        s.add(new org.apache.zookeeper.data.Id("digest", id)); ops.add("digest|" + id);
      }
      System.out.println("CHM " + String.join(" ", ops));
      List<String> order = new ArrayList<>();
      for (org.apache.zookeeper.data.Id id : new ArrayList<>(s)) order.add(id.getScheme() + "|" + id.getId());
      System.out.println("CHMORDER " + String.join(" ", order));
    }
  }
}
