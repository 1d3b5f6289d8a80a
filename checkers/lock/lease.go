package lock

import (
	"fmt"
	"slices"

	"github.com/zabsim/zabsim/checkers"
	"github.com/zabsim/zabsim/clock"
)

// Lease is one grant of a lease lock: a lock with no node in ZooKeeper's tree, held for a validity
// the holder computes (a Redis lock, Redlock). The accesses the holder makes under it carry its ID
// as their Session.
type Lease struct {
	Client string
	ID     int64
	// Token is the fencing token the holder presents (0 without one).
	Token   int64
	Granted clock.Time
	// Expires is when the holder's validity runs out in global time: the grant time plus the
	// validity it had left on its own monotonic clock then, taken at face value (a client clock
	// that drifts makes its own reckoning end earlier or later).
	Expires clock.Time
}

// LeaseAttempt is one acquisition made after the faults healed, which must end with the lock.
type LeaseAttempt struct {
	Client     string
	Start, End clock.Time
	Granted    bool
}

// LeaseHistory is what the lease checkers judge: one lock's grants and the accesses the protected
// resource received under it.
type LeaseHistory struct {
	// Lock names the lock (the accesses' Lock).
	Lock     string
	Leases   []Lease
	Accesses []Access
	// Fencing says the resource checked fencing tokens.
	Fencing bool
	// Attempts are the acquisitions after the heal (empty without a liveness phase).
	Attempts []LeaseAttempt
	End      clock.Time
}

func validateLeases(h *LeaseHistory) error {
	if h == nil {
		return invalid("nil lease history")
	}
	if len(h.Leases)+len(h.Accesses)+len(h.Attempts) > MaxRecords {
		return invalid("more than %d records", MaxRecords)
	}
	ids := map[int64]bool{}
	for i, l := range h.Leases {
		if ids[l.ID] {
			return invalid("lease %d repeats the id %d", i, l.ID)
		}
		ids[l.ID] = true
		if l.Granted < 0 || l.Granted > h.End {
			return invalid("lease %d granted at %s, outside the run", i, l.Granted)
		}
	}
	for i, a := range h.Accesses {
		if a.Lock != h.Lock {
			return invalid("access %d names lock %q, not %q", i, a.Lock, h.Lock)
		}
		if !ids[a.Session] {
			return invalid("access %d is under lease %d, which was never granted", i, a.Session)
		}
		if i > 0 && a.Time < h.Accesses[i-1].Time {
			return invalid("access %d received before access %d", i, i-1)
		}
	}
	return nil
}

// RunLeases judges a lease lock by the rules of the lock checkers, with the lease's validity in
// the place of the lock node's life:
//
//   - CheckerMutualExclusion: two leases used the resource in interleaving tenures (or, with
//     fencing, the resource fenced off a holder) and the newer lease was granted while the older
//     one was still valid: the lock service granted the lock twice ("overlapping-holders",
//     "fenced-live-holder"). This is what a failover that lost the lock, or a clock that jumped
//     on a Redlock master, does.
//   - CheckerUnfenced: the older lease had run out before the newer one was granted, and its
//     holder went on using the resource ("stale-holder"): the lock behaved, the holder acted late
//     (a pause, a slow network), and only fencing stops it.
//   - CheckerProgress: an acquisition after the heal did not get the lock, or the resource
//     refused a rightful holder because an older lease had a larger token (the counter went
//     backwards: "token-went-backwards").
func RunLeases(h *LeaseHistory) ([]checkers.Result, error) {
	if err := validateLeases(h); err != nil {
		return nil, err
	}
	leases := map[int64]Lease{}
	for _, l := range h.Leases {
		leases[l.ID] = l
	}
	recipe, unfenced := newCollector(CheckerMutualExclusion), newCollector(CheckerUnfenced)
	var accepted, rejected []Access
	for _, a := range h.Accesses {
		if a.Accepted {
			accepted = append(accepted, a)
		} else {
			rejected = append(rejected, a)
		}
	}
	tenures := leaseTenures(accepted)
	for i := range tenures {
		for j := i + 1; j < len(tenures); j++ {
			judgeLeasePair(h.Lock, accepted, tenures[i], tenures[j], leases, recipe, unfenced)
		}
	}
	progress := newCollector(CheckerProgress)
	for _, a := range rejected {
		judgeLeaseRejection(h.Lock, a, accepted, leases, recipe, progress)
	}
	checked := len(h.Accesses)
	summary := fmt.Sprintf("%d accesses under %d leases judged (fencing %s)", checked, len(h.Leases), onOff(h.Fencing))
	for _, a := range h.Attempts {
		if !a.Granted {
			progress.add(checkers.Finding{Rule: "lease-not-granted", Clients: []string{a.Client}, Times: []clock.Time{a.Start},
				Message: fmt.Sprintf("%s: %s's acquisition after the heal, from %s, never got the lock", h.Lock, a.Client, ts(a.Start))})
		}
	}
	return []checkers.Result{recipe.result(checked, summary), unfenced.result(checked, summary),
		progress.result(len(h.Attempts), fmt.Sprintf("%d acquisitions after the heal", len(h.Attempts)))}, nil
}

