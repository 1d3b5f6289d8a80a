package lockmodel

import (
	"fmt"

	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/sim"
	"github.com/zabsim/zabsim/zabmodel/proto"
)

// RetryPolicy is Curator's ExponentialBackoffRetry: after the n-th failure (n from 0) of an
// operation with a retryable code, sleep BaseSleep times a random number in [1, 2^(n+1)), capped at
// MaxSleep, and try again, at most MaxRetries times.
type RetryPolicy struct {
	BaseSleep  clock.Duration
	MaxRetries int
	MaxSleep   clock.Duration
}

// maxRetriesLimit is ExponentialBackoffRetry's MAX_RETRIES_LIMIT, which keeps 2^(n+1) in an int.
const maxRetriesLimit = 29

// DefaultRetryPolicy is the policy of Curator's examples: new ExponentialBackoffRetry(1000, 3).
var DefaultRetryPolicy = RetryPolicy{BaseSleep: clock.Second, MaxRetries: 3, MaxSleep: clock.Duration(1<<31-1) * clock.Millisecond}

func (p RetryPolicy) validate() error {
	if p.BaseSleep <= 0 || p.MaxRetries < 0 || p.MaxRetries > maxRetriesLimit || p.MaxSleep < p.BaseSleep {
		return fmt.Errorf("lockmodel: retry policy %+v: the base sleep must be positive, at most %d retries, and the cap at least the base", p, maxRetriesLimit)
	}
	return nil
}

// sleep returns how long to sleep before retry number count+1, and false if the policy gives up
// (RetryPolicy.allowRetry with ExponentialBackoffRetry.getSleepTimeMs).
func (p RetryPolicy) sleep(w *sim.World, count int) (clock.Duration, bool) {
	if count >= p.MaxRetries {
		return 0, false
	}
	factor := max(1, w.Choose(1<<(count+1)))
	return min(p.BaseSleep*clock.Duration(factor), p.MaxSleep), true
}

// retryable is RetryPolicy.allowRetry(Throwable) as Curator 5 has it: the codes after which Curator
// tries an operation again. NEWCONFIGNOQUORUM is not among them (RetryLoop.shouldRetry of older
// Curators listed it). Curator also retries SESSIONEXPIRED, on the new ZooKeeper handle it makes;
// a Session here is one ZooKeeper session, so an expired session ends every operation (the
// application starts over with a new Session).
func retryable(code proto.Code) bool {
	switch code {
	case proto.ConnectionLoss, proto.OperationTimeout, proto.SessionMoved:
		return true
	}
	return false
}
