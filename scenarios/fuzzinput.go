package scenarios

import (
	"encoding/binary"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/internal/quorum"
	"github.com/zabsim/zabsim/sim"
)

// FuzzInput is a structure-aware fuzz input: a seed, whose drawn scenario and run it starts from,
// and a short list of edits to that scenario. Every input is therefore a whole swarm run, at least
// as eventful as a random seed's, and a mutation changes the faults (their kind, moment, target or
// length) rather than raw choice bytes, most of whose mutations make a run duller. The edited
// scenario is an ordinary Script: run with the same seed it is exactly the input's run, so a
// crasher is saved, replayed and shrunk as a script (`simrun replay --script F --seed S`).
//
// The same input has two encodings: bytes for `go test -fuzz` (DecodeFuzzBytes, EncodeFuzzBytes)
// and a script with a "# seed N" line for simrun fuzz's corpus directory (FormatFuzzScript).
type FuzzInput struct {
	Seed  uint64
	Edits []Edit
}

// EditKind is what an edit does to a scenario.
type EditKind uint8

const (
	// EditAdd adds one fault of Family at At, drawn as the swarm draws its faults from a stream
	// that Param seeds; with Target set, the fault's first target is that server.
	EditAdd EditKind = iota
	// EditDrop removes action Index.
	EditDrop
	// EditMove moves action Index to At.
	EditMove
	// EditRetarget aims action Index at another node of the same kind (Param picks it).
	EditRetarget
	// EditStretch scales the length argument of action Index (a pause, a clog, a swizzle, a
	// crashpoint's restart delay) by (Param%64+1)/16, from 1/16 to 4 times: it turns a pause shorter
	// than a timeout into a longer one, and back.
	EditStretch
	// EditInject arms an injection at an effect boundary (zabmodel.Boundaries), as the swarm's
	// BUGGIFY does: from At on, the next time Target (or the server Param picks) reaches boundary
	// Point (or the one Index picks), it crashes and restarts a while later, pauses, or has the
	// connection the boundary writes to reset. Param picks which and for how long. Aimed just
	// before a moment where a run reached a rare situation at that boundary, it lands exactly in
	// it, in a run that is the parent's up to there.
	EditInject
	editKinds

	// EditReseed and EditSplice describe the fuzzer's other mutations of a corpus entry; they are
	// not edits of a script and have no byte encoding. EditReseed runs the same scenario with
	// another seed (Param holds its low bits); EditSplice takes the faults of another entry (whose
	// seed Param holds) from At on.
	EditReseed EditKind = 100 + iota
	EditSplice
	// EditRecover lets the ensemble recover from At on: the parent's faults after At are dropped,
	// the network is healed and every server but Target that is down is started again, so that
	// the servers that are left elect, establish and sync around what Target's state holds (an
	// injection just before, on Target, is the fault they recover from). It has no byte
	// encoding; the fuzzer adds it to a site injection (siteMutation).
	EditRecover
	// EditRace holds a leader's quorum back around a client's write and cuts the client off
	// (raceMutation): at At, every voter but Target (the leader that proposed the write) pauses
	// or is clogged (Param picks which and for 250 ms to 3 s), and a millisecond later every
	// connection of client Client is reset. The client's retry then runs while its write is
	// proposed and not committed: it reconnects to a server that has not applied the write (the
	// leader itself, or an observer), and whatever it does there before the quorum comes back
	// (a protected-mode create's search for its node) meets a write that is outstanding. It has no
	// byte encoding.
	EditRace
	// EditRejoin makes learners that acknowledged a pending proposal leave and rejoin while it is
	// pending (rejoinMutation): at At, when leader Target proposed a client's write, the disks of
	// Target and of every voter but quorum-1 others (Param picks them) stall, the leader's for the
	// shortest time; a few milliseconds later, once those others have logged and acknowledged the
	// write, their connections are reset and their disks stall too. They rejoin the leader, whose
	// sync truncates or re-sends the write they held (it is above the leader's last commit), and
	// when the leader's own fsync completes, its acknowledgement and theirs from before are a
	// quorum while only the leader holds the write durably. The leader's ack bookkeeping decides
	// what then commits (stale-ack counts acknowledgements of copies that are gone). It has no
	// byte encoding.
	EditRejoin
)

