// Package report draws one zabsim run as a single self-contained HTML page, report.html, that a
// person opens to see what happened in a failing seed without reading its text trace.
//
// The page has a header (the seed, the exact replay command, the build that made it, the failure
// class and the evidence the failure cites: servers, zxids, epoch, operations, virtual time); a
// timeline with a lane per server (its role and epoch over time, its last logged zxid, crashed
// spans, pauses, clogs, partitions as shaded bands, leaders established) and a lane per client
// (each operation from call to return, coloured by outcome, unknown outcomes hatched); a
// space-time diagram of the messages between servers and clients, opened at the violation and
// movable over the whole run, each message labelled (PROPOSAL 0x2:0x5, ACK, NEWLEADER, DIFF ...)
// and the ones the failure cites in red; the fault script with each line linked to the moment it
// acted; and the checks' verdicts with links to porcupine's visualization of each
// linearizability check, annotated with the run's faults and leader changes.
//
// Usage:
//
//	recorder := report.NewRecorder()
//	recorder.Attach(&opts) // sets opts.Watch, opts.Trace.Records and opts.Annotations
//	run, err := scenarios.Run(opts)
//	// ... handle err ...
//	err = report.Write(file, recorder, run, report.Meta{Replay: "simrun replay --seed 26 ...", Build: build})
//
// Why inline SVG drawn in Go, and a little script: the page must work offline, forever, from a
// CI artifact or a mail attachment, so it may load nothing (no chart library from a CDN, no
// fonts). The timeline is drawn here as inline SVG, which every browser renders without script;
// it is a few thousand rectangles at most. The message diagram is the exception: a run delivers
// tens of thousands of messages, too many to draw at once and too bursty for a linear time axis
// (a sync sends twenty packets in the same microsecond), so the page embeds them as JSON and
// about 150 lines of plain JavaScript, with no library, lay the messages in view out in event
// order. A small vendored library would have added weight and a licence to track for less.
//
// The data come from the run's structured events, not from the text trace: the servers'
// protocol events (zabmodel.Event) give roles, epochs and zxids; the network's deliveries give
// each message's sender, receiver, send and delivery time and label; the simulator's structured
// trace records give crashes and pauses; the scenario's action hook says when each script line
// acted; the report's history gives the clients' operations. Recording does not change the run:
// its trace hash is the same with and without a recorder.
//
// After drawing, the page's script sets data-report-ready="1" on the body, which a browser test
// looks for to know that the script ran to its end.
package report
