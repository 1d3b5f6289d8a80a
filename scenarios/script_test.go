package scenarios

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zabsim/zabsim/clock"
)

func TestNamedScriptsSurviveAFormatRoundTrip(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "named", "*.script"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, file := range files {
		text, err := os.ReadFile(file)
		require.NoError(t, err)
		first, err := ParseScript(strings.NewReader(string(text)))
		require.NoError(t, err, file)
		second, err := ParseScript(strings.NewReader(first.String()))
		require.NoError(t, err, "%s formatted:\n%s", file, first)
		assert.Equal(t, withoutLines(first), withoutLines(second), file)
	}
}

// TestCrashpointFormsSurviveAFormatRoundTrip writes every form of the crashpoint action back and
// reads it again, and checks what each form means.
func TestCrashpointFormsSurviveAFormatRoundTrip(t *testing.T) {
	text := "servers 3\n" +
		"at 1s crashpoint zk1 log-appended\n" +
		"at 2s crashpoint zk2 newleader-before-epoch 3\n" +
		"at 3s crashpoint leader fsynced-before-ack restart 1.5s\n" +
		"at 4s crashpoint all epoch-file-renamed:currentEpoch 12 restart 250ms\n"
	first, err := ParseScript(strings.NewReader(text))
	require.NoError(t, err)
	formatted := first.String()
	for _, line := range []string{
		"at 1s crashpoint zk1 log-appended\n", "at 2s crashpoint zk2 newleader-before-epoch 3\n",
		"at 3s crashpoint leader fsynced-before-ack restart 1.5s\n",
		"at 4s crashpoint all epoch-file-renamed:currentEpoch 12 restart 250ms\n",
	} {
		assert.Contains(t, formatted, line)
	}
	second, err := ParseScript(strings.NewReader(formatted))
	require.NoError(t, err, formatted)
	assert.Equal(t, withoutLines(first), withoutLines(second))

	want := []crashpointSpec{
		{target: "zk1", point: "log-appended", count: 1},
		{target: "zk2", point: "newleader-before-epoch", count: 3},
		{target: "leader", point: "fsynced-before-ack", count: 1, restart: true, restartAfter: 1500 * clock.Millisecond},
		{target: "all", point: "epoch-file-renamed:currentEpoch", count: 12, restart: true, restartAfter: 250 * clock.Millisecond},
	}
	require.Len(t, second.Actions, len(want))
	for i, a := range second.Actions {
		spec, err := parseCrashpoint(a.Args)
		require.NoError(t, err, a.String())
		assert.Equal(t, want[i], spec, a.String())
		assert.Equal(t, a.Args, crashpointArgs(spec), "the canonical form is the form written")
	}
}

// TestContainerCheckIntervalSurvivesAFormatRoundTrip: the container manager's interval is part of a
// script, so that a shrunk or saved lock scenario replays with the interval its seed drew.
func TestContainerCheckIntervalSurvivesAFormatRoundTrip(t *testing.T) {
	first, err := ParseScript(strings.NewReader("servers 3\nworkload lock\ncontainercheck 2.5s\nat 1s crash zk1\n"))
	require.NoError(t, err)
	assert.Equal(t, 2500*clock.Millisecond, first.ContainerCheckInterval)
	assert.Contains(t, first.String(), "containercheck 2.5s\n")
	second, err := ParseScript(strings.NewReader(first.String()))
	require.NoError(t, err)
	assert.Equal(t, withoutLines(first), withoutLines(second))
}

// TestSwarmDrawsContainerCheckIntervalsOnlyForLockWorkloads: a lock workload's seeds mostly check
// for empty containers every 1 to 30 s; other workloads make no containers and keep the default.
func TestSwarmDrawsContainerCheckIntervalsOnlyForLockWorkloads(t *testing.T) {
	drawn := 0
	for seed := uint64(1); seed <= 60; seed++ {
		s, err := DrawScript(Options{Seed: seed, Workload: "election", Observers: -1})
		require.NoError(t, err)
		if s.ContainerCheckInterval != 0 {
			drawn++
			assert.GreaterOrEqual(t, s.ContainerCheckInterval, clock.Second)
			assert.LessOrEqual(t, s.ContainerCheckInterval, 30*clock.Second)
		}
		other, err := DrawScript(Options{Seed: seed, Workload: "registers", Observers: -1})
		require.NoError(t, err)
		assert.Zero(t, other.ContainerCheckInterval, "seed %d", seed)
		assert.Equal(t, s.Actions, other.Actions, "seed %d: the interval is drawn after the faults", seed)
	}
	assert.Greater(t, drawn, 20)
	assert.Less(t, drawn, 60)
}

