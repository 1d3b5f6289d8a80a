package scenarios

import (
	"bytes"
	"cmp"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/zabsim/zabsim/clock"
)

// TestEveryCheckedInScriptIsValid: every script under testdata (named scenarios, regressions and
// any other), and the explorer's default base, parses and passes the checks a run makes with the
// default clients and duration.
func TestEveryCheckedInScriptIsValid(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "*", "*.script"))
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(files), 16, "the named scenarios and the regressions")
	for _, file := range files {
		text, err := os.ReadFile(file)
		require.NoError(t, err)
		s, err := ParseScript(bytes.NewReader(text))
		require.NoError(t, err, file)
		assert.NoError(t, s.check(cmp.Or(s.Clients, DefaultClients), cmp.Or(s.Duration, DefaultDuration), nil), file)
	}
	base := DefaultExploreScript()
	assert.NoError(t, base.check(base.Clients, base.Duration, nil))
}

// TestDrawnScriptsAreValid draws scripts for many seeds and option sets: each one passes the checks
// a run makes, and its text form parses back to the same script. The swarm must never draw what a
// person may not write.
func TestDrawnScriptsAreValid(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		o := Options{
			Seed:     rapid.Uint64().Draw(t, "seed"),
			Servers:  rapid.IntRange(0, 7).Draw(t, "servers"),
			Clients:  rapid.IntRange(1, 100).Draw(t, "clients"),
			Duration: clock.Duration(rapid.IntRange(1, 3600).Draw(t, "durationSeconds")) * clock.Second,
			Faults:   rapid.SliceOfDistinct(rapid.SampledFrom(FaultFamilies), rapid.ID[string]).Draw(t, "faults"),
		}
		o.Observers = rapid.IntRange(-1, 2).Draw(t, "observers")
		if o.Servers == 1 {
			o.Observers = rapid.IntRange(-1, 0).Draw(t, "observers of one server")
		}
		s, err := DrawScript(o)
		require.NoError(t, err)
		require.NoError(t, s.check(s.Clients, s.Duration, nil), "seed %d drew:\n%s", o.Seed, s)
		again, err := ParseScript(strings.NewReader(s.String()))
		require.NoError(t, err, "seed %d drew:\n%s", o.Seed, s)
		require.Equal(t, s.String(), again.String(), "seed %d", o.Seed)
		if s.Servers == 1 {
			require.Zero(t, s.InitialZxidCounter, "seed %d: a standalone server never applies a zxid counter", o.Seed)
		}
	})
}

// TestDefaultSwarmScriptsAreValid checks the scripts of the seeds a default sweep runs, as
// TestDrawnScriptsAreValid checks random option sets.
func TestDefaultSwarmScriptsAreValid(t *testing.T) {
	for seed := uint64(1); seed <= 2000; seed++ {
		s, err := DrawScript(Options{Seed: seed, Observers: -1})
		require.NoError(t, err)
		require.NoError(t, s.check(s.Clients, s.Duration, nil), "seed %d drew:\n%s", seed, s)
		_, err = ParseScript(strings.NewReader(s.String()))
		require.NoError(t, err, "seed %d drew:\n%s", seed, s)
		// Even ensembles run only when asked for: the draw stays 3 or 5 voters, so that allowing
		// them changed no default seed.
		assert.Contains(t, []int{3, 5}, s.Servers, "seed %d", seed)
	}
}

// TestRunChecksTheScriptAgainstTheRun: what a script leaves to the options (its clients, its
// duration) is checked when it runs, and so is a script built in code; each error names the line
// or, for a script built in code, the action.
func TestRunChecksTheScriptAgainstTheRun(t *testing.T) {
	parsed := func(text string) *Script {
		s, err := ParseScript(strings.NewReader(text))
		require.NoError(t, err, text)
		return s
	}
	crash := func(target string) Action { return Action{At: clock.Second, Verb: "crash", Args: []string{target}} }
	cases := []struct {
		name   string
		script *Script
		opts   Options
		line   int
		msg    string
	}{
		{"a client beyond the options' clients", parsed("servers 3\nat 4s pause c77 3s\n"), Options{}, 2,
			"at 4s pause c77 3s: there is no client c77: the run has c1 to c5"},
		{"a client beyond --clients", parsed("servers 3\n\nat 4s kill c7\n"), Options{Clients: 6}, 3, "there is no client c7: the run has c1 to c6"},
		{"an action after the options' duration", parsed("servers 3\nat 70s crash zk1\n"), Options{}, 2,
			"at 1m10s crash zk1: the action is not before the end of the fault phase (duration 1m0s)"},
		{"a server beyond the cluster, in code", &Script{Servers: 3, Actions: []Action{crash("zk9")}}, Options{}, 0,
			"script: at 1s crash zk9: there is no server zk9"},
		{"a client verb on a server, in code", &Script{Servers: 3, Actions: []Action{{Verb: "kill", Args: []string{"zk1"}}}}, Options{}, 0,
			`kill takes a client (c1, c2, ...) or all, not "zk1"`},
		{"an unknown target, in code", &Script{Servers: 3, Actions: []Action{crash("leadr")}}, Options{}, 0, `not "leadr"`},
		{"a zxid counter on one server, in code", &Script{Servers: 1, InitialZxidCounter: 0xffffff00}, Options{}, 0,
			"zxidcounter needs more than one server"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			opts := c.opts
			opts.Seed, opts.Script = 1, c.script
			_, err := Run(opts)
			require.Error(t, err)
			assert.ErrorIs(t, err, ErrOptions)
			var se *ScriptError
			require.ErrorAs(t, err, &se)
			assert.Equal(t, c.line, se.Line)
			assert.Contains(t, err.Error(), c.msg)
		})
	}
}

// TestScriptErrorsNameTheirLine: the error type's own form, with and without a line.
func TestScriptErrorsNameTheirLine(t *testing.T) {
	assert.Equal(t, "script line 3: x", (&ScriptError{Line: 3, Msg: "x"}).Error())
	assert.Equal(t, "script: x", (&ScriptError{Msg: "x"}).Error())
	var se *ScriptError
	assert.True(t, errors.As(error(&ScriptError{Line: 1}), &se))
}
