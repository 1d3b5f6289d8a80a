package scenarios

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/zabmodel"
)

// Script is a scenario: the cluster, the workload and a timed list of fault actions. A random run
// draws one from its seed; a shrunk failure is saved as one; a hand-written one is a named scenario
// or a regression test. The text form has one statement per line:
//
//	# A leader crash during broadcast.
//	servers 3
//	observers 0
//	clients 5
//	workload registers
//	duration 30s
//	containercheck 5s
//	sessiontimeout 40s
//	connectiontimeout 15s
//	electionrecipe selector
//	zkversion 3.8.0
//	at 5s crash leader
//	at 12s restart zk3
//
// Actions (targets are servers "zk1".."zkN", voters then observers, "leader" (the leader serving
// at that moment, if any), "follower" (some serving follower), clients "c1".."cN", or "all": every
// server, or for kill, revive and expire every client):
//
//	crash S / restart S                   a server process dies / starts again (restart takes
//	                                      zkN or all: leader and follower name running servers)
//	crashpoint S POINT [N] [restart DUR]  S crashes the N-th time (default 1) it reaches POINT, a
//	                                      place between two persistence steps (see CrashPoints),
//	                                      counting from this action, within the fault phase; with
//	                                      "restart DUR" it starts again DUR after that crash. A
//	                                      server may be armed at several points at once; each
//	                                      action counts its own hits and crashes it once. POINT
//	                                      is any effect boundary (see CrashPoints): the six
//	                                      persistence steps, before-/after-append, -fsync,
//	                                      -snapshot, -epoch-write:FILE, and before-send:TYPE /
//	                                      after-send:TYPE for a quorum packet (after-send:SNAP)
//	pausepoint S POINT [N] for DUR        the same hit pauses S (a GC pause) for DUR instead
//	resetpoint S POINT [N]                the same hit resets the connection the boundary writes
//	                                      to (every connection of S at a persistence step)
//	partition T... | T... [| T...]        groups that cannot talk to each other (no node in two)
//	oneway T T                            messages from the first to the second are held (two
//	                                      different single nodes: not all)
//	isolate T                             T talks to nobody
//	heal                                  every partition ends
//	clog T DUR / swizzle DUR              hold a node's messages for DUR / clog a random subset
//	reset T                               reset every connection of T
//	pause T DUR                           stop a process (a GC pause) for DUR
//	kill C / revive C                     a client process crashes / starts again
//	expire C                              a forced session expiry: a "killer" client process
//	                                      connects with C's session id and password and sends
//	                                      closeSession while C's own client still holds the
//	                                      session (C may be "all")
//	drift T PPM / stepwall T [-]DUR       clock faults on a server's or a client's clock: the
//	                                      rate within ±500000ppm (clock.MaxDriftPPM); a
//	                                      wall-clock step may go backwards, while the monotonic
//	                                      clock that timeouts use never does
//
// Times and durations are Go durations ("1.5s", "200ms"; a bare number is an error), and an
// action's time counts from the start of the fault phase, after the cluster's warm-up.
// "sessiontimeout" is the session timeout the client applications ask for (4s to 40s; default
// 6s). Every statement but "at" appears at most once, "duration" is more than zero, and "zxidcounter"
// and "observers" above 0 need more than one server. Every action
// happens before the end of the duration, names only servers and clients the script's cluster has,
// and names the kind of node its verb acts on (C: a client or all; S: a server, leader, follower
// or all; T: any node). A script that breaks any of these is an error naming its line. A legal
// target may still find nothing at run time (no leader at that moment, a server already down, a
// client without a session): the action then does nothing, the trace says so, and it is not
// counted as an injected fault.
type Script struct {
	Servers   int
	Observers int
	Clients   int
	Workload  string
	Duration  clock.Duration
	// InitialZxidCounter, if positive, starts every new leader's zxid counter there (the
	// zookeeper.testingonly.initialZxid knob), so that a run can reach the counter's overflow.
	// ZooKeeper applies it only in a quorum leader, so a script of one server may not set it.
	InitialZxidCounter int64
	// ContainerCheckInterval, if positive, is how often the leader's container manager looks for
	// empty containers to delete (znode.container.checkIntervalMs); 0 keeps ZooKeeper's default,
	// one minute.
	ContainerCheckInterval clock.Duration
	// SessionTimeout, if positive, is the session timeout the client applications ask for (the
	// "sessiontimeout" statement); 0 keeps the default, 6 s.
	SessionTimeout clock.Duration
	// ConnectionTimeout, if positive, is the lock recipes' connection timeout (Curator's
	// connectionTimeoutMs: how long an operation waits for a connection before it is tried
	// anyway); 0 keeps Curator's default, 15 s.
	ConnectionTimeout clock.Duration
	// ElectionRecipe is the election workload's recipe: "latch" (LeaderLatch, the default when
	// empty) or "selector" (LeaderSelector with autoRequeue).
	ElectionRecipe string
	// ZKVersion, if set, is the ZooKeeper release the servers behave as (zabmodel.ParseRelease):
	// its bug switches are on, in addition to the run's own.
	ZKVersion string
	Actions   []Action
}

