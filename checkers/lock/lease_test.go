package lock

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zabsim/zabsim/checkers"
	"github.com/zabsim/zabsim/clock"
)

const leaseLock = "/redis/lock"

func sec(s float64) clock.Time { return clock.Time(s * float64(clock.Second)) }

func leaseAccess(client string, id, token int64, at float64, accepted bool, newest int64) Access {
	return Access{Lock: leaseLock, Client: client, Session: id, Token: token, Write: true, Accepted: accepted, Newest: newest, Time: sec(at)}
}

func leaseResult(t *testing.T, h *LeaseHistory, checker string) checkers.Result {
	t.Helper()
	results, err := RunLeases(h)
	require.NoError(t, err)
	for _, r := range results {
		if r.Checker == checker {
			return r
		}
	}
	t.Fatalf("no %s result", checker)
	return checkers.Result{}
}

func TestLeasesTakenInTurnPass(t *testing.T) {
	h := &LeaseHistory{Lock: leaseLock, End: sec(60),
		Leases: []Lease{{Client: "c1", ID: 1, Token: 1, Granted: sec(1), Expires: sec(9)}, {Client: "c2", ID: 2, Token: 2, Granted: sec(3), Expires: sec(11)}},
		Accesses: []Access{leaseAccess("c1", 1, 1, 1.1, true, 0), leaseAccess("c1", 1, 1, 2, true, 1),
			leaseAccess("c2", 2, 2, 3.1, true, 1), leaseAccess("c2", 2, 2, 4, true, 2)},
		Attempts: []LeaseAttempt{{Client: "c1", Start: sec(50), End: sec(50.1), Granted: true}},
	}
	for _, c := range []string{CheckerMutualExclusion, CheckerUnfenced, CheckerProgress} {
		assert.Equal(t, checkers.Pass, leaseResult(t, h, c).Status, c)
	}
}

// A paused holder comes back after its lease ran out and the next holder was granted.
func TestStaleLeaseHolderIsUnfenced(t *testing.T) {
	h := &LeaseHistory{Lock: leaseLock, End: sec(60),
		Leases: []Lease{{Client: "c1", ID: 1, Granted: sec(1), Expires: sec(9)}, {Client: "c2", ID: 2, Granted: sec(10), Expires: sec(18)}},
		Accesses: []Access{leaseAccess("c1", 1, 0, 1.1, true, 0), leaseAccess("c2", 2, 0, 10.1, true, 0),
			leaseAccess("c1", 1, 0, 16, true, 0), leaseAccess("c2", 2, 0, 16.5, true, 0)},
	}
	r := leaseResult(t, h, CheckerUnfenced)
	require.Equal(t, checkers.Violation, r.Status)
	assert.Equal(t, "stale-holder", r.Findings[0].Rule)
	assert.Equal(t, checkers.Pass, leaseResult(t, h, CheckerMutualExclusion).Status, "the lock itself behaved")

	// With fencing the stale access is refused, and that is fencing doing its job.
	h.Fencing = true
	h.Leases[0].Token, h.Leases[1].Token = 1, 2
	h.Accesses = []Access{leaseAccess("c1", 1, 1, 1.1, true, 0), leaseAccess("c2", 2, 2, 10.1, true, 1),
		leaseAccess("c1", 1, 1, 16, false, 2), leaseAccess("c2", 2, 2, 16.5, true, 2)}
	assert.Equal(t, checkers.Pass, leaseResult(t, h, CheckerUnfenced).Status)
	assert.Equal(t, checkers.Pass, leaseResult(t, h, CheckerMutualExclusion).Status)
}

// A failover lost the lock: the second lease was granted while the first was valid.
func TestDoubleGrantIsMutualExclusion(t *testing.T) {
	h := &LeaseHistory{Lock: leaseLock, End: sec(60),
		Leases: []Lease{{Client: "c1", ID: 1, Token: 1, Granted: sec(1), Expires: sec(9)}, {Client: "c2", ID: 2, Token: 1, Granted: sec(5), Expires: sec(13)}},
		Accesses: []Access{leaseAccess("c1", 1, 1, 1.1, true, 0), leaseAccess("c2", 2, 1, 5.1, true, 1),
			leaseAccess("c1", 1, 1, 6, true, 1)},
		Fencing: true, // equal tokens (a counter the failover set back) pass the fencing rule
	}
	r := leaseResult(t, h, CheckerMutualExclusion)
	require.Equal(t, checkers.Violation, r.Status)
	assert.Equal(t, "overlapping-holders", r.Findings[0].Rule)
	assert.Equal(t, []string{"c1", "c2"}, r.Findings[0].Clients)

	// Fencing with a larger token refuses the old holder, but the lock was still granted twice.
	h.Leases[1].Token = 2
	h.Accesses = []Access{leaseAccess("c1", 1, 1, 1.1, true, 0), leaseAccess("c2", 2, 2, 5.1, true, 1),
		leaseAccess("c1", 1, 1, 6, false, 2)}
	r = leaseResult(t, h, CheckerMutualExclusion)
	require.Equal(t, checkers.Violation, r.Status)
	assert.Equal(t, "fenced-live-holder", r.Findings[0].Rule)
}

func TestTokensGoingBackwardsRefuseTheRightfulHolder(t *testing.T) {
	h := &LeaseHistory{Lock: leaseLock, End: sec(60), Fencing: true,
		Leases:   []Lease{{Client: "c1", ID: 1, Token: 7, Granted: sec(1), Expires: sec(9)}, {Client: "c2", ID: 2, Token: 1, Granted: sec(20), Expires: sec(28)}},
		Accesses: []Access{leaseAccess("c1", 1, 7, 1.1, true, 0), leaseAccess("c2", 2, 1, 20.1, false, 7)},
	}
	r := leaseResult(t, h, CheckerProgress)
	require.Equal(t, checkers.Violation, r.Status)
	assert.Equal(t, "token-went-backwards", r.Findings[0].Rule)
	assert.Equal(t, checkers.Pass, leaseResult(t, h, CheckerMutualExclusion).Status, "never two holders at once")
}

func TestUnservedAcquisitionAfterHealIsNoProgress(t *testing.T) {
	h := &LeaseHistory{Lock: leaseLock, End: sec(60), Attempts: []LeaseAttempt{{Client: "c3", Start: sec(40), End: sec(60)}}}
	assert.Equal(t, checkers.Violation, leaseResult(t, h, CheckerProgress).Status)
}

func TestMalformedLeaseHistoriesAreRefused(t *testing.T) {
	for name, h := range map[string]*LeaseHistory{
		"nil":          nil,
		"repeated id":  {Lock: leaseLock, End: sec(9), Leases: []Lease{{ID: 1}, {ID: 1}}},
		"unknown id":   {Lock: leaseLock, End: sec(9), Accesses: []Access{leaseAccess("c1", 5, 0, 1, true, 0)}},
		"other lock":   {Lock: leaseLock, End: sec(9), Leases: []Lease{{ID: 1}}, Accesses: []Access{{Lock: "/x", Session: 1}}},
		"out of order": {Lock: leaseLock, End: sec(9), Leases: []Lease{{ID: 1}}, Accesses: []Access{leaseAccess("c1", 1, 0, 2, true, 0), leaseAccess("c1", 1, 0, 1, true, 0)}},
	} {
		_, err := RunLeases(h)
		assert.ErrorIs(t, err, checkers.ErrInvalidHistory, name)
	}
}
