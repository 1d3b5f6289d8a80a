package lock

import (
	"fmt"
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/zabsim/zabsim/checkers"
)

// serialRun draws a fair lock held by one holder after another, each deleting its node (or losing
// it with its session) before the next is granted, and some holders coming back after they lost
// the lock (a stale access), which the resource accepts without fencing and rejects with it.
type serialRun struct {
	h      *History
	stales int
}

func drawSerialRun(t *rapid.T, fencing bool) serialRun {
	var b logBuilder
	holders := rapid.IntRange(2, 8).Draw(t, "holders")
	var accesses []Access
	var tokens []int64
	clockSeconds := 1.0
	stales := 0
	newest := int64(0)
	for i := 0; i < holders; i++ {
		session := int64(i + 1)
		client := fmt.Sprintf("c%d", i+1)
		token := b.create(session, nodePath(fmt.Sprint(i%10)), true, at(clockSeconds))
		tokens = append(tokens, token)
		for k := rapid.IntRange(1, 3).Draw(t, "accesses"); k > 0; k-- {
			clockSeconds++
			accesses = append(accesses, write(client, session, token, at(clockSeconds), true))
			newest = token
		}
		clockSeconds++
		if rapid.Bool().Draw(t, "expires") {
			b.close(session, at(clockSeconds))
		} else {
			b.delete(session, nodePath(fmt.Sprint(i%10)), at(clockSeconds))
		}
		if i > 0 && rapid.IntRange(0, 3).Draw(t, "stale") == 0 {
			// The previous holder, paused through its loss, comes back after this one began.
			prev := accesses[slices.IndexFunc(accesses, func(a Access) bool { return a.Token == tokens[i-1] })]
			stale := write(prev.Client, prev.Session, prev.Token, at(clockSeconds-0.5), !fencing)
			stale.Newest = newest
			accesses = insertByTime(accesses, stale)
			stales++
		}
		clockSeconds++
	}
	return serialRun{h: &History{Locks: []Lock{{Path: fair, Kind: KindFair}}, Committed: b.log, Accesses: accesses, Fencing: fencing, End: at(clockSeconds + 1)}, stales: stales}
}

func insertByTime(list []Access, a Access) []Access {
	i := slices.IndexFunc(list, func(b Access) bool { return b.Time > a.Time })
	if i < 0 {
		return append(list, a)
	}
	return slices.Insert(list, i, a)
}

func statusOf(t *rapid.T, h *History, checker string) checkers.Status {
	results, err := Run(h, Options{})
	if err != nil {
		t.Fatalf("valid history refused: %v", err)
	}
	for _, r := range results {
		if r.Checker == checker {
			return r.Status
		}
	}
	t.Fatalf("no %s result", checker)
	return 0
}

func TestPropertyStaleHoldersAreUnfencedNeverRecipeBugs(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		fencing := rapid.Bool().Draw(t, "fencing")
		run := drawSerialRun(t, fencing)
		if s := statusOf(t, run.h, CheckerMutualExclusion); s != checkers.Pass {
			t.Fatalf("a serial run with stale holders is no recipe bug, got %v", s)
		}
		want := checkers.Pass
		if !fencing && run.stales > 0 {
			want = checkers.Violation
		}
		if s := statusOf(t, run.h, CheckerUnfenced); s != want {
			t.Fatalf("fencing=%v stales=%d: unsafe-without-fencing is %v, want %v", fencing, run.stales, s, want)
		}
	})
}

func TestPropertyAnAccessInsideAnotherLiveTenureIsARecipeBug(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		run := drawSerialRun(t, false)
		h := run.h
		// A holder whose node was never deleted writes inside the first tenure.
		var b logBuilder
		b.log, b.zxid = h.Committed, h.Committed[len(h.Committed)-1].Entry.Header.Zxid
		intruder := b.create(99, fair+"/_c_y-lock-0000000099", true, at(0.5))
		h.Committed = b.log
		first := h.Accesses[0]
		h.Accesses = insertByTime(h.Accesses, write("intruder", 99, intruder, first.Time+1, true))
		h.Accesses = insertByTime(h.Accesses, write("intruder", 99, intruder, h.Accesses[len(h.Accesses)-1].Time, true))
		if s := statusOf(t, h, CheckerMutualExclusion); s != checkers.Violation {
			t.Fatalf("a live holder inside other tenures passed: %v", s)
		}
	})
}
