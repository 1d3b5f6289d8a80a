package scenarios

import (
	"fmt"
	"math/bits"
	"strings"

	"github.com/zabsim/zabsim/checkers"
	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/electionmodel"
	"github.com/zabsim/zabsim/internal/quorum"
	"github.com/zabsim/zabsim/zabmodel"
)

// CheckerAvailability names the check that a quorum of voters that can work together gets a
// leader serving a quorum within a bound that ZooKeeper's configuration implies.
const CheckerAvailability = "availability"

// availabilityStep is how often the availability monitor samples the cluster.
const availabilityStep = 100 * clock.Millisecond

// availabilityMonitor watches the fault phase for windows in which some quorum of voters is up,
// unpaused and mutually connected (no partition or clog between any two of them, either way), and
// yet no leader serves a quorum. Such a window may last as long as ZooKeeper's own timeouts allow
// a recovery to take (availabilityBound); longer is a violation. A window starts when the quorum
// became able to work together or when a leader last served a quorum, whichever is later.
type availabilityMonitor struct {
	r      *runner
	quorum int
	// candidates are the sets of voters of quorum size, as bit masks over sid-1; since, open and
	// timeout are the open window of each (its start and its members' election timeout then).
	candidates []uint32
	since      []clock.Time
	open       []bool
	timeout    []clock.Duration
	// workableSamples counts the samples of the fault phase in which some quorum could work
	// together (what the check judged); finding is the first violation.
	workableSamples int
	finding         *checkers.Finding
}

func newAvailabilityMonitor(r *runner) *availabilityMonitor {
	voters := r.script.Servers
	m := &availabilityMonitor{r: r, quorum: quorum.Majority(voters).Size()}
	for mask := uint32(1); mask < 1<<voters; mask++ {
		if bits.OnesCount32(mask) == m.quorum {
			m.candidates = append(m.candidates, mask)
		}
	}
	m.since = make([]clock.Time, len(m.candidates))
	m.open = make([]bool, len(m.candidates))
	m.timeout = make([]clock.Duration, len(m.candidates))
	return m
}

func (m *availabilityMonitor) start() { m.r.w.After(availabilityStep, m.sample) }

// availabilityBound is how long a recovery may take, from ZooKeeper's configuration. The slowest
// recovery of a quorum that can work together: a role that cannot go on (a discovery or sync that
// waits for a server outside the quorum, a learner whose leader is cut off) ends within initLimit
// ticks; the next attempt may fail too, on a server whose acceptedEpoch a failed discovery raised
// past the new leader's epoch, and end after initLimit ticks more (the leader after it takes a
// higher epoch); the successful discovery and sync among running, connected servers then take far
// less than syncLimit ticks. Each of the two elections before an attempt ends within two of the
// notification timeouts in force (one may double) plus finalizeWait. With the defaults (tickTime
// 2 s, initLimit 10, syncLimit 5) and no election in progress that is 51.2 s.
func availabilityBound(cfg zabmodel.Config, electionTimeout clock.Duration) clock.Duration {
	tick := cfg.TickTime
	election := 2*max(electionTimeout, minNotificationInterval) + electionmodel.DefaultFinalizeWait
	return 2*clock.Duration(cfg.InitLimit)*tick + clock.Duration(cfg.SyncLimit)*tick + 2*election
}

// minNotificationInterval is FLE's first notification timeout (minNotificationInterval, 200 ms):
// the timeout of an election a server starts during the window.
const minNotificationInterval = 200 * clock.Millisecond

func (m *availabilityMonitor) sample() {
	r := m.r
	now := r.w.Now()
	if now >= r.faultEnd || r.w.Ended() {
		return
	}
	served := m.leaderServesQuorum()
	workable := false
	for i, mask := range m.candidates {
		switch {
		case !m.workable(mask):
			m.open[i] = false
			continue
		}
		workable = true
		switch {
		case !m.open[i] || served:
			m.open[i], m.since[i], m.timeout[i] = true, now, m.electionTimeout(mask)
		case m.finding == nil && now >= r.faultStart:
			bound := availabilityBound(r.ens.Config(), m.timeout[i])
			if now.Sub(m.since[i]) > bound {
				m.report(mask, m.since[i], now, bound)
			}
		}
	}
	if workable && now >= r.faultStart {
		m.workableSamples++
	}
	r.w.After(availabilityStep, m.sample)
}

