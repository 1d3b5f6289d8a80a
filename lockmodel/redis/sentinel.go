package redis

import (
	"errors"

	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/sim"
)

// DefaultDownAfter is how long the modelled Sentinel waits before it fails a master over. Redis
// Sentinel's down-after-milliseconds defaults to 30 s; deployments that care about availability
// set a few seconds, and runs of a minute need failovers to happen within them.
const DefaultDownAfter = 5 * clock.Second

// sentinelPeriod is how often the Sentinel looks (Sentinel pings every instance once a second).
const sentinelPeriod = 100 * clock.Millisecond

// Sentinel is the part of Redis Sentinel the lock comparison needs: it watches a master and its
// replica, and when the master has been unreachable for DownAfter it promotes the replica
// (REPLICAOF NO ONE) and tells the clients, which ask it for the master at every connection (as
// a Sentinel-aware client does with SENTINEL get-master-addr-by-name); when the old master runs
// again it makes it a replica of the new one (REPLICAOF), which wipes what it had.
//
// What is not modelled: the Sentinels' own quorum, their votes and configuration epochs (one
// Sentinel that cannot fail, cannot be partitioned and never disagrees with itself), and its
// failure detector's network: "unreachable" is the simulator's truth that the master's process is
// down or paused, not a PING that a partition lost. So a partition alone never causes a failover,
// and a failover after a crash or a pause is exactly as fast as DownAfter allows. Writes the
// master acknowledged that had not reached the replica are lost, as with the real thing; the
// min-replicas-to-write guard is not modelled (it is off by default).
type Sentinel struct {
	w         *sim.World
	servers   []*Server
	master    int
	downAfter clock.Duration
	downSince clock.Time
	down      bool
	failovers int
}

// NewSentinel watches servers, the first of which is the master, the rest its replicas.
func NewSentinel(w *sim.World, downAfter clock.Duration, servers ...*Server) (*Sentinel, error) {
	if w == nil || len(servers) < 2 {
		return nil, errors.New("redis: a sentinel needs a world, a master and a replica")
	}
	if downAfter <= 0 {
		downAfter = DefaultDownAfter
	}
	s := &Sentinel{w: w, servers: servers, downAfter: downAfter}
	w.After(sentinelPeriod, s.tick)
	return s, nil
}

// Master returns the server the Sentinel names as master now.
func (s *Sentinel) Master() *Server { return s.servers[s.master] }

// Failovers returns how many failovers it made.
func (s *Sentinel) Failovers() int { return s.failovers }

func (s *Sentinel) reachable(v *Server) bool { return s.w.IsUp(v.node) && !s.w.IsPaused(v.node) }

func (s *Sentinel) tick() {
	defer s.w.After(sentinelPeriod, s.tick)
	now := s.w.Now()
	m := s.servers[s.master]
	if s.reachable(m) {
		s.down = false
	} else if !s.down {
		s.down, s.downSince = true, now
	}
	if s.down && now.Sub(s.downSince) >= s.downAfter {
		for i, v := range s.servers {
			if i != s.master && s.reachable(v) {
				s.w.Note(sim.NoNode, "sentinel", "+odown %s for %s: failover to %s", m.cfg.Name, now.Sub(s.downSince), v.cfg.Name)
				s.master, s.down = i, false
				s.failovers++
				v.Promote()
				break
			}
		}
	}
	// Every other reachable server is made a replica of the master (a returning old master, the
	// other replicas after a failover).
	master := s.servers[s.master]
	for i, v := range s.servers {
		if i != s.master && s.reachable(v) && v.master != master {
			v.Follow(master)
		}
	}
}
