package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/zabsim/zabsim/checkers"
	"github.com/zabsim/zabsim/lockmodel"
	"github.com/zabsim/zabsim/scenarios"
	"github.com/zabsim/zabsim/zabmodel"
)

// Flag defaults. They are simrun's, not scenarios': a sweep draws the cluster shape from each seed
// (swarm testing) unless told otherwise.
const (
	defaultServers       = 0  // draw 3 or 5 from the seed
	defaultObservers     = -1 // draw 0 to 2 from the seed
	defaultFaults        = "all"
	maxParallel          = 1024
	maxSeedsPerSweep     = 1 << 32
	maxShards            = 1 << 20
	maxScenarioDuration  = time.Hour
	scriptConflictAdvice = "the script sets it; edit the script instead"
)

// bugFlag collects --bug values: repeatable, each a comma-separated list of bug names. A name is
// either a ZooKeeper server bug (zabmodel) or a lock recipe bug (lockmodel); the two lists share no
// name, so one flag serves both and a printed replay command needs no second flag.
type bugFlag struct {
	bugs   zabmodel.Bugs
	recipe lockmodel.Bugs
}

func (b *bugFlag) String() string {
	if b == nil || b.empty() {
		return ""
	}
	return strings.Join(b.canonicalNames(), ",")
}

// empty reports whether no bug of either kind is switched on.
func (b *bugFlag) empty() bool { return b.bugs.Empty() && b.recipe.Empty() }

// canonicalNames are the switched-on names as the bug lists spell them, server bugs first, each
// list in zoo order, so that two spellings of the same set print alike.
func (b *bugFlag) canonicalNames() []string {
	return append(b.bugs.Names(), b.recipe.Names()...)
}

// Set parses one occurrence; an unknown name is refused at once, naming the known ones.
func (b *bugFlag) Set(value string) error {
	for _, name := range strings.Split(value, ",") {
		name = strings.TrimSpace(name)
		if name == "" || strings.EqualFold(name, "none") {
			continue
		}
		if server, err := zabmodel.ParseBugs(name); err == nil {
			for _, info := range zabmodel.BugList() {
				if server.Has(info.Bit) {
					b.bugs = b.bugs.With(info.Bit)
				}
			}
			continue
		}
		if recipe, err := lockmodel.ParseBugs(name); err == nil {
			for _, info := range lockmodel.BugList() {
				if recipe.Has(info.Bit) {
					b.recipe = b.recipe.With(info.Bit)
				}
			}
			continue
		}
		return fmt.Errorf("unknown bug %q (known: %s); 'simrun bugs' describes them", name, strings.Join(allBugNames(), ", "))
	}
	return nil
}

// allBugNames lists every bug switch: the server bugs, then the recipe bugs, each in zoo order.
func allBugNames() []string {
	var names []string
	for _, info := range zabmodel.BugList() {
		names = append(names, info.Name)
	}
	for _, info := range lockmodel.BugList() {
		names = append(names, info.Name)
	}
	return names
}

// selfTestFlag collects --selftest values: repeatable, each a comma-separated list of self-test
// names. A self-test breaks zabsim on purpose to test the harness: a server self-test
// (zabmodel.SelfTestList) breaks the server in a way only a client-visible checker can see; a
// recipe self-test (lockmodel.SelfTestList) breaks a lock recipe so that a lock checker is seen
// firing, and acts only on the lock workloads. They are not bugs, and 'simrun bugs' and 'simrun
// hunt' do not list them. The two tables share no name, so one flag serves both, as --bug serves
// the server and the recipe bugs.
type selfTestFlag struct {
	server zabmodel.SelfTests
	recipe lockmodel.SelfTests
}

func (s *selfTestFlag) String() string {
	if s == nil || s.empty() {
		return ""
	}
	return strings.Join(s.canonicalNames(), ",")
}

// empty reports whether no self-test is switched on.
func (s *selfTestFlag) empty() bool { return s.server.Empty() && s.recipe.Empty() }

