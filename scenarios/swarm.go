package scenarios

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/sim"
)

// scriptStream separates the random stream a seed's script is drawn from and the stream its run
// uses, so that a seed's script, saved and run as a script with the same seed, is the same run.
const scriptStream = 0x5c41b7_d3a2f1e9

// DrawScript returns the scenario a seed draws, without running it.
func DrawScript(o Options) (*Script, error) {
	o = o.withDefaults()
	if err := o.Validate(); err != nil {
		return nil, err
	}
	w, err := sim.New(sim.Config{Seed: o.Seed ^ scriptStream})
	if err != nil {
		return nil, err
	}
	defer w.Release()
	disk, err := sim.New(sim.Config{Seed: o.Seed ^ diskStream})
	if err != nil {
		return nil, err
	}
	defer disk.Release()
	return drawScript(w, disk, o), nil
}

// diskStream seeds the stream a seed's disk stalls are drawn from (see drawScript).
const diskStream = 0x6469_736b_7374_616c // "diskstal"

// drawScript draws a seed's scenario (swarm testing): the cluster, the workload, which fault
// families are on, how often each strikes, and the timed actions, from w's choices; the disk
// stalls come from disk's, which may be w itself.
func drawScript(w, disk *sim.World, o Options) *Script {
	s := &Script{Servers: o.Servers, Observers: o.Observers, Clients: o.Clients, Workload: o.Workload, Duration: o.Duration}
	if s.Servers == 0 {
		s.Servers = []int{3, 5}[w.Choose(2)]
	}
	if s.Observers < 0 {
		s.Observers = 0
		if s.Servers > 1 {
			s.Observers = w.Choose(3)
		}
	}
	if s.Workload == "" || s.Workload == "mixed" {
		names := drawnWorkloads()
		s.Workload = names[w.Choose(len(names))]
	}
	if s.Servers > 1 && w.Chance(1, 10) {
		// Some seeds start every leader's counter near the top, to meet the zxid overflow of
		// ZOOKEEPER-1277 without billions of writes (ZooKeeper's own test knob). Only a quorum
		// leader applies it: a standalone server has no epochs and never steps down on overflow,
		// so a single server draws nothing here.
		s.InitialZxidCounter = 0xffffffff - int64(50+w.Choose(200))
	}
	d := &drawer{w: w, s: s}
	if redisServerCount(s.Workload) > 0 {
		return drawRedisScript(d, o) // The Redis lock workloads' faults hit their own servers.
	}
	// BUGGIFY (FoundationDB): half the seeds also inject, now and then, a crash, a pause or a
	// connection reset at an effect boundary of a server (zabmodel.Boundaries): right after a SNAP
	// is written, between an append and its fsync, after a COMMIT went to only some learners.
	// Faults drawn at random instants almost never land in such windows.
	d.buggify = w.Chance(1, 2)
	for _, family := range FaultFamilies {
		if family == FaultDisk {
			continue // Drawn last, below.
		}
		if !slices.Contains(o.Faults, family) || !w.Chance(2, 3) {
			continue
		}
		// The family's mean interval between faults, drawn per seed.
		d.family(family, w.Between(2*clock.Second, 20*clock.Second, 100*clock.Millisecond))
	}
	slices.SortStableFunc(s.Actions, func(a, b Action) int { return int(a.At - b.At) })
	if slices.Contains(containerWorkloads, s.Workload) && w.Chance(2, 3) {
		// ZooKeeper looks for empty containers once a minute by default
		// (znode.container.checkIntervalMs), which a run of a minute or two meets a few times at
		// best, and never if leaders change faster (a new leader starts its manager afresh).
		// Operators lower the interval; most seeds of a lock workload do, so that the recipes meet
		// their parents deleted between two acquisitions, or between mkdirs and the create. This
		// is drawn last, so that the rest of every seed's script stays as it was. Half of these
		// check every few seconds, where the races are most likely.
		if w.Chance(1, 2) {
			s.ContainerCheckInterval = w.Between(clock.Second, 5*clock.Second, 100*clock.Millisecond)
		} else {
			s.ContainerCheckInterval = w.Between(5*clock.Second, 30*clock.Second, 100*clock.Millisecond)
		}
	}
	if slices.Contains(LockWorkloads, s.Workload) {
		// Drawn last too, for the same reason: the faults of a lock workload's seed are those of
		// any other workload's.
		drawTimeouts(w, s)
	}
	if s.Workload == "election" && w.Chance(1, 2) {
		// Half the election seeds run LeaderSelector instead of LeaderLatch; drawn last too.
		s.ElectionRecipe = "selector"
	}
	if slices.Contains(o.Faults, FaultDisk) && disk.Chance(2, 3) {
		// Disk stalls came after everything above. They are drawn last, from a stream of their
		// own, so that everything else a seed draws stays as it was (a seed that draws no stall
		// runs as it did before they existed), and a seed's faults stay the same whatever its
		// workload draws after them.
		dd := &drawer{w: disk, s: s}
		dd.family(FaultDisk, disk.Between(2*clock.Second, 20*clock.Second, 100*clock.Millisecond))
		slices.SortStableFunc(s.Actions, func(a, b Action) int { return int(a.At - b.At) })
	}
	return s
}