// Action is one timed fault.
type Action struct {
	At   clock.Duration // from the start of the fault phase
	Verb string
	Args []string
	// Line is the script line the action was read from (0 for an action built in code), so that a
	// check that needs the whole script can still name the line at fault.
	Line int
}

func (a Action) String() string {
	return strings.TrimSpace(fmt.Sprintf("at %s %s %s", formatDuration(a.At), a.Verb, strings.Join(a.Args, " ")))
}

// verbs maps each action to the number of arguments it takes (-1: one or more, with '|';
// variableArgs: checked by the verb's own parser).
var verbs = map[string]int{
	"crash": 1, "restart": 1, "crashpoint": variableArgs, "pausepoint": variableArgs, "resetpoint": variableArgs, "partition": -1, "oneway": 2, "isolate": 1, "heal": 0,
	"clog": 2, "swizzle": 1, "reset": 1, "pause": 2, "kill": 1, "revive": 1, "drift": 2, "stepwall": 2,
	"expire": 1, "stall": 2,
}

// ScriptError is a parse error with its line.
type ScriptError struct {
	Line int
	Msg  string
}

// Error names the line; a script built in code has none, and its error names the action instead.
func (e *ScriptError) Error() string {
	if e.Line <= 0 {
		return "script: " + e.Msg
	}
	return fmt.Sprintf("script line %d: %s", e.Line, e.Msg)
}

