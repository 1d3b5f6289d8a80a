package main

import (
	"cmp"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/zabsim/zabsim/internal/failurestore"
	"github.com/zabsim/zabsim/scenarios"
)

const failuresUsage = `Usage: simrun failures --db FILE [--json] [--id ID] [--export DIR]

Lists the failures a farm recorded ('simrun farm'), one per signature (class, invariant, shape),
the most often found first: how often it was found, when first and last, its smallest shrunk
script's size and fault verbs, the seed it came from, and the command that replays that seed. --json prints one JSON object per
signature, with its script. --export DIR writes each signature's smallest script to DIR/ID.script
with a header giving its replay command. --id picks one signature by its ID (the first column).

The database may be read while a farm writes to it.

Exit status: 0 when the database was read (with or without failures), 2 on bad usage or a missing
or unreadable database.

Examples:
  simrun failures --db failures.db
  simrun failures --db failures.db --json > failures.jsonl
  simrun failures --db failures.db --export regress/ --id 3f2a9c1b0d4e
`

type failuresFlags struct {
	db     string
	json   bool
	id     string
	export string
}

func newFailuresFlags() (*flag.FlagSet, *failuresFlags) {
	f := &failuresFlags{}
	fs := flag.NewFlagSet("failures", flag.ContinueOnError)
	fs.StringVar(&f.db, "db", "", "the farm's SQLite `FILE` (required)")
	fs.BoolVar(&f.json, "json", false, "print one JSON object per signature, with its smallest script")
	fs.StringVar(&f.id, "id", "", "show only the signature with this `ID`")
	fs.StringVar(&f.export, "export", "", "write each signature's smallest script to `DIR`/ID.script")
	return fs, f
}

// failureJSON is one signature as --json prints it.
type failureJSON struct {
	failurestore.Entry
	Replay       string `json:"replay"`
	ScriptReplay string `json:"script_replay,omitempty"`
	Exported     string `json:"exported,omitempty"`
}

func cmdFailures(env *environment, args []string) int {
	fs, f := newFailuresFlags()
	if err := parseFlags(env, "failures", fs, args); err != nil {
		return flagExit(err)
	}
	if f.db == "" {
		usageFailed(env, "failures", errors.New("--db FILE is required"))
		return exitUsage
	}
	// Opening would create a missing database: a misspelt path must be an error instead.
	if _, err := os.Stat(f.db); err != nil {
		fmt.Fprintf(env.stderr, "simrun failures: no failure database: %v\n", err)
		return exitUsage
	}
	store, err := failurestore.Open(f.db)
	if err != nil {
		fmt.Fprintf(env.stderr, "simrun failures: %v\n", err)
		return exitUsage
	}
	defer store.Close()
	entries, err := store.List()
	if err != nil {
		fmt.Fprintf(env.stderr, "simrun failures: %v\n", err)
		return exitUsage
	}
	if f.id != "" {
		var picked []failurestore.Entry
		for _, e := range entries {
			if e.ID == f.id {
				picked = append(picked, e)
			}
		}
		if len(picked) == 0 {
			fmt.Fprintf(env.stderr, "simrun failures: no signature with ID %q in %s\n", f.id, f.db)
			return exitUsage
		}
		entries = picked
	}
	if f.export != "" {
		if err := os.MkdirAll(f.export, 0o755); err != nil {
			fmt.Fprintf(env.stderr, "simrun failures: --export: %v\n", err)
			return exitUsage
		}
	}
	var records []failureJSON
	for _, e := range entries {
		record := failureJSON{Entry: e, Replay: seedReplayCommand(e)}
		if e.Script != "" {
			path := filepath.Join(cmp.Or(f.export, "."), e.ID+".script")
			record.ScriptReplay = scriptReplayCommand(e, path)
			if f.export != "" {
				if err := os.WriteFile(path, []byte(exportedScript(e, record.ScriptReplay)), 0o644); err != nil {
					fmt.Fprintf(env.stderr, "simrun failures: --export: %v\n", err)
					return exitUsage
				}
				record.Exported = path
			}
		}
		records = append(records, record)
	}
	if f.json {
		for _, record := range records {
			writeJSON(env.stdout, record)
		}
		return exitPass
	}
	writeFailureTable(env.stdout, records, f.db)
	return exitPass
}