var editNames = map[EditKind]string{EditAdd: "add", EditDrop: "drop", EditMove: "move", EditRetarget: "retarget", EditStretch: "stretch",
	EditInject: "inject", EditReseed: "reseed", EditSplice: "splice", EditRecover: "recover", EditRace: "race", EditRejoin: "rejoin"}

func (k EditKind) String() string {
	if name, ok := editNames[k]; ok {
		return name
	}
	return "edit(" + strconv.Itoa(int(k)) + ")"
}

// Edit is one change to a scenario. Index is taken modulo the number of actions, so that every
// edit applies to every scenario that has actions; an edit of an action in a scenario without any
// does nothing.
type Edit struct {
	Kind   EditKind
	Index  int
	At     clock.Duration // from the start of the fault phase; clamped below the duration
	Family string         // EditAdd: one of FaultFamilies
	// Target is, for EditAdd and EditInject, "" to let the stream (or Param) draw, or a server
	// such as "zk2"; for EditRace and EditRejoin the leader that proposed the write; for
	// EditRecover the server left as it is.
	Target string
	Point  string // EditInject: an effect boundary, or "" to let Index pick one
	Client string // EditRace: the client to cut off, such as "c2"
	// Param seeds what the edit draws: the stream of an added fault, an injection's kind and
	// length, a race's hold and length, a rejoin's durations and the voters it cuts off.
	Param uint32
}

func (e Edit) String() string {
	switch e.Kind {
	case EditAdd:
		s := fmt.Sprintf("add %s at %s stream %d", e.Family, formatDuration(e.At), e.Param)
		if e.Target != "" {
			s += " on " + e.Target
		}
		return s
	case EditInject:
		s := fmt.Sprintf("inject %d at %s", e.Param, formatDuration(e.At))
		if e.Point != "" {
			s += " at " + e.Point
		}
		if e.Target != "" {
			s += " on " + e.Target
		}
		return s
	case EditMove:
		return fmt.Sprintf("move #%d to %s", e.Index, formatDuration(e.At))
	case EditRetarget, EditStretch:
		return fmt.Sprintf("%s #%d by %d", e.Kind, e.Index, e.Param)
	case EditReseed:
		return "the same faults under another seed"
	case EditSplice:
		return fmt.Sprintf("splice the faults of seed %d's entry from %s", e.Param, formatDuration(e.At))
	case EditRecover:
		return fmt.Sprintf("recover at %s but %s", formatDuration(e.At), e.Target)
	case EditRace:
		verb, length := raceHold(e.Param)
		return fmt.Sprintf("race at %s: %s every voter but %s for %s, reset %s", formatDuration(e.At), verb, e.Target, formatDuration(length), e.Client)
	case EditRejoin:
		r := drawRejoin(e.Param)
		return fmt.Sprintf("rejoin at %s: stall %s's disk for %s and the other voters' longer, reset the learners that acknowledged %s later",
			formatDuration(e.At), e.Target, formatDuration(r.leaderStall), formatDuration(r.reset))
	}
	return fmt.Sprintf("%s #%d", e.Kind, e.Index)
}

// maxFuzzEdits bounds the edits a byte input carries: past a handful, an input is a different
// scenario rather than a variation of its seed's, and a fresh seed explores that better.
const maxFuzzEdits = 8

// fuzzEditBytes is the size of one edit in the byte encoding: kind, index, two bytes of time,
// family, parameter.
const fuzzEditBytes = 6