// ParseScript reads a script. Every problem is an error naming its line; nothing is guessed. The
// checks that need the whole script (the cluster's size for every target, the duration for every
// action's time) run once it is read, and still name the line at fault; those that need the
// clients or the duration are left to Run when the script does not set them, since the run's
// options then decide them.
func ParseScript(r io.Reader) (*Script, error) {
	s := &Script{Observers: -1}
	// statements maps each statement other than "at" to its line: each may appear once.
	statements := map[string]int{}
	sc := bufio.NewScanner(r)
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if i := strings.IndexByte(text, '#'); i >= 0 {
			text = strings.TrimSpace(text[:i])
		}
		if text == "" {
			continue
		}
		f := strings.Fields(text)
		if first, ok := statements[f[0]]; ok {
			// The last one winning would be a guess at what the author meant.
			return nil, &ScriptError{Line: line, Msg: fmt.Sprintf("%q is set twice (first on line %d)", f[0], first)}
		}
		if f[0] != "at" {
			statements[f[0]] = line
		}
		if err := s.parseLine(line, f); err != nil {
			return nil, &ScriptError{Line: line, Msg: err.Error()}
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, &ScriptError{Line: line + 1, Msg: fmt.Sprintf("the line is longer than %d bytes", bufio.MaxScanTokenSize)}
		}
		return nil, fmt.Errorf("script: reading line %d: %w", line+1, err)
	}
	if s.Servers == 0 {
		return nil, &ScriptError{Line: line, Msg: "the script sets no \"servers\""}
	}
	if s.Observers < 0 {
		s.Observers = 0
	}
	slices.SortStableFunc(s.Actions, func(a, b Action) int { return int(a.At - b.At) })
	if err := s.check(s.Clients, s.Duration, statements); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *Script) parseLine(line int, f []string) error {
	setting := func(target *int, lo, hi int) error {
		if len(f) != 2 {
			return fmt.Errorf("%s takes one number", f[0])
		}
		n, err := strconv.Atoi(f[1])
		if err != nil || n < lo || n > hi {
			return fmt.Errorf("%s must be a number from %d to %d, not %q", f[0], lo, hi, f[1])
		}
		*target = n
		return nil
	}
	switch f[0] {
	case "servers":
		return setting(&s.Servers, 1, 7)
	case "observers":
		return setting(&s.Observers, 0, 2)
	case "clients":
		return setting(&s.Clients, 1, 100)
	case "workload":
		if len(f) != 2 || !slices.Contains(Workloads(), f[1]) {
			return fmt.Errorf("workload takes one of %s", strings.Join(Workloads(), ", "))
		}
		s.Workload = f[1]
		return nil
	case "duration":
		if len(f) != 2 {
			return fmt.Errorf("duration takes one duration")
		}
		d, err := parseDuration(f[1])
		if err != nil {
			return err
		}
		// Zero is not "the default": a script that means the default leaves the line out.
		if d <= 0 || d > maxScriptDuration {
			return fmt.Errorf("duration must be more than 0 and at most %s, not %q", formatDuration(maxScriptDuration), f[1])
		}
		s.Duration = d
		return nil
	case "zxidcounter":
		if len(f) != 2 {
			return fmt.Errorf("zxidcounter takes one number")
		}
		n, err := strconv.ParseInt(f[1], 0, 64)
		if err != nil || n < 1 || n >= 0xffffffff {
			return fmt.Errorf("zxidcounter must be a number from 1 to 0xfffffffe, not %q", f[1])
		}
		s.InitialZxidCounter = n
		return nil
	case "containercheck":
		if len(f) != 2 {
			return fmt.Errorf("containercheck takes one duration")
		}
		d, err := parseDuration(f[1])
		if err != nil {
			return err
		}
		if d < clock.Millisecond || d > clock.Hour {
			return fmt.Errorf("containercheck must be from 1ms to 1h, not %s", f[1])
		}
		s.ContainerCheckInterval = d
		return nil
	case "sessiontimeout":
		if len(f) != 2 {
			return fmt.Errorf("sessiontimeout takes one duration")
		}
		d, err := parseDuration(f[1])
		if err != nil {
			return err
		}
		if d < MinSessionTimeout || d > MaxSessionTimeout {
			return fmt.Errorf("sessiontimeout must be from %s to %s (what the servers grant: 2 to 20 ticks of 2s), not %s",
				formatDuration(MinSessionTimeout), formatDuration(MaxSessionTimeout), f[1])
		}
		s.SessionTimeout = d
		return nil
	case "connectiontimeout":
		if len(f) != 2 {
			return fmt.Errorf("connectiontimeout takes one duration")
		}
		d, err := parseDuration(f[1])
		if err != nil {
			return err
		}
		if d < clock.Millisecond || d > 10*clock.Minute {
			return fmt.Errorf("connectiontimeout must be from 1ms to 10m, not %s", f[1])
		}
		s.ConnectionTimeout = d
		return nil
	case "electionrecipe":
		if len(f) != 2 || (f[1] != "latch" && f[1] != "selector") {
			return fmt.Errorf("electionrecipe takes latch or selector")
		}
		s.ElectionRecipe = f[1]
		return nil
	case "zkversion":
		if len(f) != 2 {
			return fmt.Errorf("zkversion takes one version")
		}
		release, err := zabmodel.ParseRelease(f[1])
		if err != nil {
			return err
		}
		s.ZKVersion = release.Name
		return nil
	case "at":
		return s.parseAction(line, f[1:])
	}
	return fmt.Errorf("unknown statement %q (want servers, observers, clients, workload, duration, zxidcounter, containercheck, sessiontimeout, connectiontimeout, electionrecipe, zkversion or at)", f[0])
}