// canonicalNames are the switched-on names in table order.
func (s *selfTestFlag) canonicalNames() []string {
	return append(s.server.Names(), s.recipe.Names()...)
}

// Set parses one occurrence; an unknown name is refused at once, naming the known ones.
func (s *selfTestFlag) Set(value string) error {
	for _, name := range strings.Split(value, ",") {
		name = strings.TrimSpace(name)
		if name == "" || strings.EqualFold(name, "none") {
			continue
		}
		if server, err := zabmodel.ParseSelfTests(name); err == nil {
			for _, info := range zabmodel.SelfTestList() {
				if server.Has(info.Bit) {
					s.server = s.server.With(info.Bit)
				}
			}
			continue
		}
		if recipe, err := lockmodel.ParseSelfTests(name); err == nil {
			for _, info := range lockmodel.SelfTestList() {
				if recipe.Has(info.Bit) {
					s.recipe = s.recipe.With(info.Bit)
				}
			}
			continue
		}
		return fmt.Errorf("unknown self-test %q (known: %s); 'simrun selftests' describes them", name,
			strings.Join(allSelfTestNames(), ", "))
	}
	return nil
}

// allSelfTestNames lists every self-test switch in table order.
func allSelfTestNames() []string {
	var names []string
	for _, info := range zabmodel.SelfTestList() {
		names = append(names, info.Name)
	}
	for _, info := range lockmodel.SelfTestList() {
		names = append(names, info.Name)
	}
	return names
}

// releaseVersions lists the release profiles' versions, without fixed and master.
func releaseVersions() string {
	var names []string
	for _, r := range zabmodel.Releases() {
		if r.Name != zabmodel.DefaultRelease && r.Name != "master" {
			names = append(names, r.Name)
		}
	}
	return strings.Join(names, ", ")
}

// scenarioFlags are the flags that change what a run does; every command that runs seeds has them,
// and the replay command printed for a failure repeats every one that differs from its default.
type scenarioFlags struct {
	servers                    int
	observers                  int
	clients                    int
	workload                   string
	faults                     string
	duration                   time.Duration
	livenessBound              time.Duration
	bugs                       bugFlag
	selfTests                  selfTestFlag
	noZabChecker               bool
	zkVersion                  string
	linearizableReadsAfterSync bool
	datagramFaults             bool
	failOnKnown                bool
	checkTimeLimit             time.Duration
	checker                    string
	scriptPath                 string

	// set records which flags the user gave, so that conflicts can be named.
	set map[string]bool
	// otherBuild is a note for a --script written by another build than this one, or "".
	otherBuild string
}

