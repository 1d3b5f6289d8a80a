package scenarios

import (
	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/net"
	"github.com/zabsim/zabsim/zabmodel"
)

// Watch receives a run's structured events as they happen, for a consumer that draws the run (the
// HTML report of a failing seed) and must not parse the text trace back. Every hook only watches:
// none draws a choice, schedules an event or writes a trace record, so that a run watched is the
// run unwatched, with the same trace hash. A nil hook is skipped.
type Watch struct {
	// Started is told the run's cluster and the virtual time at which the fault phase starts
	// (script times count from it) and ends, before the first event.
	Started func(RunShape)
	// Protocol receives every protocol event of every server (zabmodel.Event), in order.
	Protocol func(zabmodel.Event)
	// Message receives every data message delivered between two nodes.
	Message func(Message)
	// Action is told each script action as it acts: its index in Script.Actions, and why it did
	// nothing ("" when it did something).
	Action func(index int, action Action, at clock.Time, idle string)
}

// RunShape is what Watch.Started is told.
type RunShape struct {
	Script               *Script
	Servers              []string // node names of the servers, voters then observers ("zk1"...)
	Clients              []string // node names of the client applications ("c1"...)
	FaultStart, FaultEnd clock.Time
}

// Message is one delivered data message: its sender and receiver by node name, when it was sent
// and delivered, and the protocol's label for it ("PROPOSAL zxid=0x2:0x5", "request getData ...").
type Message struct {
	From, To        string
	Sent, Delivered clock.Time
	Size            int
	Label           string
}

// startWatch connects the watch's hooks to a built runner.
func (r *runner) startWatch() {
	watch := r.opts.Watch
	if watch == nil {
		return
	}
	if watch.Message != nil {
		r.nw.ObserveDeliveries(func(d net.Delivery) {
			watch.Message(Message{From: r.w.Name(d.From), To: r.w.Name(d.To), Sent: d.Sent, Delivered: d.Delivered,
				Size: d.Size, Label: d.Label})
		})
	}
	if watch.Started != nil {
		shape := RunShape{Script: r.script, FaultStart: r.faultStart, FaultEnd: r.faultEnd}
		for _, s := range r.ens.Servers() {
			shape.Servers = append(shape.Servers, r.w.Name(s.Node()))
		}
		for _, a := range r.apps {
			shape.Clients = append(shape.Clients, a.name)
		}
		watch.Started(shape)
	}
}
