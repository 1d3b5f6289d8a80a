package zabmodel

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// wakeOrder releases four threads blocked in one of seed's leader's quorum waits and returns the
// order in which they ran, and whether any ran inside the release itself.
func wakeOrder(t *testing.T, seed uint64) (order string, inline bool) {
	f := newFixture(t, seed, Config{Voters: 3})
	leader := f.establishedLeader()
	var waiters []*quorumWaiter
	for i := range 4 {
		waiters = append(waiters, &quorumWaiter{wait: waitEpoch, handler: &learnerHandler{handlerCore: handlerCore{sid: int64(i)}}})
	}
	leader.p.h.(*simHost).step(func() {
		wakeAll(leader.p.h, waiters, func(w *quorumWaiter) timer { return &orderTimer{h: leader.p.h, order: &order, sid: w.handler.sid} })
		inline = order != ""
	})
	for i := 0; i < 100 && len(order) < 4; i++ {
		f.w.Step()
	}
	require.Len(t, order, 4, "seed %d: every woken thread ran", seed)
	return order, inline
}

// orderTimer appends its thread's sid to order when it runs.
type orderTimer struct {
	h     host
	order *string
	sid   int64
}

func (t *orderTimer) OnTimer(uint64) { t.h.fire(t) }
func (t *orderTimer) fire()          { *t.order += fmt.Sprint(t.sid) }

// TestThreadsWokenTogetherRunInAnOrderTheRunChooses: the threads one notifyAll wakes (learner
// handlers, the leader's own thread) are separate steps, not calls inside the release, and their
// order is the run's choice: seeds differ, and a seed always gives the same order.
func TestThreadsWokenTogetherRunInAnOrderTheRunChooses(t *testing.T) {
	orders := map[string]bool{}
	for seed := uint64(1); seed <= 8; seed++ {
		order, inline := wakeOrder(t, seed)
		assert.False(t, inline, "seed %d: a woken thread ran inside notifyAll", seed)
		orders[order] = true
	}
	assert.Greater(t, len(orders), 1, "every seed woke the threads in one order: %v", orders)
	a, _ := wakeOrder(t, 5)
	b, _ := wakeOrder(t, 5)
	assert.Equal(t, a, b, "a seed decides the order")
}