func (f *scenarioFlags) register(fs *flag.FlagSet) {
	fs.IntVar(&f.servers, "servers", defaultServers, "number of voting servers: 1 to 7, odd or even (0 draws 3 or 5 from each seed)")
	fs.IntVar(&f.observers, "observers", defaultObservers, "number of observers, 0 to 2 (-1 draws from each seed)")
	fs.IntVar(&f.clients, "clients", scenarios.DefaultClients, "number of simulated client applications, 1 to 100")
	fs.StringVar(&f.workload, "workload", "mixed", "workload: "+strings.Join(scenarios.Workloads(), ", ")+", or mixed (drawn from each seed)")
	fs.StringVar(&f.faults, "faults", defaultFaults, "fault families, comma-separated ("+strings.Join(scenarios.FaultFamilies, ",")+"), or all, or none")
	fs.DurationVar(&f.duration, "duration", scenarios.DefaultDuration, "virtual length of the fault phase (at most 1h)")
	fs.DurationVar(&f.livenessBound, "liveness-bound", scenarios.DefaultLivenessBound, "virtual time allowed after healing for a leader and every pending operation (at most 1h)")
	fs.Var(&f.bugs, "bug", "re-introduce a real bug by `NAME`: a server bug such as ZK-3911, or a lock recipe bug such as lock-herd, "+
		"which acts only on the lock, rwlock and election workloads (repeatable or comma-separated; see 'simrun bugs')")
	fs.Var(&f.selfTests, "selftest", "harness testing: break the server on purpose by `NAME` in a way only a client-visible checker can see, "+
		"or a lock recipe so that a lock checker fires (those act only on the lock, rwlock and election workloads) "+
		"(repeatable or comma-separated; see 'simrun selftests'); not a bug of the zoo")
	fs.BoolVar(&f.noZabChecker, "no-zab-checker", false, "harness testing: the white-box ZAB checker's violations neither end nor fail a run, "+
		"so that a self-test is seen caught by a client-visible checker alone; never for finding bugs")
	fs.StringVar(&f.zkVersion, "zk-version", zabmodel.DefaultRelease, "model the ZooKeeper release `VERSION`: its bug switches are on (with any --bug); "+
		"fixed (zabsim's model, master with every finding fixed), master, or one of "+releaseVersions()+"; 'simrun bugs' shows which release has which")
	fs.BoolVar(&f.linearizableReadsAfterSync, "linearizable-reads-after-sync", false, "add the opt-in check that reads after sync are linearizable (ZooKeeper does not promise it)")
	fs.BoolVar(&f.datagramFaults, "datagram-faults", false, "inject loss, duplication and reordering inside connections: OUTSIDE ZAB's fault model")
	fs.BoolVar(&f.failOnKnown, "fail-on-known", false, "fail a run on a known finding too: a documented behaviour of ZooKeeper 3.8 or Curator 5.x "+
		"(such as zk-accepted-epoch-lockout), which is otherwise reported as KNOWN and passes")
	fs.DurationVar(&f.checkTimeLimit, "check-time-limit", checkers.DefaultTimeLimit, "host time each linearizability check may search before its verdict is Unknown (never a pass); "+
		"the only verdict that depends on the machine's speed, not on the seed alone")
	fs.StringVar(&f.checker, "checker", "zxid", "how linearizability is decided: zxid (verify the order the zxids give; never Unknown), "+
		"porcupine (search for a linearization), or both (and cross-check them)")
	fs.StringVar(&f.scriptPath, "script", "", "run this scenario script `FILE` instead of the one each seed draws")
}

// noteSet records the flags given on the command line.
func (f *scenarioFlags) noteSet(fs *flag.FlagSet) {
	f.set = map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { f.set[fl.Name] = true })
}

// options validates the flags and builds the run options (without a seed). A script file is read
// and parsed here, so that a malformed one is a usage error before anything runs.
func (f *scenarioFlags) options() (scenarios.Options, error) {
	opts := scenarios.Options{
		Servers: f.servers, Observers: f.observers, Clients: f.clients, Duration: f.duration,
		LivenessBound: f.livenessBound, Bugs: f.bugs.bugs, RecipeBugs: f.bugs.recipe,
		SelfTests: f.selfTests.server, RecipeSelfTests: f.selfTests.recipe, NoZabChecker: f.noZabChecker,
		LinearizableReadsAfterSync: f.linearizableReadsAfterSync, DatagramFaults: f.datagramFaults, FailOnKnown: f.failOnKnown,
		CheckTimeLimit: f.checkTimeLimit,
	}
	var problems []error
	if release, err := zabmodel.ParseRelease(f.zkVersion); err != nil {
		problems = append(problems, fmt.Errorf("--zk-version: %w", err))
	} else {
		opts.Bugs = release.Bugs.Union(opts.Bugs)
	}
	switch {
	case f.workload == "":
		problems = append(problems, fmt.Errorf("--workload must name a workload (%s) or mixed", strings.Join(scenarios.Workloads(), ", ")))
	case f.workload != "mixed":
		opts.Workload = f.workload
	}
	if f.clients < 1 || f.clients > 100 {
		problems = append(problems, fmt.Errorf("--clients must be 1 to 100, not %d", f.clients))
	}
	problems = append(problems, positiveDuration("--duration", f.duration), positiveDuration("--liveness-bound", f.livenessBound),
		positiveDuration("--check-time-limit", f.checkTimeLimit))
	faults, err := scenarios.ParseFaults(f.faults)
	if err != nil {
		problems = append(problems, fmt.Errorf("--faults: %w", err))
	}
	if f.checker != "" || f.set["checker"] { // commands that do not register the flag keep the default
		if opts.Checker, err = checkers.ParseLinearizabilityChecker(f.checker); err != nil {
			problems = append(problems, fmt.Errorf("--checker: %w", err))
		}
	}
	opts.Faults = orderedFaults(faults)
	if err := errors.Join(problems...); err != nil {
		return opts, err
	}
	if err := opts.Validate(); err != nil {
		return opts, err
	}
	if f.scriptPath != "" {
		script, err := f.loadScript()
		if err != nil {
			return opts, err
		}
		opts.Script = script
		// The script decides the workload when it names one; recipe bugs must act on it.
		if err := opts.Validate(); err != nil {
			return opts, err
		}
		// The script's own duration and clients are the run's: the runner's budgets follow the
		// options, and a scripted run must be the very run the script's seed made.
		if script.Duration > 0 {
			opts.Duration = script.Duration
		}
		if script.Clients > 0 {
			opts.Clients = script.Clients
		}
	}
	return opts, nil
}