// Session timeouts the servers grant: [2, 20] ticks of 2 s (zoo.cfg's minSessionTimeout and
// maxSessionTimeout defaults).
const (
	serverMinSessionTimeout = MinSessionTimeout
	serverMaxSessionTimeout = MaxSessionTimeout
)

// drawTimeouts draws a lock workload's session and connection timeouts from the ranges Curator's
// users run (only the lock workloads draw them: the others keep 6 s sessions and their seeds' scripts
// as they were):
//
//   - two in five keep Curator's defaults (CuratorFrameworkFactory: 60 s session, 15 s connection);
//     the servers grant at most 40 s, which the script records;
//   - two in five run short sessions, from the servers' minimum (4 s) to 20 s, with a connection
//     timeout below the session timeout, from 1 s up;
//   - one in five run the combination CuratorZookeeperClient warns about ("session timeout is
//     less than connection timeout"): sessions of 4 to 10 s under Curator's 15 s connection
//     timeout, which zabsim used for every seed before the timeouts were drawn.
//
// A client's pauses are drawn with the faults, before the timeouts, and last up to three times the
// 6 s default session: under the longer sessions of Curator's defaults a paused holder keeps its
// session, as it would in production.
func drawTimeouts(w *sim.World, s *Script) {
	switch n := w.Choose(5); {
	case n < 2:
		// Curator asks for 60 s; the servers grant their maximum, and the script says what they
		// grant (a script refuses what no server would).
		s.SessionTimeout, s.ConnectionTimeout = serverMaxSessionTimeout, 15*clock.Second
	case n < 4:
		s.SessionTimeout = w.Between(serverMinSessionTimeout, 20*clock.Second, 100*clock.Millisecond)
		s.ConnectionTimeout = w.Between(clock.Second, s.SessionTimeout, 100*clock.Millisecond)
	default:
		s.SessionTimeout = w.Between(serverMinSessionTimeout, 10*clock.Second, 100*clock.Millisecond)
		s.ConnectionTimeout = 15 * clock.Second
	}
}

type drawer struct {
	w *sim.World
	s *Script
	// buggify says whether this seed injects faults at effect boundaries (see drawScript).
	buggify bool
}

// persistencePoints is how many of crashPointNames are the historical crash points between two
// persistence steps, which a quarter of all crashes have always drawn from.
const persistencePoints = 6

// boundaryPoint draws an effect boundary beyond the historical persistence points.
func (d *drawer) boundaryPoint() string {
	return crashPointNames[persistencePoints+d.w.Choose(len(crashPointNames)-persistencePoints)]
}

// boundaryCount draws which hit of its point an injection waits for: mostly the first.
func (d *drawer) boundaryCount() []string {
	if n := 1 + d.w.Choose(8); n > 1 && n <= 3 {
		return []string{strconv.Itoa(n)}
	}
	return nil
}