// DecodeFuzzBytes reads a fuzzer's bytes as an input: the first eight bytes are the seed (little
// endian, missing bytes zero), then up to maxFuzzEdits edits of six bytes each (a short tail is
// ignored). Every byte string decodes to a valid input, so no mutation is wasted on a parse error.
// An edit's time is a fraction of the fault phase (b/65536 of duration), so that the same bytes
// mean the same moment relative to any run length.
func DecodeFuzzBytes(data []byte, duration clock.Duration) FuzzInput {
	var seedBytes [8]byte
	n := copy(seedBytes[:], data)
	in := FuzzInput{Seed: binary.LittleEndian.Uint64(seedBytes[:])}
	data = data[n:]
	for len(data) >= fuzzEditBytes && len(in.Edits) < maxFuzzEdits {
		b := data[:fuzzEditBytes]
		data = data[fuzzEditBytes:]
		in.Edits = append(in.Edits, Edit{
			Kind:   EditKind(b[0] % byte(editKinds)),
			Index:  int(b[1]),
			At:     clock.Duration(int64(binary.BigEndian.Uint16(b[2:4])) * int64(duration) / 65536),
			Family: FaultFamilies[int(b[4])%len(FaultFamilies)],
			Param:  uint32(b[5]),
		})
	}
	return in
}

// EncodeFuzzBytes is DecodeFuzzBytes' inverse, up to its quantization: times are rounded to
// 1/65536 of the duration, indexes and parameters to a byte, and a Target is dropped (the byte form
// lets the stream draw every target). It writes at most maxFuzzEdits edits.
func EncodeFuzzBytes(in FuzzInput, duration clock.Duration) []byte {
	out := binary.LittleEndian.AppendUint64(nil, in.Seed)
	for i, e := range in.Edits {
		if i == maxFuzzEdits {
			break
		}
		var at uint16
		if duration > 0 {
			at = uint16(min(int64(e.At)*65536/int64(duration), 65535))
		}
		family := max(0, slices.Index(FaultFamilies, e.Family))
		out = append(out, byte(e.Kind), byte(e.Index))
		out = binary.BigEndian.AppendUint16(out, at)
		out = append(out, byte(family), byte(e.Param))
	}
	return out
}

// fuzzDrawStream separates the streams that added faults are drawn from, from the seed's own.
const fuzzDrawStream = 0x6675_7a7a_6164_6421 // "fuzzadd!"

// ApplyEdits returns a copy of base with the edits applied in order; base is not modified. The
// result is a valid script for base's cluster whenever base is: times stay inside the fault phase,
// targets stay of their kind, and actions stay sorted by time (a stable sort, so that two actions
// at one moment keep their order).
func ApplyEdits(base *Script, edits []Edit) *Script {
	s := *base
	s.Actions = slices.Clone(base.Actions)
	for _, e := range edits {
		s.applyEdit(e)
	}
	slices.SortStableFunc(s.Actions, func(a, b Action) int { return int(a.At - b.At) })
	for i := range s.Actions {
		s.Actions[i].Line = 0 // No edited action comes from a line of a file any more.
	}
	return &s
}

func (s *Script) applyEdit(e Edit) {
	at := min(max(e.At, 0), s.Duration-clock.Millisecond)
	switch e.Kind {
	case EditAdd:
		s.addDrawn(e.Family, at, e.Target, e.Param)
		return
	case EditInject:
		s.addInjection(e, at)
		return
	case EditRecover:
		s.recoverFrom(at, e.Target)
		return
	case EditRace:
		s.raceAround(at, e)
		return
	case EditRejoin:
		s.rejoinAround(at, e)
		return
	}
	if len(s.Actions) == 0 {
		return
	}
	i := e.Index % len(s.Actions)
	a := &s.Actions[i]
	switch e.Kind {
	case EditDrop:
		s.Actions = slices.Delete(s.Actions, i, i+1)
	case EditMove:
		a.At = at
	case EditRetarget:
		a.Args = retarget(a.Verb, a.Args, s, int(e.Param))
	case EditStretch:
		a.Args = stretch(a.Verb, a.Args, int64(e.Param%64)+1)
	}
}

