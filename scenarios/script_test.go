package scenarios

import (
	"os"
	"path/filepath"
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
		assert.Equal(t, first, second, file)
	}
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
		{"clients 3\n", "line 1", `sets no "servers"`},
		{"servers 3\nreplicas 3\n", "line 2", `unknown statement "replicas"`},
		{"servers 3\nat 1s expire zk1\n", "line 2", `expire takes a client (c1, c2, ...) or all, not "zk1"`},
		{"servers 3\nat 1s expire c0\n", "line 2", `expire takes a client`},
		{"servers 3\nat 1s expire leader\n", "line 2", `expire takes a client`},
		{"servers 3\nat 1s expire\n", "line 2", "expire takes 1 argument(s), not 0"},
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