// writeFailureTable prints the signatures for a person.
func writeFailureTable(w io.Writer, records []failureJSON, db string) {
	if len(records) == 0 {
		fmt.Fprintf(w, "no failures recorded in %s\n", db)
		return
	}
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tFINDS\tCLASS\tINVARIANT\tSHAPE\tACTIONS\tFAULTS\tSEED\tLAST SEEN")
	var finds int64
	for _, r := range records {
		finds += r.Count
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%d\t%s\t%d\t%s\n", r.ID, r.Count, r.Class, r.Invariant, r.Shape, r.ScriptActions, r.Faults, r.Seed,
			r.LastSeen.Format("2006-01-02 15:04"))
	}
	_ = tw.Flush()
	for _, r := range records {
		fmt.Fprintf(&b, "\n%s: %s\n  %s\n  replay: %s\n", r.ID, r.Signature, r.Explanation, r.Replay)
		if r.Exported != "" {
			fmt.Fprintf(&b, "  script: %s\n", r.Exported)
		}
		fmt.Fprintf(&b, "  build: %s\n", r.Build)
	}
	fmt.Fprintf(&b, "\n%d signatures, %d finds in %s\n", len(records), finds, db)
	_, _ = io.WriteString(w, b.String())
}

// storedFlags reads back the scenario flags a farm stored (as its replay arguments render them).
func storedFlags(flags string) (scenarioFlags, error) {
	var f scenarioFlags
	fs := flag.NewFlagSet("stored", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	f.register(fs)
	args, err := splitShellWords(flags)
	if err == nil {
		err = fs.Parse(args)
	}
	f.noteSet(fs)
	return f, err
}

// splitShellWords undoes shellQuote for the words of a stored flag list.
func splitShellWords(text string) ([]string, error) {
	var words []string
	var word strings.Builder
	inWord, quoted := false, false
	for i := 0; i < len(text); i++ {
		c := text[i]
		switch {
		case quoted && c == '\'':
			quoted = false
		case quoted:
			word.WriteByte(c)
		case c == '\'':
			quoted, inWord = true, true
		case c == '\\' && i+1 < len(text):
			i++
			word.WriteByte(text[i])
			inWord = true
		case c == ' ':
			if inWord {
				words = append(words, word.String())
				word.Reset()
				inWord = false
			}
		default:
			word.WriteByte(c)
			inWord = true
		}
	}
	if quoted {
		return nil, fmt.Errorf("unterminated quote in %q", text)
	}
	if inWord {
		words = append(words, word.String())
	}
	return words, nil
}

// seedReplayCommand replays the seed that found the signature's smallest script, with the farm's
// flags: the whole original run.
func seedReplayCommand(e failurestore.Entry) string {
	f, err := storedFlags(e.Flags)
	if err != nil {
		return "simrun replay --seed " + strconv.FormatUint(e.Seed, 10) + " " + e.Flags
	}
	return f.replayCommand(e.Seed)
}

// scriptReplayCommand replays the smallest script saved at path, as 'simrun shrink' prints it:
// the script decides the cluster, workload, faults, clients and duration.
func scriptReplayCommand(e failurestore.Entry, path string) string {
	f, err := storedFlags(e.Flags)
	if err != nil {
		return ""
	}
	f.scriptPath = path
	f.servers, f.observers, f.faults = defaultServers, defaultObservers, defaultFaults
	f.workload, f.clients, f.duration = "mixed", scenarios.DefaultClients, scenarios.DefaultDuration
	return f.replayCommand(e.ScriptSeed)
}

// exportedScript is the script file --export writes: a header, then the script.
func exportedScript(e failurestore.Entry, replay string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Failure %s, found %d times by simrun farm (first %s, last %s), smallest script from seed %d.\n",
		e.Signature, e.Count, e.FirstSeen.Format("2006-01-02 15:04:05Z07:00"), e.LastSeen.Format("2006-01-02 15:04:05Z07:00"), e.Seed)
	fmt.Fprintf(&b, "# Build: %s\n", e.Build)
	fmt.Fprintf(&b, "# Replay: %s\n", replay)
	b.WriteString(e.Script)
	return b.String()
}