func (d *drawer) server() string { return fmt.Sprintf("zk%d", 1+d.w.Choose(d.s.Servers+d.s.Observers)) }

func (d *drawer) serverOrLeader() string {
	if d.w.Chance(1, 3) {
		return "leader"
	}
	return d.server()
}

func (d *drawer) client() string { return fmt.Sprintf("c%d", 1+d.w.Choose(d.s.Clients)) }

func (d *drawer) add(at clock.Duration, verb string, args ...string) {
	if at < d.s.Duration {
		d.s.Actions = append(d.s.Actions, Action{At: at, Verb: verb, Args: args})
	}
}

func (d *drawer) between(lo, hi clock.Duration) clock.Duration {
	return d.w.Between(lo, hi, 10*clock.Millisecond)
}

// instant draws a fault's time at the kernel's resolution (a nanosecond), so that a fault can
// land anywhere, also between two packets of a burst that takes microseconds.
func (d *drawer) instant(lo, hi clock.Duration) clock.Duration {
	return d.w.Between(lo, hi, clock.Nanosecond)
}

// family adds one family's faults at intervals drawn around mean.
func (d *drawer) family(name string, mean clock.Duration) {
	for at := d.instant(0, mean); at < d.s.Duration; at += d.instant(mean/2, mean*3/2) {
		d.one(name, at)
	}
}

// one adds one fault of a family at a moment: the swarm's unit, which the fuzzer also uses to add a
// fault to a script (see Edit).
func (d *drawer) one(name string, at clock.Duration) {
	switch name {
	case FaultCrash:
		d.crash(at)
	case FaultPartition:
		d.partition(at)
	case FaultClog:
		if d.w.Chance(1, 3) {
			d.add(at, "swizzle", formatDuration(d.between(clock.Second, 8*clock.Second)))
		} else {
			d.add(at, "clog", d.server(), formatDuration(d.between(100*clock.Millisecond, 6*clock.Second)))
		}
	case FaultReset:
		if d.buggify && d.w.Chance(1, 3) {
			// Besides the reset: the connection a server writes to when it reaches the boundary.
			d.add(at, "resetpoint", append([]string{d.serverOrLeader(), d.sendPoint()}, d.boundaryCount()...)...)
		}
		d.add(at, "reset", d.serverOrLeader())
	case FaultPause:
		d.pause(at)
	case FaultClock:
		d.clockFault(at)
	case FaultClientKill:
		c := d.client()
		d.add(at, "kill", c)
		d.add(at+d.between(500*clock.Millisecond, 10*clock.Second), "revive", c)
	case FaultExpire:
		d.expire(at)
	case FaultDisk:
		// A stall of a server's disk (zabmodel.Server.StallDisk: its log's fsyncs hang), from the
		// tens of milliseconds of a busy device to the seconds ZooKeeper's SyncThread warns
		// about ("fsync-ing the write ahead log took N ms"), past the leader's sync limit now
		// and then.
		d.add(at, "stall", d.serverOrLeader(), formatDuration(d.between(20*clock.Millisecond, 12*clock.Second)))
	}
}

// clockFault skews the clock of a server or a client, both of which the fault model covers (the
// client library times its session and its pings on its node's clock): a drift of up to 500 ppm
// either way, or a wall-clock step of up to 30 s forwards or backwards, as NTP or an operator
// makes. A step moves only the wall clock; the monotonic clock that every timeout uses never goes
// backwards. Each fault takes three choices, as it did when only servers were drawn, so that the
// families drawn after this one keep drawing what they drew.
func (d *drawer) clockFault(at clock.Duration) {
	if d.w.Chance(1, 2) {
		d.add(at, "drift", d.node(), fmt.Sprintf("%+dppm", d.w.Choose(1001)-500))
		return
	}
	d.add(at, "stepwall", d.node(), formatDuration(d.between(-30*clock.Second, 30*clock.Second)))
}

