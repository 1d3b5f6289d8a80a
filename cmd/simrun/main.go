package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
)

// Exit codes, which CI acts on.
const (
	exitPass    = 0 // every run passed (or the command did what was asked)
	exitFailure = 1 // a run failed, or a determinism bug was seen
	exitUsage   = 2 // bad flags, bad input, or a run that could not be set up
	// exitInterrupted is a sweep stopped by SIGINT with no failure found: 128 + 2, as a shell
	// reports a process that SIGINT ended.
	exitInterrupted = 130
)

// environment is what a command may touch of the host. Tests replace every part of it, which is
// what lets them run the commands in-process.
type environment struct {
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	// stderrIsTerminal says whether a progress line may be drawn on stderr.
	stderrIsTerminal bool
	// run replaces scenarios.Run when set.
	run runFunc
	// args is the command line after the program name, for the artifacts to record.
	args []string
	// interrupt is closed at the first SIGINT: a sweep then starts no new seed and prints its
	// partial summary. nil never fires.
	interrupt <-chan struct{}
}

// command is one subcommand: its name, a one-line summary, its help text, and its body.
type command struct {
	name    string
	summary string
	usage   string
	run     func(env *environment, args []string) int
}

// commands lists the subcommands in the order help shows them. It is built by a function because
// the help command refers to the list itself.
func commands() []command {
	return []command{
		{"run", "sweep seeds and report the failing ones", runUsage, cmdRun},
		{"merge", "merge the --json output of a sweep's shards into the whole sweep's result", mergeUsage, cmdMerge},
		{"farm", "run fresh seeds for a time limit, recording each distinct failure in a database", farmUsage, cmdFarm},
		{"failures", "list and export the failures a farm recorded", failuresUsage, cmdFailures},
		{"replay", "run one seed or script with its trace, and check determinism", replayUsage, cmdReplay},
		{"shrink", "shrink a failing seed's script to a minimal one", shrinkUsage, cmdShrink},
		{"explore", "crash a small configuration at every crash point it reaches, one run each", exploreUsage, cmdExplore},
		{"check", "explore every state of a small configuration within bounds (a model checker)", checkUsage, cmdCheck},
		{"script", "print the fault script a seed draws", scriptUsage, cmdScript},
		{"conform", "run conformance sequences (JSON lines on stdin) against the simulated server", conformUsage, cmdConform},
		{"bugs", "list the re-introducible ZooKeeper and lock recipe bugs", bugsUsage, cmdBugs},
		{"fuzz", "fuzz with structure-aware inputs and protocol-state feedback", fuzzUsage, cmdFuzz},
		{"selftests", "list the harness self-tests: deliberate server breaks that only a client-visible checker sees", selfTestsUsage, cmdSelfTests},
		{"hunt", "the bug zoo benchmark: seeds and wall time until each bug is found", huntUsage, cmdHunt},
		{"compare-locks", "ZooKeeper locks against Redis locks under the same faults: violations per cell", compareUsage, cmdCompareLocks},
		{"bench", "measure the simulator on a fixed standard scenario", benchUsage, cmdBench},
		{"help", "show help for simrun or one command", helpUsage, cmdHelp},
	}
}

// gcPercent is the garbage collector's target when GOGC is not set. A simulated run keeps a small
// live heap (a few MB per world) and allocates fast, so Go's default of 100 spends a large share of
// a sweep collecting; 400 measured between 1.03 (both cores busy) and 1.37 (a core to spare for the
// collector) times the seeds per second of the default on the standard scenario (simrun bench), for
// a few tens of MB more per worker.
const gcPercent = 400

func main() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(gcPercent)
	}
	env := &environment{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, stderrIsTerminal: isTerminal(os.Stderr),
		interrupt: interruptOnce()}
	os.Exit(runMain(env, os.Args[1:]))
}

// interruptOnce returns a channel closed at the first SIGINT. The handler is removed then, so that
// a second Ctrl-C ends simrun at once.
func interruptOnce() <-chan struct{} {
	interrupt := make(chan struct{})
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, os.Interrupt)
	go func() {
		<-signals
		signal.Stop(signals)
		close(interrupt)
	}()
	return interrupt
}

// isTerminal reports whether f is a character device, which is how a terminal looks to a process
// without reaching for a terminal library.
func isTerminal(f *os.File) bool {
	info, err := f.Stat()
	return err == nil && info.Mode()&os.ModeCharDevice != 0
}

// runMain dispatches to a subcommand. A panic anywhere in a command is a bug in simrun itself; it
// is reported with its stack and exit code 1 instead of crashing without context.
func runMain(env *environment, args []string) (code int) {
	defer func() {
		if value := recover(); value != nil {
			fmt.Fprintf(env.stderr, "simrun: internal error (please report): %v\n%s", value, debug.Stack())
			code = exitFailure
		}
	}()
	if len(args) == 0 {
		writeMainUsage(env.stderr)
		return exitUsage
	}
	env.args = args
	name := args[0]
	switch name {
	case "-h", "-help", "--help":
		writeMainUsage(env.stdout)
		return exitPass
	case "-version", "--version", "version":
		fmt.Fprintf(env.stdout, "simrun %s\n", buildDescription())
		return exitPass
	}
	for _, c := range commands() {
		if c.name == name {
			return c.run(env, args[1:])
		}
	}
	fmt.Fprintf(env.stderr, "simrun: unknown command %q\nRun 'simrun help' for the list of commands.\n", name)
	return exitUsage
}