// withoutLines returns a copy of the script whose actions forget the lines they were read from:
// formatting a script drops its comments, so the same actions come back on other lines.
func withoutLines(s *Script) *Script {
	c := *s
	c.Actions = slices.Clone(s.Actions)
	for i := range c.Actions {
		c.Actions[i].Line = 0
	}
	return &c
}

func TestScriptWallClockStepsMayGoBackwards(t *testing.T) {
	s, err := ParseScript(strings.NewReader("servers 3\nat 1s stepwall zk1 -30s\nat 2s stepwall zk2 +1h\n"))
	require.NoError(t, err)
	require.Len(t, s.Actions, 2)
	d, err := parseSignedDuration(s.Actions[0].Args[1])
	require.NoError(t, err)
	assert.Equal(t, -30*clock.Second, d)
	d, err = parseSignedDuration(s.Actions[1].Args[1])
	require.NoError(t, err)
	assert.Equal(t, clock.Duration(3600)*clock.Second, d)
}

func TestMalformedScriptsAreRejectedWithTheirLine(t *testing.T) {
	cases := []struct{ text, line, msg string }{
		{"servers 3\nat 1s explode zk1\n", "line 2", `unknown action "explode"`},
		{"servers 3\nworkload banking\n", "line 2", "workload takes one of"},
		{"servers 9\n", "line 1", "servers must be a number from 1 to 7"},
		{"servers 3\nat 1s pause zk1 -2s\n", "line 2", `negative duration "-2s"`},
		{"servers 3\nat soon crash zk1\n", "line 2", `bad duration "soon"`},
		{"servers 3\nat 1s crash\n", "line 2", "crash takes 1 argument(s), not 0"},
		{"servers 3\nat 1s partition zk1 zk2\n", "line 2", "groups separated by '|'"},
		{"servers 3\nat 1s drift zk1 fast\n", "line 2", "drift takes a rate in ppm"},
		{"servers 3\nzxidcounter 0x100000000\n", "line 2", "zxidcounter must be a number"},
		{"servers 3\ncontainercheck 0s\n", "line 2", "containercheck must be from 1ms to 1h"},
		{"servers 3\ncontainercheck 2h\n", "line 2", `duration "2h" is past any run's bounds`},
		{"servers 3\ncontainercheck\n", "line 2", "containercheck takes one duration"},
		{"clients 3\n", "line 1", `sets no "servers"`},
		{"servers 3\nreplicas 3\n", "line 2", `unknown statement "replicas"`},
		{"servers 3\nat 1s expire zk1\n", "line 2", `expire takes a client (c1, c2, ...) or all, not "zk1"`},
		{"servers 3\nat 1s expire c0\n", "line 2", `expire takes a client`},
		{"servers 3\nat 1s expire leader\n", "line 2", `expire takes a client`},
		{"servers 3\nat 1s expire\n", "line 2", "expire takes 1 argument(s), not 0"},
		{"servers 3\nat 1s crashpoint zk1\n", "line 2", "crashpoint takes 2 to 5 arguments (crashpoint T POINT [N] [restart DUR]), not 1"},
		{"servers 3\nat 1s crashpoint zk1 log-appended 2 restart 1s x\n", "line 2", "crashpoint takes 2 to 5 arguments"},
		{"servers 3\n\nat 1s crashpoint zk1 nowhere\n", "line 3", `unknown crash point "nowhere" (known: epoch-file-renamed:acceptedEpoch,`},
		{"servers 3\nat 1s crashpoint c1 log-appended\n", "line 2", `crashpoint takes a server (zk1, zk2, ...), leader, follower or all, not "c1"`},
		{"servers 3\nat 1s crashpoint zk0 log-appended\n", "line 2", `crashpoint takes a server`},
		{"servers 3\nat 1s crashpoint zk1 log-appended 0\n", "line 2", `count N must be a whole number from 1 to 10000000, not "0"`},
		{"servers 3\nat 1s crashpoint zk1 log-appended -2\n", "line 2", `count N must be a whole number from 1`},
		{"servers 3\nat 1s crashpoint zk1 log-appended +2\n", "line 2", `count N must be a whole number from 1`},
		{"servers 3\nat 1s crashpoint zk1 log-appended 1.5\n", "line 2", `count N must be a whole number from 1`},
		{"servers 3\nat 1s crashpoint zk1 log-appended twice\n", "line 2", `not "twice"`},
		{"servers 3\nat 1s crashpoint zk1 log-appended 99999999\n", "line 2", `count N must be a whole number from 1`},
		{"servers 3\nat 1s crashpoint zk1 log-appended restart\n", "line 2", "crashpoint's restart takes one duration, like restart 2s"},
		{"servers 3\nat 1s crashpoint zk1 log-appended 2 restart\n", "line 2", "crashpoint's restart takes one duration"},
		{"servers 3\nat 1s crashpoint zk1 log-appended restart 2s 3\n", "line 2", "crashpoint's restart takes one duration"},
		{"servers 3\nat 1s crashpoint zk1 log-appended 2 restart soon\n", "line 2", `crashpoint's restart: bad duration "soon"`},
		{"servers 3\nat 1s crashpoint zk1 log-appended restart -1s\n", "line 2", `crashpoint's restart: negative duration "-1s"`},
		{"servers 3\nat 1s crashpoint zk1 log-appended 2 reboot 2s\n", "line 2", `crashpoint: unexpected "reboot" after the count`},
		// Targets that name nothing, or the wrong kind of process.
		{"servers 3\nat 2s crash leadr\n", "line 2", `crash takes a server (zk1, zk2, ...), leader, follower or all, not "leadr"`},
		{"servers 3\nat 1s crash c1\n", "line 2", `crash takes a server`},
		{"servers 3\nat 1s restart leader\n", "line 2", `restart takes a server (zk1, zk2, ...) or all`},
		{"servers 3\nat 1s kill zk1\n", "line 2", `kill takes a client (c1, c2, ...) or all, not "zk1"`},
		{"servers 3\nat 1s revive leader\n", "line 2", `revive takes a client`},
		{"servers 3\nat 1s pause zk01 1s\n", "line 2", `pause takes a server (zk1, zk2, ...), a client (c1, c2, ...), leader, follower or all, not "zk01"`},
		{"servers 3\nat 1s drift nobody +5ppm\n", "line 2", `drift takes a server`},
		{"servers 3\nat 1s oneway all zk1\n", "line 2", `oneway takes one node`},
		{"servers 3\n\nat 1s crash zk9\n", "line 3", "at 1s crash zk9: there is no server zk9: the cluster has zk1 to zk3 (3 servers and 0 observers)"},
		{"servers 3\nobservers 1\nat 1s isolate zk5\n", "line 3", "there is no server zk5: the cluster has zk1 to zk4"},
		{"servers 3\nat 1s crashpoint zk4 log-appended\nobservers 0\n", "line 2", "there is no server zk4"},
		{"servers 3\nclients 5\nat 4s pause c77 3s\n", "line 3", "there is no client c77: the run has c1 to c5"},
		{"servers 3\nclients 2\nat 4s partition zk1 | zk2 c3\n", "line 3", "there is no client c3"},
		// Shapes that cannot be what the author meant.
		{"servers 3\nat 5s oneway zk1 zk1\n", "line 2", "oneway cuts zk1 from itself"},
		{"servers 3\nat 1s partition zk1 zk2 | zk2 zk3\n", "line 2", "partition puts zk2 in two groups (1 and 2)"},
		{"servers 3\nat 1s partition leader | leader c1\n", "line 2", "partition puts leader in two groups"},
		{"servers 3\nat 1s partition zk1 zk1 | zk2\n", "line 2", "partition names zk1 twice"},
		{"servers 3\nat 1s partition c1 | all | zk2\n", "line 2", "partition puts zk2 in two groups: group 2 has all, which is every server"},
		{"servers 3\nat 1s partition zk1 | | zk2\n", "line 2", "partition has an empty group"},
		{"servers 3\nat 1s partition zk1 | zk2 |\n", "line 2", "partition has an empty group"},
		{"servers 3\nat 1s drift zk1 +99999999999ppm\n", "line 2", `drift must be from -500000ppm to +500000ppm (clock.MaxDriftPPM), not "+99999999999ppm"`},
		{"servers 3\nat 1s drift zk1 -500001ppm\n", "line 2", "drift must be from -500000ppm"},
		// Times and durations.
		{"servers 3\nduration 10s\nat 10s crash zk1\n", "line 3", "at 10s crash zk1: the action is not before the end of the fault phase (duration 10s)"},
		{"servers 3\nat 12s crash zk1\nduration 10s\n", "line 2", "not before the end of the fault phase"},
		{"servers 3\nduration 0s\n", "line 2", `duration must be more than 0 and at most 1h0m0s, not "0s"`},
		{"servers 3\nduration 0\n", "line 2", "duration must be more than 0"},
		{"servers 3\nduration 2h\n", "line 2", `duration "2h" is past any run's bounds (at most 1h0m0s)`},
		{"servers 3\nduration 30\n", "line 2", `bad duration "30": give its unit (e.g. 30s or 30ms)`},
		{"servers 3\nat 5 crash zk1\n", "line 2", `bad duration "5": give its unit`},
		{"servers 3\nat 1.5 crash zk1\n", "line 2", `bad duration "1.5": give its unit`},
		{"servers 3\nat NaN crash zk1\n", "line 2", `bad duration "NaN"`},
		{"servers 3\nat Inf crash zk1\n", "line 2", `bad duration "Inf"`},
		{"servers 3\nat +Inf crash zk1\n", "line 2", `bad duration "+Inf"`},
		{"servers 3\nat 1s pause c1 NaN\n", "line 2", `bad duration "NaN"`},
		{"servers 3\nat 1s clog zk1 3\n", "line 2", `bad duration "3": give its unit`},
		{"servers 3\nat 1s swizzle 1e9h\n", "line 2", `bad duration "1e9h"`},
		{"servers 3\nat 1s pause zk1 1000h\n", "line 2", `duration "1000h" is past any run's bounds`},
		{"servers 3\nat 99999999999h crash zk1\n", "line 2", `bad duration "99999999999h"`},
		{"servers 3\nat 1s stepwall zk1 -2h\n", "line 2", `duration "2h" is past any run's bounds`},
		{"servers 3\nat 1s stall zk1 0s\n", "line 2", `stall takes a positive duration, like 2s, not "0s"`},
		{"servers 3\nat 1s stall c1 2s\n", "line 2", `stall takes a server (zk1, zk2, ...), leader, follower or all, not "c1"`},
		{"servers 3\ncontainercheck 5\n", "line 2", `bad duration "5": give its unit`},
		{"servers 3\nsessiontimeout 1s\n", "line 2", "sessiontimeout must be from 4s to 40s"},
		{"servers 3\nsessiontimeout 41s\n", "line 2", "sessiontimeout must be from 4s to 40s"},
		{"servers 3\nsessiontimeout 6\n", "line 2", `bad duration "6": give its unit`},
		{"servers 3\nsessiontimeout 5s 6s\n", "line 2", "sessiontimeout takes one duration"},
		{"servers 3\nsessiontimeout 5s\nsessiontimeout 6s\n", "line 3", `"sessiontimeout" is set twice`},
		{"servers 3\n# a comment\nat 1s crash zk1 " + strings.Repeat("x", 70000) + "\n", "line 3", "the line is longer than 65536 bytes"},
		// Settings set twice, or that a single server cannot take.
		{"servers 3\nservers 5\n", "line 2", `"servers" is set twice (first on line 1)`},
		{"servers 3\nobservers 1\n# again\nobservers 2\n", "line 4", `"observers" is set twice (first on line 2)`},
		{"servers 3\nclients 3\nclients 3\n", "line 3", `"clients" is set twice`},
		{"servers 3\nworkload queue\nworkload lock\n", "line 3", `"workload" is set twice`},
		{"servers 3\nduration 5s\nduration 6s\n", "line 3", `"duration" is set twice`},
		{"servers 3\nzxidcounter 5\nzxidcounter 6\n", "line 3", `"zxidcounter" is set twice`},
		{"servers 1\nzxidcounter 0xffffff00\nduration 5s\n", "line 2", "zxidcounter needs more than one server"},
		{"zxidcounter 0xffffff00\nservers 1\n", "line 1", "zxidcounter needs more than one server"},
		{"servers 1\nobservers 1\n", "line 2", "a single server cannot have observers"},
	}
	for _, c := range cases {
		_, err := ParseScript(strings.NewReader(c.text))
		require.Error(t, err, c.text)
		var se *ScriptError
		require.ErrorAs(t, err, &se)
		assert.Contains(t, err.Error(), c.line, c.text)
		assert.Contains(t, err.Error(), c.msg, c.text)
	}
}

// TestScriptSessionTimeout: "sessiontimeout" is what every application asks for, the servers
// grant it, and the script prints it back.
func TestScriptSessionTimeout(t *testing.T) {
	script, err := ParseScript(strings.NewReader("servers 3\nclients 2\nduration 5s\nsessiontimeout 10s\n"))
	require.NoError(t, err)
	assert.Contains(t, script.String(), "sessiontimeout 10s\n")
	again, err := ParseScript(strings.NewReader(script.String()))
	require.NoError(t, err)
	assert.Equal(t, script, again)
	rep, err := Run(Options{Seed: 3, Script: script})
	require.NoError(t, err)
	require.False(t, rep.Failed(), rep.Explain())
	require.NotEmpty(t, rep.History.Sessions)
	for _, s := range rep.History.Sessions {
		assert.Equal(t, 10*clock.Second, s.Timeout, "session %#x of %s", s.Session, s.Client)
	}
}