func (s *Script) parseAction(line int, f []string) error {
	if len(f) < 2 {
		return fmt.Errorf("an action needs a time and a verb")
	}
	at, err := parseDuration(f[0])
	if err != nil {
		return err
	}
	verb, args := f[1], f[2:]
	if err := checkAction(verb, args); err != nil {
		return err
	}
	s.Actions = append(s.Actions, Action{At: at, Verb: verb, Args: args, Line: line})
	return nil
}

// checkArgs validates what does not depend on the cluster: the argument types, and that each
// target names the kind of node the verb acts on.
func checkArgs(verb string, args []string) error {
	if err := checkTargetKinds(verb, args); err != nil {
		return err
	}
	switch verb {
	case "clog", "pause":
		_, err := parseDuration(args[1])
		return err
	case "stall":
		d, err := parseDuration(args[1])
		if err == nil && d <= 0 {
			return fmt.Errorf("stall takes a positive duration, like 2s, not %q", args[1])
		}
		return err
	case "stepwall":
		_, err := parseSignedDuration(args[1])
		return err
	case "swizzle":
		_, err := parseDuration(args[0])
		return err
	case "drift":
		_, err := parseDrift(args[1])
		return err
	case "crashpoint", "pausepoint", "resetpoint":
		_, err := parsePointAction(verb, args)
		return err
	}
	return nil
}

// variableArgs marks a verb whose number of arguments its own parser checks.
const variableArgs = -2

// crashPointNames are the effect boundaries where a zabmodel server asks its hook whether
// something happens to it (zabmodel.Boundaries is the truth, and TestEveryCrashPointIsReached
// checks that the run reaches them): the six historical crash points between two persistence
// steps first, then the boundaries of every append, fsync, snapshot, epoch file and quorum packet
// write.
var crashPointNames = zabmodel.Boundaries()

// pointVerbs are the actions that arm a server at an effect boundary rather than act at once.
var pointVerbs = []string{"crashpoint", "pausepoint", "resetpoint"}

// injectionKind is what an armed boundary does to its server when it fires.
type injectionKind uint8

const (
	injectCrash injectionKind = iota
	injectPause
	injectReset
)

// CrashPoints returns the names a crashpoint action accepts, in a fixed order.
func CrashPoints() []string { return slices.Clone(crashPointNames) }

// maxCrashpointCount bounds N in "crashpoint T POINT N": far more hits than a run of an hour makes.
const maxCrashpointCount = 10_000_000

// crashpointSpec is a parsed "crashpoint T POINT [N] [restart DUR]", "pausepoint T POINT [N] for
// DUR" or "resetpoint T POINT [N]".
type crashpointSpec struct {
	kind   injectionKind
	target string
	point  string
	// pauseFor is how long a pausepoint pauses its server.
	pauseFor clock.Duration
	// count is N: the server crashes at its count-th hit of the point after the action.
	count        int
	restart      bool
	restartAfter clock.Duration
}

// crashpointForm is the grammar, quoted in every error about one.
const crashpointForm = "crashpoint T POINT [N] [restart DUR]"

// pointForms are the grammars of the boundary actions, by verb.
var pointForms = map[string]string{
	"crashpoint": crashpointForm,
	"pausepoint": "pausepoint T POINT [N] for DUR",
	"resetpoint": "resetpoint T POINT [N]",
}