// addDrawn adds one fault of family at, drawn as the swarm draws it, from a stream of its own.
func (s *Script) addDrawn(family string, at clock.Duration, target string, param uint32) {
	if !slices.Contains(FaultFamilies, family) {
		return
	}
	w, err := sim.New(sim.Config{Seed: fuzzDrawStream ^ uint64(param)<<20 ^ uint64(at)})
	if err != nil {
		panic(fmt.Sprintf("scenarios: a world for drawing one fault: %v", err))
	}
	defer w.Release()
	before := len(s.Actions)
	// An added fault is drawn as a BUGGIFY seed's are, with an injection at an effect boundary
	// now and then besides the fault itself: the fuzzer's faults are at least as eventful as
	// the swarm's.
	d := &drawer{w: w, s: s, buggify: true}
	d.one(family, at)
	if target == "" {
		return
	}
	// Aim what was just drawn at the target where its first argument is a server, so that a
	// fault lands on the server where something new was seen. A restart drawn with a crash of one
	// server follows it; one of "all" (after a crash of the leader) still starts what the crash
	// stopped.
	drawn := s.Actions[before:]
	if len(drawn) == 0 || len(drawn[0].Args) == 0 || !isServerTarget(drawn[0].Args[0]) {
		return
	}
	original := drawn[0].Args[0]
	for i := range drawn {
		a := &drawn[i]
		if slices.Contains(a.Args, target) {
			continue // A partition or a one-way cut that already names it would name it twice.
		}
		if len(a.Args) == 0 || a.Args[0] != original {
			continue
		}
		switch {
		case a.Verb != "restart":
			a.Args = append([]string{target}, a.Args[1:]...)
		case strings.HasPrefix(target, "zk"):
			a.Args = []string{target}
		default:
			a.Args = []string{"all"} // A restart names a server; "all" starts whichever the leader was.
		}
	}
}

// addInjection adds an EditInject's crashpoint, pausepoint or resetpoint at at.
func (s *Script) addInjection(e Edit, at clock.Duration) {
	point := e.Point
	if !slices.Contains(crashPointNames, point) {
		point = crashPointNames[e.Index%len(crashPointNames)]
	}
	servers := s.Servers + s.Observers
	target := e.Target
	if kind, _, ok := parseTarget(target); !ok || kind != aServer {
		target = "zk" + strconv.Itoa(int(e.Param/3)%servers+1)
	}
	// From a quarter of a second to 15 s: a restart or a pause shorter than a tick, or longer
	// than the session and sync timeouts.
	length := formatDuration(clock.Duration(1+int64(e.Param/24)%60) * 250 * clock.Millisecond)
	switch kind := e.Param % 3; {
	case kind == 1:
		s.Actions = append(s.Actions, Action{At: at, Verb: "pausepoint", Args: []string{target, point, "for", length}})
	case kind == 2 && strings.Contains(point, "-send:"):
		s.Actions = append(s.Actions, Action{At: at, Verb: "resetpoint", Args: []string{target, point}})
	default:
		s.Actions = append(s.Actions, Action{At: at, Verb: "crashpoint", Args: []string{target, point, "restart", length}})
	}
}

// recoverFrom drops the actions after at, then, at at, heals the network and starts every server
// but except (a restart of a running server does nothing).
func (s *Script) recoverFrom(at clock.Duration, except string) {
	kept := s.Actions[:0]
	for _, a := range s.Actions {
		if a.At <= at {
			kept = append(kept, a)
		}
	}
	s.Actions = append(kept, Action{At: at, Verb: "heal"})
	for sid := 1; sid <= s.Servers+s.Observers; sid++ {
		if name := "zk" + strconv.Itoa(sid); name != except {
			s.Actions = append(s.Actions, Action{At: at, Verb: "restart", Args: []string{name}})
		}
	}
}