// workable reports whether the voters of mask are up, unpaused, not exited and mutually connected.
func (m *availabilityMonitor) workable(mask uint32) bool {
	r := m.r
	for a := range r.script.Servers {
		if mask&(1<<a) == 0 {
			continue
		}
		na := r.ens.Server(int64(a + 1)).Node()
		if !r.w.IsUp(na) || r.w.IsPaused(na) {
			return false
		}
		for b := a + 1; b < r.script.Servers; b++ {
			if mask&(1<<b) == 0 {
				continue
			}
			nb := r.ens.Server(int64(b + 1)).Node()
			if r.nw.Blocked(na, nb) || r.nw.Blocked(nb, na) {
				return false
			}
		}
	}
	return true
}

// electionTimeout is the longest notification timeout among the voters of mask that are LOOKING.
func (m *availabilityMonitor) electionTimeout(mask uint32) clock.Duration {
	longest := clock.Duration(0)
	for a := range m.r.script.Servers {
		if mask&(1<<a) != 0 {
			longest = max(longest, m.r.ens.Server(int64(a+1)).State().ElectionTimeout)
		}
	}
	return longest
}

// leaderServesQuorum reports whether some running, unpaused leader serves, with a quorum of voters
// (itself included) serving under it.
func (m *availabilityMonitor) leaderServesQuorum() bool {
	r := m.r
	for _, leader := range r.ens.Servers()[:r.script.Servers] {
		st := leader.State()
		if !st.Serving || st.Role != zabmodel.Leading || r.w.IsPaused(leader.Node()) {
			continue
		}
		serving := 0
		for _, s := range r.ens.Servers()[:r.script.Servers] {
			fs := s.State()
			if s == leader || (fs.Serving && fs.Role == zabmodel.Following && fs.Leader == st.Sid && !r.w.IsPaused(s.Node())) {
				serving++
			}
		}
		if serving >= m.quorum {
			return true
		}
	}
	return false
}

func (m *availabilityMonitor) report(mask uint32, from, to clock.Time, bound clock.Duration) {
	var members, roles []string
	for a := range m.r.script.Servers {
		if mask&(1<<a) == 0 {
			continue
		}
		st := m.r.ens.Server(int64(a + 1)).State()
		members = append(members, fmt.Sprintf("zk%d", a+1))
		role := st.Role.String()
		if st.Serving {
			role += " serving"
		}
		roles = append(roles, fmt.Sprintf("zk%d %s (leader %d, epoch %d)", a+1, role, st.Leader, st.CurrentEpoch))
	}
	m.finding = &checkers.Finding{Checker: CheckerAvailability, Rule: "leader-within-bound", Times: []clock.Time{from, to},
		Message: fmt.Sprintf("servers %s were up, unpaused and mutually connected from %s to %s, longer than "+
			"the recovery bound of %v (initLimit, syncLimit, tickTime and election timeouts), and no leader "+
			"served a quorum; at the end: %s", strings.Join(members, " "), strings.TrimSpace(from.String()),
			strings.TrimSpace(to.String()), bound, strings.Join(roles, "; "))}
}

// result is the availability verdict of the run.
func (m *availabilityMonitor) result() checkers.Result {
	res := checkers.Result{Checker: CheckerAvailability, Status: checkers.Pass, Checked: m.workableSamples,
		Summary: "every quorum of voters able to work together had a leader serving a quorum within the recovery bound"}
	if m.finding != nil {
		res.Status = checkers.Violation
		res.Findings = []checkers.Finding{*m.finding}
		res.Summary = "a quorum of voters able to work together stayed without a serving leader past the recovery bound"
	}
	return res
}
