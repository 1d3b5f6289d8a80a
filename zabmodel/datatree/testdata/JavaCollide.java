// Appends to java_orders.txt a ConcurrentHashMap case whose bucket reaches
// the treeify threshold while the table is small. Run like JavaOrders.java.
import java.util.*;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.zookeeper.data.Id;
// Finds 10 digest ids whose ConcurrentHashMap bucket in a 16-bucket table is
// the same, adds them (after the ip id) and prints the iteration order.
public class JavaCollide {
  static int spread(int h) { return (h ^ (h >>> 16)) & 0x7fffffff; }
  public static void main(String[] a) {
    List<Id> ids = new ArrayList<>();
    for (int i = 0; ids.size() < 10; i++) {
      Id id = new Id("digest", "u" + i + ":h");
      if ((spread(id.hashCode()) & 15) == 3) ids.add(id);
    }
    Set<Id> s = Collections.newSetFromMap(new ConcurrentHashMap<Id, Boolean>());
    StringBuilder ops = new StringBuilder("CHM ip|127.0.0.1");
    s.add(new Id("ip", "127.0.0.1"));
    for (Id id : ids) { s.add(id); ops.append(" digest|").append(id.getId()); }
    System.out.println(ops);
    StringBuilder order = new StringBuilder("CHMORDER");
    for (Id id : new ArrayList<>(s)) order.append(" ").append(id.getScheme()).append("|").append(id.getId());
    System.out.println(order);
  }
}