// parsePointAction reads the arguments of any boundary action.
func parsePointAction(verb string, args []string) (crashpointSpec, error) {
	switch verb {
	case "crashpoint":
		return parseCrashpoint(args)
	case "pausepoint":
		if len(args) >= 2 && len(args) <= 5 && args[len(args)-2] == "for" {
			spec, err := parseCrashpoint(args[:len(args)-2])
			if err != nil {
				return spec, fmt.Errorf("pausepoint: %w", err)
			}
			d, err := parseDuration(args[len(args)-1])
			if err != nil || d <= 0 {
				return spec, fmt.Errorf("pausepoint's for takes a positive duration, like for 2s, not %q (%s)", args[len(args)-1], pointForms[verb])
			}
			spec.kind, spec.pauseFor = injectPause, d
			return spec, nil
		}
		return crashpointSpec{}, fmt.Errorf("pausepoint takes a server, a point, an optional count and \"for DUR\" (%s)", pointForms[verb])
	case "resetpoint":
		if len(args) < 2 || len(args) > 3 {
			return crashpointSpec{}, fmt.Errorf("resetpoint takes 2 or 3 arguments (%s), not %d", pointForms[verb], len(args))
		}
		spec, err := parseCrashpoint(args)
		if err != nil {
			return spec, fmt.Errorf("resetpoint: %w", err)
		}
		spec.kind = injectReset
		return spec, nil
	}
	return crashpointSpec{}, fmt.Errorf("%q is not a boundary action", verb)
}

// parseCrashpoint reads a crashpoint action's arguments: a server, a known point, an optional
// positive count and an optional "restart DUR".
func parseCrashpoint(args []string) (crashpointSpec, error) {
	if len(args) < 2 || len(args) > 5 {
		return crashpointSpec{}, fmt.Errorf("crashpoint takes 2 to 5 arguments (%s), not %d", crashpointForm, len(args))
	}
	spec := crashpointSpec{target: args[0], point: args[1], count: 1}
	if !crashTarget(spec.target) {
		return spec, fmt.Errorf("crashpoint takes a server (zk1, zk2, ...), leader, follower or all, not %q", spec.target)
	}
	if !slices.Contains(crashPointNames, spec.point) {
		return spec, fmt.Errorf("unknown crash point %q (known: %s)", spec.point, strings.Join(crashPointNames, ", "))
	}
	rest := args[2:]
	if len(rest) > 0 && rest[0] != "restart" {
		n, err := strconv.Atoi(rest[0])
		if err != nil || n < 1 || n > maxCrashpointCount || strings.TrimLeft(rest[0], "0123456789") != "" {
			return spec, fmt.Errorf("crashpoint's count N must be a whole number from 1 to %d, not %q (%s)", maxCrashpointCount, rest[0], crashpointForm)
		}
		spec.count, rest = n, rest[1:]
	}
	switch {
	case len(rest) == 0:
		return spec, nil
	case rest[0] != "restart":
		return spec, fmt.Errorf("crashpoint: unexpected %q after the count (%s)", rest[0], crashpointForm)
	case len(rest) != 2:
		return spec, fmt.Errorf("crashpoint's restart takes one duration, like restart 2s (%s)", crashpointForm)
	}
	d, err := parseDuration(rest[1])
	if err != nil {
		return spec, fmt.Errorf("crashpoint's restart: %w", err)
	}
	spec.restart, spec.restartAfter = true, d
	return spec, nil
}

// crashTarget reports whether a target names servers: zkN, leader, follower or all.
func crashTarget(name string) bool {
	switch name {
	case "leader", "follower", "all":
		return true
	}
	digits, ok := strings.CutPrefix(name, "zk")
	n, err := strconv.Atoi(digits)
	return ok && err == nil && n >= 1 && strings.TrimLeft(digits, "0123456789") == ""
}