func writeMainUsage(w io.Writer) {
	var b strings.Builder
	b.WriteString(mainUsage)
	b.WriteString("\nCommands:\n")
	for _, c := range commands() {
		fmt.Fprintf(&b, "  %-8s %s\n", c.name, c.summary)
	}
	b.WriteString("\nRun 'simrun help COMMAND' (or 'simrun COMMAND -h') for a command's flags and examples.\n")
	_, _ = io.WriteString(w, b.String())
}

// cmdHelp prints the main usage or one command's.
func cmdHelp(env *environment, args []string) int {
	switch len(args) {
	case 0:
		writeMainUsage(env.stdout)
		return exitPass
	case 1:
		for _, c := range commands() {
			if c.name == args[0] {
				writeCommandUsage(env.stdout, c, nil)
				return exitPass
			}
		}
		fmt.Fprintf(env.stderr, "simrun help: unknown command %q\nRun 'simrun help' for the list of commands.\n", args[0])
		return exitUsage
	}
	fmt.Fprintf(env.stderr, "simrun help: takes at most one command name, not %d arguments\n", len(args))
	return exitUsage
}

// writeCommandUsage prints a command's help; fs, if given, adds its flags with their defaults. For
// commands other than help, the flags come from the command's own flag set.
func writeCommandUsage(w io.Writer, c command, fs *flag.FlagSet) {
	if fs == nil {
		fs = flagSetFor(c.name)
	}
	var b strings.Builder
	b.WriteString(c.usage)
	if fs != nil && hasFlags(fs) {
		b.WriteString("\nFlags (write them -flag or --flag):\n")
		fs.SetOutput(&b)
		fs.PrintDefaults()
		fs.SetOutput(io.Discard)
	}
	_, _ = io.WriteString(w, b.String())
}

func hasFlags(fs *flag.FlagSet) bool {
	found := false
	fs.VisitAll(func(*flag.Flag) { found = true })
	return found
}

// errHelp is returned by parseFlags when -h was asked for and the help has been printed.
var errHelp = errors.New("help requested")

// parseFlags parses a command's flags. Errors are reported on stderr with a pointer to the help;
// -h prints the help on stdout. Positional arguments are refused: every input is a named flag.
func parseFlags(env *environment, name string, fs *flag.FlagSet, args []string) error {
	fs.SetOutput(io.Discard)
	refuseRepeats(fs)
	err := fs.Parse(args)
	if errors.Is(err, flag.ErrHelp) {
		unwrapRepeats(fs)
		for _, c := range commands() {
			if c.name == name {
				writeCommandUsage(env.stdout, c, fs)
			}
		}
		return errHelp
	}
	if err == nil && fs.NArg() > 0 {
		err = fmt.Errorf("unexpected argument %q (every input is a flag)", fs.Arg(0))
	}
	if err != nil {
		usageFailed(env, name, err)
		return err
	}
	return nil
}

// usageFailed reports a usage error the same way for every command.
func usageFailed(env *environment, name string, err error) {
	fmt.Fprintf(env.stderr, "simrun %s: %v\nRun 'simrun help %s' for usage.\n", name, err, name)
}

// flagExit turns parseFlags' error into an exit code.
func flagExit(err error) int {
	if errors.Is(err, errHelp) {
		return exitPass
	}
	return exitUsage
}

// flagSetFor builds a command's flag set with throwaway targets, for the help command.
func flagSetFor(name string) *flag.FlagSet {
	switch name {
	case "run":
		fs, _ := newRunFlags()
		return fs
	case "merge":
		fs, _ := newMergeFlags()
		return fs
	case "farm":
		fs, _ := newFarmFlags()
		return fs
	case "failures":
		fs, _ := newFailuresFlags()
		return fs
	case "fuzz":
		fs, _ := newFuzzFlags()
		return fs
	case "replay":
		fs, _ := newReplayFlags()
		return fs
	case "shrink":
		fs, _ := newShrinkFlags()
		return fs
	case "script":
		fs, _ := newScriptFlags()
		return fs
	case "conform":
		fs, _ := newConformFlags()
		return fs
	case "bench":
		fs, _ := newBenchFlags()
		return fs
	case "hunt":
		fs, _ := newHuntFlags()
		return fs
	case "compare-locks":
		fs, _ := newCompareFlags()
		return fs
	case "explore":
		fs, _ := newExploreFlags()
		return fs
	case "check":
		fs, _ := newCheckFlags()
		return fs
	}
	return nil
}