// raceHold is what an EditRace does to the voters but the leader, by its parameter: a pause two
// times in three, otherwise a clog (the servers run, serve their clients and hold what they send),
// for 250 ms to 3 s: past the client's reconnection (a backoff of up to a second, then its session
// handshake), and short of the leader's sync limit, after which it would give up its quorum.
func raceHold(param uint32) (string, clock.Duration) {
	verb := "pause"
	if param%3 == 2 {
		verb = "clog"
	}
	return verb, clock.Duration(250+int64(param/3)%2751) * clock.Millisecond
}

// raceAround adds an EditRace's faults at at: the voters but e.Target held back (raceHold), then,
// a millisecond later, a reset of every connection of client e.Client.
func (s *Script) raceAround(at clock.Duration, e Edit) {
	kind, leader, ok := parseTarget(e.Target)
	if !ok || kind != aServer || leader > s.Servers+s.Observers {
		return
	}
	if kind, n, ok := parseTarget(e.Client); !ok || kind != aClient || n > s.Clients {
		return
	}
	verb, length := raceHold(e.Param)
	for sid := 1; sid <= s.Servers; sid++ {
		if sid != leader {
			s.Actions = append(s.Actions, Action{At: at, Verb: verb, Args: []string{"zk" + strconv.Itoa(sid), formatDuration(length)}})
		}
	}
	reset := min(at+clock.Millisecond, s.Duration-clock.Millisecond)
	s.Actions = append(s.Actions, Action{At: reset, Verb: "reset", Args: []string{e.Client}})
}

// rejoinTimes are an EditRejoin's durations, drawn from its parameter: the leader's disk stall,
// long enough for the learners it cuts off to notice, elect and sync again, and short of the
// learners' sync limit; the delay of their reset after the write was proposed, past their fsync
// and acknowledgement (an fsync takes up to 10 ms); and how much longer than the leader's the
// other disks stay stalled, so that the leader's fsync completes first.
type rejoinTimes struct {
	leaderStall, reset, extra clock.Duration
}

func drawRejoin(param uint32) rejoinTimes {
	rng := sim.NewPCG(uint64(param) ^ rejoinStream)
	return rejoinTimes{
		leaderStall: clock.Duration(300+rng.Choose(2701)) * clock.Millisecond,
		reset:       clock.Duration(15+rng.Choose(186)) * clock.Millisecond,
		extra:       clock.Duration(200+rng.Choose(1801)) * clock.Millisecond,
	}
}

// rejoinStream separates an EditRejoin's draws from its parameter's other uses.
const rejoinStream = 0x72656a6f696e2121 // "rejoin!!"

// rejoinAround adds an EditRejoin's actions at at (see EditRejoin). The learners cut off are
// quorum-1 voters other than the leader, so that their acknowledgements and the leader's own are
// a quorum exactly; Param decides which, by a shuffle of the others.
func (s *Script) rejoinAround(at clock.Duration, e Edit) {
	kind, leader, ok := parseTarget(e.Target)
	if !ok || kind != aServer || leader > s.Servers || s.Servers < 3 {
		return
	}
	r := drawRejoin(e.Param)
	others := make([]int, 0, s.Servers-1)
	for sid := 1; sid <= s.Servers; sid++ {
		if sid != leader {
			others = append(others, sid)
		}
	}
	rng := sim.NewPCG(uint64(e.Param))
	for i := len(others) - 1; i > 0; i-- {
		j := rng.Choose(i + 1)
		others[i], others[j] = others[j], others[i]
	}
	ackers := quorum.Majority(s.Servers).Size() - 1
	last := s.Duration - clock.Millisecond
	s.Actions = append(s.Actions, Action{At: at, Verb: "stall", Args: []string{e.Target, formatDuration(r.leaderStall)}})
	for _, sid := range others[ackers:] {
		s.Actions = append(s.Actions, Action{At: at, Verb: "stall", Args: []string{"zk" + strconv.Itoa(sid), formatDuration(r.leaderStall + r.extra)}})
	}
	reset := min(at+r.reset, last)
	for _, sid := range others[:ackers] {
		name := "zk" + strconv.Itoa(sid)
		s.Actions = append(s.Actions,
			Action{At: reset, Verb: "reset", Args: []string{name}},
			Action{At: reset, Verb: "stall", Args: []string{name, formatDuration(max(at+r.leaderStall+r.extra-reset, clock.Millisecond))}})
	}
}