// crashpointArgs renders a crashpoint action's arguments, which parseCrashpoint reads back; the
// count and the restart are written only when they differ from the default.
func crashpointArgs(spec crashpointSpec) []string {
	args := []string{spec.target, spec.point}
	if spec.count != 1 {
		args = append(args, strconv.Itoa(spec.count))
	}
	if spec.kind == injectPause {
		args = append(args, "for", formatDuration(spec.pauseFor))
	}
	if spec.restart {
		args = append(args, "restart", formatDuration(spec.restartAfter))
	}
	return args
}

// parseDuration accepts Go durations only ("1.5s", "200ms"): a bare number ("12") would leave
// its unit to a guess, and NaN or Inf to the float parser. A duration past maxScriptDuration is
// past any run's bounds (a run's fault phase is at most an hour), and refused too.
func parseDuration(s string) (clock.Duration, error) {
	d, err := time.ParseDuration(s)
	if err != nil {
		if _, numberErr := strconv.ParseFloat(s, 64); numberErr == nil {
			return 0, fmt.Errorf("bad duration %q: give its unit (e.g. %ss or %sms)", s, s, s)
		}
		return 0, fmt.Errorf("bad duration %q (want a Go duration, e.g. 1.5s or 200ms)", s)
	}
	if d < 0 {
		return 0, fmt.Errorf("negative duration %q", s)
	}
	if d > maxScriptDuration {
		return 0, fmt.Errorf("duration %q is past any run's bounds (at most %s)", s, formatDuration(maxScriptDuration))
	}
	return d, nil
}

// parseSignedDuration is parseDuration for a step that may go backwards ("-30s"), as a wall clock
// corrected by NTP does.
func parseSignedDuration(s string) (clock.Duration, error) {
	if rest, ok := strings.CutPrefix(s, "-"); ok {
		d, err := parseDuration(rest)
		return -d, err
	}
	return parseDuration(strings.TrimPrefix(s, "+"))
}

func formatDuration(d clock.Duration) string { return time.Duration(d).String() }

// Format writes the script in its text form, which ParseScript reads back.
func (s *Script) Format(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "servers %d\nobservers %d\n", s.Servers, s.Observers)
	if s.Clients > 0 {
		fmt.Fprintf(&b, "clients %d\n", s.Clients)
	}
	if s.Workload != "" {
		fmt.Fprintf(&b, "workload %s\n", s.Workload)
	}
	if s.Duration > 0 {
		fmt.Fprintf(&b, "duration %s\n", formatDuration(s.Duration))
	}
	if s.InitialZxidCounter > 0 {
		fmt.Fprintf(&b, "zxidcounter %#x\n", s.InitialZxidCounter)
	}
	if s.ContainerCheckInterval > 0 {
		fmt.Fprintf(&b, "containercheck %s\n", formatDuration(s.ContainerCheckInterval))
	}
	if s.SessionTimeout > 0 {
		fmt.Fprintf(&b, "sessiontimeout %s\n", formatDuration(s.SessionTimeout))
	}
	if s.ConnectionTimeout > 0 {
		fmt.Fprintf(&b, "connectiontimeout %s\n", formatDuration(s.ConnectionTimeout))
	}
	if s.ElectionRecipe != "" {
		fmt.Fprintf(&b, "electionrecipe %s\n", s.ElectionRecipe)
	}
	if s.ZKVersion != "" {
		fmt.Fprintf(&b, "zkversion %s\n", s.ZKVersion)
	}
	for _, a := range s.Actions {
		b.WriteString(a.String())
		b.WriteByte('\n')
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// String is the text form.
func (s *Script) String() string {
	var b strings.Builder
	_ = s.Format(&b)
	return b.String()
}

// Without returns a copy of the script without action i (for shrinking).
func (s *Script) Without(i int) *Script {
	c := *s
	c.Actions = slices.Delete(slices.Clone(s.Actions), i, i+1)
	return &c
}
