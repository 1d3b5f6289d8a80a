package net

import (
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/internal/rapidfail"
	"github.com/zabsim/zabsim/sim"
)

// fifoNode records, per connection, the sequence numbers it received, and whether the connection
// told it it was closed.
type fifoNode struct {
	t      *rapid.T
	id     sim.NodeID
	got    map[ConnID][]uint64
	closed map[ConnID]bool
	open   []ConnID
	peers  map[ConnID]sim.NodeID
}

func (n *fifoNode) Accept(c ConnID, from sim.NodeID) Handler {
	n.peers[c] = from
	n.open = append(n.open, c)
	return n
}
func (n *fifoNode) Connected(c ConnID) { n.open = append(n.open, c) }
func (n *fifoNode) Received(c ConnID, payload []byte) {
	if n.closed[c] {
		n.t.Fatalf("node %d received on conn %d after it was closed", n.id, c)
	}
	n.got[c] = append(n.got[c], binary.BigEndian.Uint64(payload))
}
func (n *fifoNode) Closed(c ConnID, err error) {
	if n.closed[c] {
		n.t.Fatalf("node %d told twice that conn %d closed", n.id, c)
	}
	n.closed[c] = true
}

type sendKey struct {
	c    ConnID
	from sim.NodeID
}

// TestFIFOUnderRandomFaults is the property ZAB depends on most: whatever latencies are drawn and
// whatever partitions, clogs, resets and crashes happen, what one end receives on a connection is
// exactly a prefix of what the other end sent on it: no reordering, no duplicates, no gaps.
func TestFIFOUnderRandomFaults(t *testing.T) {
	// Its committed fail files (testdata/rapid/TestFIFOUnderRandomFaults/) are regressions: each must replay.
	require.NotEmpty(t, rapidfail.Files(t))
	rapidfail.Check(t, func(t *rapid.T) {
		seed := rapid.Uint64().Draw(t, "seed")
		w, err := sim.New(sim.Config{Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		nw, err := New(w, Config{LatencyMin: clock.Millisecond, LatencyMax: 50 * clock.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		const size = 4
		nodes := make([]*fifoNode, size)
		for i := range nodes {
			nodes[i] = &fifoNode{t: t, got: map[ConnID][]uint64{}, closed: map[ConnID]bool{}, peers: map[ConnID]sim.NodeID{}}
			nodes[i].id = w.AddNode(fmt.Sprintf("n%d", i), nil)
			if err := nw.Listen(nodes[i].id, port, nodes[i]); err != nil {
				t.Fatal(err)
			}
		}
		sent := map[sendKey]uint64{}
		steps := rapid.IntRange(1, 80).Draw(t, "steps")
		for step := 0; step < steps; step++ {
			a := rapid.IntRange(0, size-1).Draw(t, "a")
			b := rapid.IntRange(0, size-1).Draw(t, "b")
			na, nb := nodes[a], nodes[b]
			switch rapid.IntRange(0, 9).Draw(t, "op") {
			case 0, 1:
				if a != b && w.IsUp(na.id) {
					c, err := nw.Dial(na.id, nb.id, port, clock.Second, na)
					if err != nil {
						t.Fatal(err)
					}
					na.peers[c] = nb.id
				}
			case 2, 3, 4:
				for k := rapid.IntRange(1, 5).Draw(t, "burst"); k > 0 && len(na.open) > 0; k-- {
					c := na.open[rapid.IntRange(0, len(na.open)-1).Draw(t, "conn")]
					key := sendKey{c, na.id}
					var buf [8]byte
					binary.BigEndian.PutUint64(buf[:], sent[key])
					if nw.Send(na.id, c, buf[:]) == nil {
						sent[key]++
					}
				}
			case 5:
				if rapid.Bool().Draw(t, "oneway") {
					nw.CutOneWay(na.id, nb.id)
				} else {
					nw.Partition([]sim.NodeID{na.id}, []sim.NodeID{nb.id})
				}
			case 6:
				nw.Heal()
			case 7:
				if len(na.open) > 0 {
					nw.Reset(na.open[rapid.IntRange(0, len(na.open)-1).Draw(t, "reset")])
				}
			case 8:
				nw.ClogNode(na.id, clock.Duration(rapid.IntRange(0, 3000).Draw(t, "clogms"))*clock.Millisecond)
			case 9:
				if w.IsUp(na.id) {
					w.Crash(na.id)
					na.open = nil
				} else {
					w.Restart(na.id)
					if err := nw.Listen(na.id, port, na); err != nil {
						t.Fatal(err)
					}
				}
			}
			w.RunFor(clock.Duration(rapid.IntRange(0, 200).Draw(t, "runms")) * clock.Millisecond)
		}
		nw.Heal()
		nw.UnclogAll()
		w.RunFor(10 * clock.Second)
		if o := w.Outcome(); o.Kind != sim.Running || len(o.OutsideFaultModel) > 0 {
			t.Fatalf("unexpected outcome %v", o)
		}
		for _, receiver := range nodes {
			for c, got := range receiver.got {
				sender := receiver.peers[c]
				for i, seq := range got {
					if seq != uint64(i) {
						t.Fatalf("conn %d %v->%v: message %d carries sequence %d (got %v)", c, sender, receiver.id, i, seq, got)
					}
				}
				if uint64(len(got)) > sent[sendKey{c, sender}] {
					t.Fatalf("conn %d: received %d messages but only %d were sent", c, len(got), sent[sendKey{c, sender}])
				}
			}
		}
	})
}