// isServerTarget reports whether a target names servers: zkN, leader, follower.
func isServerTarget(name string) bool {
	kind, _, ok := parseTarget(name)
	return ok && (kind == aServer || kind == theLeader || kind == aFollower)
}

// retarget aims an action's first argument at another node of the same kind: a server at another
// server (or the leader), a client at another client. Actions whose first argument is not one
// node (partitions, heal, swizzle, "all") are left as they are.
func retarget(verb string, args []string, s *Script, pick int) []string {
	if len(args) == 0 {
		return args
	}
	kind, _, ok := parseTarget(args[0])
	if !ok {
		return args
	}
	var name string
	switch kind {
	case aServer, theLeader, aFollower:
		if verb == "restart" {
			return args // A restart must name a server, and which one follows its crash.
		}
		servers := s.Servers + s.Observers
		if n := pick % (servers + 1); n == servers {
			name = "leader"
		} else {
			name = "zk" + strconv.Itoa(n+1)
		}
	case aClient:
		if s.Clients == 0 {
			return args
		}
		name = "c" + strconv.Itoa(pick%s.Clients+1)
	default:
		return args
	}
	if slices.Contains(args, name) {
		return args // A partition or a one-way cut would name the node twice.
	}
	out := slices.Clone(args)
	out[0] = name
	return out
}

// stretch scales the length argument of the verbs that take one by factor/16.
func stretch(verb string, args []string, factor int64) []string {
	index := -1
	switch verb {
	case "pause", "clog":
		index = 1
	case "swizzle":
		index = 0
	case "crashpoint":
		// crashpoint S POINT [N] [restart DUR]
		if i := slices.Index(args, "restart"); i >= 0 && i+1 < len(args) {
			index = i + 1
		}
	case "pausepoint":
		// pausepoint S POINT [N] for DUR
		if i := slices.Index(args, "for"); i >= 0 && i+1 < len(args) {
			index = i + 1
		}
	}
	if index < 0 || index >= len(args) {
		return args
	}
	d, err := parseDuration(args[index])
	if err != nil || d <= 0 {
		return args
	}
	scaled := max(clock.Duration(int64(d)*factor/16), clock.Millisecond)
	out := slices.Clone(args)
	out[index] = formatDuration(scaled.Truncate(clock.Millisecond))
	return out
}

// FormatFuzzScript renders an input's scenario as simrun fuzz keeps it in its corpus and failure
// directories: a comment line with the seed, then the script. ParseFuzzScript reads it back.
func FormatFuzzScript(seed uint64, s *Script, comments ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# seed %d\n", seed)
	for _, c := range comments {
		fmt.Fprintf(&b, "# %s\n", c)
	}
	b.WriteString(s.String())
	return b.String()
}

// ParseFuzzScript reads what FormatFuzzScript wrote: the seed from its "# seed N" line, and the
// script. A file without that line is an error naming the problem.
func ParseFuzzScript(text string) (uint64, *Script, error) {
	var seed uint64
	found := false
	for _, line := range strings.Split(text, "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "# seed "); ok {
			v, err := strconv.ParseUint(strings.TrimSpace(rest), 10, 64)
			if err != nil {
				return 0, nil, fmt.Errorf("fuzz script: the seed line %q: %w", line, err)
			}
			seed, found = v, true
			break
		}
	}
	if !found {
		return 0, nil, fmt.Errorf("fuzz script: no \"# seed N\" line")
	}
	s, err := ParseScript(strings.NewReader(text))
	if err != nil {
		return 0, nil, err
	}
	return seed, s, nil
}
