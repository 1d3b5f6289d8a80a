package report_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zabsim/zabsim/internal/report"
)

// TestIndexShowsEveryClassAndItsFirstSeed: a class with many seeds is cut to MaxPerClass, with a
// count of the rest, and a class whose only seed comes last still gets its section and its link.
func TestIndexShowsEveryClassAndItsFirstSeed(t *testing.T) {
	var entries []report.IndexEntry
	for seed := uint64(100); seed >= 1; seed-- {
		entries = append(entries, report.IndexEntry{Seed: seed, Class: "zab:ProcessConsistency", Replay: "simrun replay"})
	}
	entries = append(entries, report.IndexEntry{Seed: 500, Class: "lock/herd", Headline: "the herd", Report: "seed-500/report.html"})
	var page bytes.Buffer
	require.NoError(t, report.WriteIndex(&page, report.IndexMeta{Title: "t", MaxPerClass: 10}, entries))
	html := page.String()
	assert.Contains(t, html, "101 failing seeds in 2 classes")
	assert.Contains(t, html, `<h2>lock/herd (1 seeds)</h2>`)
	assert.Contains(t, html, `seed 500: <a href="seed-500/report.html">report</a>`)
	assert.Contains(t, html, "the herd")
	consistency := html[strings.Index(html, `<h2>zab:ProcessConsistency`):]
	assert.Contains(t, consistency, `<li class="first">seed 1 `, "the class's first seed heads its list")
	assert.Contains(t, consistency, "... and 90 more seeds of this class")
	assert.NotContains(t, consistency, "seed 11 ", "past MaxPerClass")
	assert.Less(t, strings.Index(html, `id="class-lock/herd"`), strings.Index(html, `id="class-zab:ProcessConsistency"`), "classes in name order")
}