// node draws any node: a server, an observer or a client.
func (d *drawer) node() string {
	servers := d.s.Servers + d.s.Observers
	n := d.w.Choose(servers + d.s.Clients)
	if n < servers {
		return fmt.Sprintf("zk%d", 1+n)
	}
	return fmt.Sprintf("c%d", 1+n-servers)
}

func (d *drawer) crash(at clock.Duration) {
	target := d.serverOrLeader()
	if d.w.Chance(1, 4) {
		// A crash at a chosen point between persistence steps, the next time the server gets there.
		server := d.server()
		d.add(at, "crashpoint", server, crashPointNames[d.w.Choose(persistencePoints)])
		d.add(at+d.between(2*clock.Second, 20*clock.Second), "restart", server)
		return
	}
	if d.buggify && d.w.Chance(1, 3) {
		// Besides the crash: a crash at any other effect boundary, and a restart of that server a
		// while after it. BUGGIFY adds to the ordinary faults rather than replacing some, so that
		// the windows those reach (a client reconnecting to a lagging server after a reset, a
		// leader crash during broadcast) stay as likely as they were.
		server := d.server()
		args := append([]string{server, d.boundaryPoint()}, d.boundaryCount()...)
		d.add(at, "crashpoint", append(args, "restart", formatDuration(d.between(200*clock.Millisecond, 20*clock.Second)))...)
	}
	d.add(at, "crash", target)
	if target == "leader" {
		target = "all" // Whoever it was, restart every crashed server later.
	}
	d.add(at+d.between(200*clock.Millisecond, 20*clock.Second), "restart", target)
}

func (d *drawer) partition(at clock.Duration) {
	n := d.s.Servers + d.s.Observers
	switch d.w.Choose(4) {
	case 0:
		d.add(at, "isolate", d.serverOrLeader())
	case 1:
		a, b := d.server(), d.server()
		if a != b {
			d.add(at, "oneway", a, b)
		}
	default:
		// Random halves (with a bridge when some server is left out of every group).
		var groups [2][]string
		for i := 1; i <= n; i++ {
			if g := d.w.Choose(3); g < 2 {
				groups[g] = append(groups[g], fmt.Sprintf("zk%d", i))
			}
		}
		if len(groups[0]) == 0 || len(groups[1]) == 0 {
			return
		}
		args := append(append(slices.Clone(groups[0]), "|"), groups[1]...)
		d.add(at, "partition", args...)
	}
	d.add(at+d.between(500*clock.Millisecond, 15*clock.Second), "heal")
}

// expire forces a session to expire; now and then every application's at once, as a test that
// kills every session of a service does.
func (d *drawer) expire(at clock.Duration) {
	if d.w.Chance(1, 10) {
		d.add(at, "expire", "all")
		return
	}
	d.add(at, "expire", d.client())
}

func (d *drawer) pause(at clock.Duration) {
	if d.w.Chance(1, 2) {
		// A client paused longer than its session sometimes: it must learn that it lost its session.
		d.add(at, "pause", d.client(), formatDuration(d.between(500*clock.Millisecond, 3*sessionTimeout)))
		return
	}
	if d.buggify && d.w.Chance(1, 3) {
		// Besides the pause: a server paused exactly at an effect boundary, between two packets
		// of a burst, between an append and its fsync.
		args := append([]string{d.serverOrLeader(), d.boundaryPoint()}, d.boundaryCount()...)
		d.add(at, "pausepoint", append(args, "for", formatDuration(d.between(100*clock.Millisecond, 15*clock.Second)))...)
	}
	d.add(at, "pause", d.serverOrLeader(), formatDuration(d.between(100*clock.Millisecond, 15*clock.Second)))
}

// afterSendPoints are the boundaries right after a quorum packet is written.
var afterSendPoints = slices.DeleteFunc(slices.Clone(crashPointNames), func(p string) bool { return !strings.HasPrefix(p, "after-send:") })

// sendPoint draws the boundary right after a quorum packet is written.
func (d *drawer) sendPoint() string { return afterSendPoints[d.w.Choose(len(afterSendPoints))] }