func positiveDuration(name string, d time.Duration) error {
	if d <= 0 || d > maxScenarioDuration {
		return fmt.Errorf("%s must be more than 0 and at most %v, not %v", name, maxScenarioDuration, d)
	}
	return nil
}

// loadScript reads --script. Flags that the script itself decides are refused rather than silently
// ignored: the cluster shape and the fault schedule always come from the script, and the clients
// and the duration come from it when it sets them.
func (f *scenarioFlags) loadScript() (*scenarios.Script, error) {
	text, err := os.ReadFile(f.scriptPath)
	if err != nil {
		return nil, fmt.Errorf("--script: %w", err)
	}
	script, err := scenarios.ParseScript(bytes.NewReader(text))
	if err != nil {
		return nil, fmt.Errorf("malformed script %s: %w", f.scriptPath, err)
	}
	f.otherBuild = otherBuildWarning(f.scriptPath, string(text))
	var conflicts []error
	conflict := func(name string, scriptSetsIt bool) {
		if f.set[name] && scriptSetsIt {
			conflicts = append(conflicts, fmt.Errorf("--%s cannot be used with --script: %s", name, scriptConflictAdvice))
		}
	}
	conflict("servers", true)
	conflict("observers", true)
	conflict("faults", true)
	conflict("workload", script.Workload != "")
	conflict("clients", script.Clients > 0)
	conflict("duration", script.Duration > 0)
	conflict("zk-version", script.ZKVersion != "")
	if err := errors.Join(conflicts...); err != nil {
		return nil, err
	}
	return script, nil
}

// replayArgs renders every flag that changes the run and differs from its default, in a fixed
// order, so that the printed command reproduces the run exactly and stays short.
func (f *scenarioFlags) replayArgs() []string {
	var args []string
	add := func(name, value string) { args = append(args, "--"+name, shellQuote(value)) }
	if f.scriptPath != "" {
		add("script", f.scriptPath)
	}
	if f.servers != defaultServers {
		add("servers", strconv.Itoa(f.servers))
	}
	if f.observers != defaultObservers {
		add("observers", strconv.Itoa(f.observers))
	}
	if f.clients != scenarios.DefaultClients {
		add("clients", strconv.Itoa(f.clients))
	}
	if f.workload != "mixed" {
		add("workload", f.workload)
	}
	if faults := canonicalFaults(f.faults); faults != defaultFaults {
		add("faults", faults)
	}
	if f.duration != scenarios.DefaultDuration {
		add("duration", f.duration.String())
	}
	if f.livenessBound != scenarios.DefaultLivenessBound {
		add("liveness-bound", f.livenessBound.String())
	}
	if !f.bugs.empty() {
		add("bug", f.bugs.String())
	}
	if !f.selfTests.empty() {
		add("selftest", f.selfTests.String())
	}
	if f.noZabChecker {
		args = append(args, "--no-zab-checker")
	}
	if release, err := zabmodel.ParseRelease(f.zkVersion); err == nil && release.Name != zabmodel.DefaultRelease {
		add("zk-version", release.Name)
	}
	if f.linearizableReadsAfterSync {
		args = append(args, "--linearizable-reads-after-sync")
	}
	if f.datagramFaults {
		args = append(args, "--datagram-faults")
	}
	if f.failOnKnown {
		args = append(args, "--fail-on-known")
	}
	if f.checkTimeLimit != checkers.DefaultTimeLimit {
		add("check-time-limit", f.checkTimeLimit.String())
	}
	if f.checker != "" && f.checker != "zxid" {
		add("checker", f.checker)
	}
	return args
}

