package main

import (
	"fmt"
	"io"
	"time"

	"github.com/schollz/progressbar/v3"
)

// plainProgressInterval is how often a sweep whose stderr is not a terminal (a CI log) prints a
// progress line: often enough to show it is alive, seldom enough to keep the log short. A
// variable only so that a test can shorten it.
var plainProgressInterval = 10 * time.Second

// progressMeter shows a sweep's progress on stderr: a bar with rate and ETA on a terminal
// (schollz/progressbar), a plain line every plainProgressInterval otherwise, or nothing.
type progressMeter struct {
	bar       *progressbar.ProgressBar
	plain     io.Writer
	began     time.Time
	lastPlain time.Time
	expected  int64
}

// newProgressMeter picks the meter: none when quiet, a bar on a terminal, lines otherwise.
func newProgressMeter(stderr io.Writer, terminal, quiet bool, expected int64) *progressMeter {
	m := &progressMeter{began: time.Now(), expected: expected}
	m.lastPlain = m.began
	switch {
	case quiet:
	case terminal:
		m.bar = progressbar.NewOptions64(expected,
			progressbar.OptionSetWriter(stderr),
			progressbar.OptionSetDescription("seeds"),
			progressbar.OptionShowCount(),
			progressbar.OptionShowIts(),
			progressbar.OptionSetItsString("seeds"),
			progressbar.OptionSetPredictTime(true),
			progressbar.OptionThrottle(progressInterval),
			progressbar.OptionSetWidth(30),
			progressbar.OptionClearOnFinish(),
		)
	default:
		m.plain = stderr
	}
	return m
}

// update records one more seed run; failed is the count so far.
func (m *progressMeter) update(run, failed int64) {
	switch {
	case m.bar != nil:
		if failed > 0 {
			m.bar.Describe(fmt.Sprintf("seeds, %d failed", failed))
		}
		_ = m.bar.Add(1)
	case m.plain != nil && time.Since(m.lastPlain) >= plainProgressInterval:
		m.lastPlain = time.Now()
		elapsed := time.Since(m.began)
		rate := ratio(float64(run), elapsed.Seconds())
		left := "unknown"
		if rate > 0 {
			left = (time.Duration(float64(m.expected-run)/rate) * time.Second).Round(time.Second).String()
		}
		fmt.Fprintf(m.plain, "progress: %d/%d seeds, %d failed, %.1f seeds/s, elapsed %s, about %s left\n",
			run, m.expected, failed, rate, elapsed.Round(time.Second), left)
	}
}

// clear removes the bar before other output is printed; the next update draws it again.
func (m *progressMeter) clear() {
	if m.bar != nil {
		_ = m.bar.Clear()
	}
}

// finish removes the bar for good.
func (m *progressMeter) finish() {
	if m.bar != nil {
		_ = m.bar.Exit()
		_ = m.bar.Clear()
	}
}
