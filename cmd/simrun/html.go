package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/zabsim/zabsim/internal/report"
	"github.com/zabsim/zabsim/scenarios"
)

// htmlReport is replay --html: the HTML report of the replayed run, and porcupine's
// visualizations beside it, named after it (seed-17.html, seed-17-porcupine-register-root.html).
type htmlReport struct {
	path           string
	recorder       *report.Recorder
	visualizations *visualizationSet
}

// newHTMLReport checks that path can be written, by creating it, before any run.
func newHTMLReport(path string) (*htmlReport, error) {
	if err := checkOutputFile(path); err != nil {
		return nil, fmt.Errorf("--html: %w", err)
	}
	return &htmlReport{path: path, recorder: report.NewRecorder(), visualizations: &visualizationSet{}}, nil
}

// checkOutputFile makes sure a file can be written at path before any work: its directory
// exists and the file can be opened for writing. A file that did not exist is removed again.
func checkOutputFile(path string) error {
	info, err := os.Stat(path)
	switch {
	case err == nil && info.IsDir():
		return fmt.Errorf("%s is a directory", path)
	case err == nil:
		file, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return err
		}
		return file.Close()
	}
	file, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	return errors.Join(file.Close(), os.Remove(path))
}

func (h *htmlReport) attach(opts *scenarios.Options) {
	opts.Visualization = h.visualizations.writer
	h.recorder.Attach(opts)
}

func (h *htmlReport) write(env *environment, run *scenarios.Report, replay string) error {
	dir := filepath.Dir(h.path)
	prefix := strings.TrimSuffix(filepath.Base(h.path), filepath.Ext(h.path)) + "-"
	var names []string
	for _, f := range h.visualizations.files {
		name := prefix + f.name
		if err := os.WriteFile(filepath.Join(dir, name), f.html.Bytes(), 0o644); err != nil {
			return fmt.Errorf("writing a porcupine visualization: %w", err)
		}
		names = append(names, name)
	}
	var page bytes.Buffer
	meta := report.Meta{Replay: replay, Build: buildDescription(), CommandLine: env.commandLine(), Visualizations: names}
	if err := report.Write(&page, h.recorder, run, meta); err != nil {
		return err
	}
	return os.WriteFile(h.path, page.Bytes(), 0o644)
}
