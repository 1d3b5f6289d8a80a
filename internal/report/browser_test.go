package report_test

import (
	"bytes"
	"context"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zabsim/zabsim/scenarios"
)

// chromium finds a Chromium or Chrome binary. Without one the browser test skips with a line
// saying so, unless ZABSIM_REQUIRE_CHROMIUM=1 (CI sets it after installing Debian's chromium).
func chromium(t *testing.T) string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if path, err := exec.LookPath(name); err == nil {
			return path
		}
	}
	if os.Getenv("ZABSIM_REQUIRE_CHROMIUM") == "1" {
		t.Fatal("ZABSIM_REQUIRE_CHROMIUM=1 but no chromium binary is on PATH (apt-get install chromium)")
	}
	t.Skip("SKIPPED: no chromium on PATH, so the HTML reports are not checked in a browser (apt-get install chromium; " +
		"ZABSIM_REQUIRE_CHROMIUM=1 makes this a failure)")
	return ""
}

// browse runs headless Chromium on a file with the given extra flags and returns its stdout and
// stderr. Every flag that would reach the network or a user profile is off.
func browse(t *testing.T, binary, page string, extra ...string) (string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	args := append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir=" + t.TempDir(), "--enable-logging=stderr", "--v=0"}, extra...)
	args = append(args, "file://"+page)
	cmd := exec.CommandContext(ctx, binary, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), "chromium: %s", lastLines(stderr.String(), 10))
	return stdout.String(), stderr.String()
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// consoleErrors are the script errors Chromium logs with --enable-logging=stderr.
var consoleErrors = regexp.MustCompile(`(?m)^.*(Uncaught|CONSOLE\(\d+\)\] "?(Error|TypeError|ReferenceError|SyntaxError)).*$`)

// TestReportsRenderInChromium opens the reports of a ZAB invariant failure, a lock failure and a
// linearizability failure in headless Chromium: the page's script must run to its end with no
// error, the DOM must hold the server and client lanes, the messages and the highlighted
// violation, and a screenshot must be a picture, not a blank page.
func TestReportsRenderInChromium(t *testing.T) {
	binary := chromium(t)
	dir := t.TempDir()
	linearizability := sweepOptions(2)
	linearizability.Workload = "registers"
	cases := []struct {
		name    string
		opts    scenarios.Options
		fail    func(*scenarios.Report)
		servers int
	}{
		{"zab-invariant", zabFailure(t), nil, 6},
		{"lock", lockFailure(t), nil, 7}, // five voters and two observers
		{"linearizability", linearizability, failRegister, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			page, _ := render(t, c.opts, c.fail)
			path := filepath.Join(dir, c.name+".html")
			require.NoError(t, os.WriteFile(path, []byte(page), 0o644))

			dom, logs := browse(t, binary, path, "--dump-dom")
			assert.Contains(t, dom, `data-report-ready="1"`, "the page's script ran to its end")
			assert.Empty(t, consoleErrors.FindAllString(logs, 5), "no script error")
			if c.servers > 0 {
				assert.Equal(t, c.servers, strings.Count(dom, `class="lane server-lane"`), "a timeline lane per server")
			} else {
				assert.Greater(t, strings.Count(dom, `class="lane server-lane"`), 0, "timeline lanes")
			}
			assert.Equal(t, 5, strings.Count(dom, `class="lane client-lane"`), "a timeline lane per client")
			assert.Greater(t, strings.Count(dom, `<g class="msg`), 10, "the script drew the messages")
			assert.Contains(t, dom, `id="violation-mark"`, "the violation is marked on the timeline")
			assert.Contains(t, dom, `id="diagram-violation"`, "the diagram opens at the violation")
			switch c.name {
			case "zab-invariant":
				assert.Contains(t, dom, `<g class="msg cited"`, "the messages the failure cites are highlighted")
			case "lock":
				assert.Contains(t, dom, `class="cited cited-time"`, "the moments the lock finding cites are marked")
			}

			shot := filepath.Join(dir, c.name+".png")
			browse(t, binary, path, "--screenshot="+shot, "--window-size=1400,1400", "--hide-scrollbars")
			file, err := os.Open(shot)
			require.NoError(t, err)
			defer file.Close()
			picture, err := png.Decode(file)
			require.NoError(t, err)
			mean, variance, red := pixelStatistics(picture)
			assert.Greater(t, variance, 300.0, "a screenshot with content, not a blank page (mean luminance %.0f)", mean)
			assert.Greater(t, red, 50, "the red of the violation is on screen")
			if dir := os.Getenv("ZABSIM_REPORT_SCREENSHOTS"); dir != "" {
				// For a person to look at: where to keep the screenshots.
				data, err := os.ReadFile(shot)
				require.NoError(t, err)
				require.NoError(t, os.WriteFile(filepath.Join(dir, c.name+".png"), data, 0o644))
			}
		})
	}
}

// pixelStatistics returns the mean and variance of a picture's luminance, and how many pixels are
// the report's violation red (a strong red with little green and blue).
func pixelStatistics(picture image.Image) (float64, float64, int) {
	bounds := picture.Bounds()
	var sum, sumSquares float64
	red, n := 0, 0
	for y := bounds.Min.Y; y < bounds.Max.Y; y++ {
		for x := bounds.Min.X; x < bounds.Max.X; x++ {
			r, g, b, _ := picture.At(x, y).RGBA()
			r8, g8, b8 := float64(r>>8), float64(g>>8), float64(b>>8)
			lum := 0.299*r8 + 0.587*g8 + 0.114*b8
			sum += lum
			sumSquares += lum * lum
			n++
			if r8 > 180 && g8 < 80 && b8 < 80 {
				red++
			}
		}
	}
	mean := sum / float64(n)
	return mean, sumSquares/float64(n) - mean*mean, red
}