// canonicalFaults renders a fault list as the flag would be written: "all", "none", or the
// families in the injector's order.
func canonicalFaults(value string) string {
	faults, err := scenarios.ParseFaults(value)
	if err != nil {
		return value
	}
	switch len(faults) {
	case 0:
		return "none"
	case len(scenarios.FaultFamilies):
		return "all"
	}
	return strings.Join(orderedFaults(faults), ",")
}

// orderedFaults puts fault families in the injector's order, so that two spellings of the same set
// give equal options. The order does not change a run; equal options make that plain.
func orderedFaults(faults []string) []string {
	ordered := []string{}
	for _, family := range scenarios.FaultFamilies {
		if slices.Contains(faults, family) {
			ordered = append(ordered, family)
		}
	}
	return ordered
}

// shellQuote quotes a value for a POSIX shell when it holds anything but plain characters.
func shellQuote(value string) string {
	if value != "" && strings.IndexFunc(value, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./,:+=@%", r))
	}) < 0 {
		return value
	}
	return "'" + strings.ReplaceAll(value, "'", `'\''`) + "'"
}

// replayCommand is the command that replays one seed of a run made with these flags.
func (f *scenarioFlags) replayCommand(seed uint64) string {
	return strings.Join(append([]string{"simrun", "replay", "--seed", strconv.FormatUint(seed, 10)}, f.replayArgs()...), " ")
}

// seedFlag is a uint64 flag that remembers whether it was given.
type seedFlag struct {
	value uint64
	given bool
}

func (s *seedFlag) String() string {
	if s == nil {
		return "0"
	}
	return strconv.FormatUint(s.value, 10)
}

func (s *seedFlag) Set(text string) error {
	v, err := strconv.ParseUint(strings.TrimSpace(text), 10, 64)
	if err != nil {
		return fmt.Errorf("a seed is an unsigned 64-bit integer, not %q", text)
	}
	s.value, s.given = v, true
	return nil
}

// shard is --shard i/n: this worker runs the seeds whose index in the range is i modulo n.
type shard struct {
	index, count int64
}

func (s *shard) String() string {
	if s == nil || s.count == 0 {
		return "0/1"
	}
	return fmt.Sprintf("%d/%d", s.index, s.count)
}

func (s *shard) Set(text string) error {
	left, right, ok := strings.Cut(text, "/")
	if !ok {
		return fmt.Errorf("a shard is i/n, like 0/4, not %q", text)
	}
	index, err1 := strconv.ParseInt(left, 10, 64)
	count, err2 := strconv.ParseInt(right, 10, 64)
	if err1 != nil || err2 != nil {
		return fmt.Errorf("a shard is i/n with two integers, like 0/4, not %q", text)
	}
	if count < 1 || count > maxShards {
		return fmt.Errorf("shard count n must be 1 to %d, not %d", maxShards, count)
	}
	if index < 0 || index >= count {
		return fmt.Errorf("shard index i must be 0 to %d for n = %d, not %d", count-1, count, index)
	}
	s.index, s.count = index, count
	return nil
}

// owns reports whether the seed at index k of the range belongs to this shard.
func (s shard) owns(k int64) bool { return k%s.count == s.index }