// leaseTenures groups accepted accesses by lease, in order of first access.
func leaseTenures(accepted []Access) []tenure {
	var out []tenure
	index := map[int64]int{}
	for i, a := range accepted {
		k, ok := index[a.Session]
		if !ok {
			k = len(out)
			index[a.Session] = k
			out = append(out, tenure{token: a.Token, client: a.Client, session: a.Session, first: i})
		}
		out[k].last = i
		out[k].write = out[k].write || a.Write
	}
	return out
}

func judgeLeasePair(lock string, accesses []Access, x, y tenure, leases map[int64]Lease, recipe, unfenced *collector) {
	if x.last < y.first || y.last < x.first || (!x.write && !y.write) {
		return
	}
	older, newer := x, y
	if lo, ln := leases[x.session], leases[y.session]; ln.Granted < lo.Granted || (ln.Granted == lo.Granted && ln.ID < lo.ID) {
		older, newer = y, x
	}
	lo, ln := leases[older.session], leases[newer.session]
	inside := newer.first
	for i := newer.first + 1; i <= older.last; i++ {
		if accesses[i].Session == older.session {
			inside = i
			break
		}
	}
	f := checkers.Finding{
		Clients:  []string{older.client, newer.client},
		Sessions: []int64{older.session, newer.session},
		Zxids:    []int64{older.token, newer.token},
		Times:    []clock.Time{lo.Granted, lo.Expires, ln.Granted, accesses[inside].Time},
	}
	holders := fmt.Sprintf("%s: %s (lease %d granted %s, valid to %s, token %d, accesses %s to %s) and %s (lease %d granted %s, token %d, accesses %s to %s) both used the resource",
		lock, older.client, lo.ID, ts(lo.Granted), ts(lo.Expires), older.token, ts(accesses[older.first].Time), ts(accesses[older.last].Time),
		newer.client, ln.ID, ts(ln.Granted), newer.token, ts(accesses[newer.first].Time), ts(accesses[newer.last].Time))
	if ln.Granted >= lo.Expires {
		f.Rule = "stale-holder"
		f.Message = fmt.Sprintf("%s; %s's lease had run out at %s, before %s's was granted: a holder went on acting on an expired lease (at %s), which only fencing at the resource can stop",
			holders, older.client, ts(lo.Expires), newer.client, ts(accesses[inside].Time))
		unfenced.add(f)
		return
	}
	f.Rule = "overlapping-holders"
	f.Message = fmt.Sprintf("%s; %s's lease was granted at %s while %s's was valid until %s: the lock was granted to both",
		holders, newer.client, ts(ln.Granted), older.client, ts(lo.Expires))
	recipe.add(f)
}

// judgeLeaseRejection reports a fenced-off access whose lease was still valid when the lease of
// the newer token it was refused for was granted.
func judgeLeaseRejection(lock string, a Access, accepted []Access, leases map[int64]Lease, recipe, progress *collector) {
	mine := leases[a.Session]
	i := slices.IndexFunc(accepted, func(b Access) bool { return b.Token == a.Newest && b.Time <= a.Time && b.Session != a.Session })
	if i < 0 {
		return
	}
	other := leases[accepted[i].Session]
	if other.Granted >= mine.Expires {
		return // fencing stopped a holder whose lease had run out: its job
	}
	if other.Expires <= mine.Granted {
		// Not two holders at once: the resource stayed safe, but the rightful holder could not use
		// it, which is the lock's failure to make progress.
		progress.add(checkers.Finding{
			Rule: "token-went-backwards", Clients: []string{a.Client, other.Client}, Sessions: []int64{a.Session, other.ID},
			Zxids: []int64{a.Token, a.Newest}, Times: []clock.Time{a.Time, other.Granted, mine.Granted},
			Message: fmt.Sprintf("%s: the resource rejected %s's access at %s (lease %d granted %s, token %d) because of the token %d of %s's older lease %d, which had run out at %s: the tokens went backwards, so fencing refused the rightful holder",
				lock, a.Client, ts(a.Time), a.Session, ts(mine.Granted), a.Token, a.Newest, other.Client, other.ID, ts(other.Expires)),
		})
		return
	}
	recipe.add(checkers.Finding{
		Rule: "fenced-live-holder", Clients: []string{a.Client, other.Client}, Sessions: []int64{a.Session, other.ID},
		Zxids: []int64{a.Token, a.Newest}, Times: []clock.Time{a.Time, other.Granted, mine.Expires},
		Message: fmt.Sprintf("%s: the resource rejected %s's access at %s (lease %d, token %d) because %s (lease %d, token %d) had used it, and that lease was granted at %s while %s's was valid until %s: the lock was granted to both",
			lock, a.Client, ts(a.Time), a.Session, a.Token, other.Client, other.ID, other.Token, ts(other.Granted), a.Client, ts(mine.Expires)),
	})
}
