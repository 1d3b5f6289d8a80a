package modelcheck

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// A counterexample file is plain text, one statement a line ('#' starts a comment):
//
//	model fle
//	servers 3
//	crashes 1
//	...
//	step deliver zk1->zk2    # LOOKING leader=1 zxid=0x0 round=0x1 peerEpoch=0x0
//	step timer zk2           # finalize wait
//	violation ElectionLiveness
//
// The settings rebuild the model, each step is one action (which message was delivered, which
// timer fired, which fault acted), and the last line names the invariant the path breaks.
// 'simrun replay --counterexample FILE' runs it.

// Counterexample is a violating path with the model that produced it.
type Counterexample struct {
	Model     Model
	Path      []Action
	Violation *Violation
}

// Settings is what a model writes at the head of a counterexample to be rebuilt from it.
type Settings interface {
	Settings() [][2]string
}

// Write renders the counterexample: settings, one step per line with what it did, the
// violation. It re-executes the path to describe each step in the state it was taken in.
func (c *Counterexample) Write(w io.Writer) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "# zabsim model-check counterexample: %d steps; run it with 'simrun replay --counterexample FILE'\n", len(c.Path))
	fmt.Fprintf(bw, "model %s\n", c.Model.Name())
	if s, ok := c.Model.(Settings); ok {
		for _, kv := range s.Settings() {
			fmt.Fprintf(bw, "%s %s\n", kv[0], kv[1])
		}
	}
	st, err := c.Model.Init()
	if err != nil {
		return err
	}
	for _, a := range c.Path {
		line, detail := c.Model.Describe(st, a)
		if detail != "" {
			fmt.Fprintf(bw, "step %-28s # %s\n", line, detail)
		} else {
			fmt.Fprintf(bw, "step %s\n", line)
		}
		if st, err = st.Step(a); err != nil {
			return err
		}
	}
	if c.Violation != nil {
		fmt.Fprintf(bw, "# %s\n", strings.ReplaceAll(c.Violation.Explanation, "\n", " "))
		fmt.Fprintf(bw, "violation %s\n", c.Violation.Invariant)
	}
	return bw.Flush()
}

// ModelFactory rebuilds a model from a counterexample's settings.
type ModelFactory func(settings map[string]string) (Model, error)

var factories = map[string]ModelFactory{
	"fle": fleFromSettings,
}

// RegisterModel makes a model readable from counterexample files; packages that define models
// outside this one (the ZAB model) call it from their init.
func RegisterModel(name string, f ModelFactory) { factories[name] = f }

// ReadCounterexample parses a counterexample file. The violation it returns is only the invariant
// the file names; Replay finds the full one.
func ReadCounterexample(r io.Reader) (*Counterexample, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	settings := map[string]string{}
	var model Model
	var path []Action
	c := &Counterexample{}
	for lineNo := 1; sc.Scan(); lineNo++ {
		line := sc.Text()
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		key, value, _ := strings.Cut(line, " ")
		value = strings.TrimSpace(value)
		switch {
		case key == "step":
			if model == nil {
				m, err := buildModel(settings)
				if err != nil {
					return nil, fmt.Errorf("line %d: %w", lineNo, err)
				}
				model = m
			}
			a, err := model.ParseAction(value)
			if err != nil {
				return nil, fmt.Errorf("line %d: %w", lineNo, err)
			}
			path = append(path, a)
		case key == "violation":
			c.Violation = &Violation{Invariant: value}
		case model != nil:
			return nil, fmt.Errorf("line %d: setting %q after the first step", lineNo, key)
		default:
			if _, dup := settings[key]; dup {
				return nil, fmt.Errorf("line %d: %q set twice", lineNo, key)
			}
			settings[key] = value
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if model == nil {
		m, err := buildModel(settings)
		if err != nil {
			return nil, err
		}
		model = m
	}
	c.Model, c.Path = model, path
	return c, nil
}

func buildModel(settings map[string]string) (Model, error) {
	name, ok := settings["model"]
	if !ok {
		return nil, errors.New("no 'model' line before the first step")
	}
	f, ok := factories[name]
	if !ok {
		return nil, fmt.Errorf("unknown model %q", name)
	}
	delete(settings, "model")
	return f(settings)
}

// PathReplayer is implemented by models that replay a path themselves, with a trace of their own
// (the ZAB model renders the simulator's trace of the whole path).
type PathReplayer interface {
	ReplayPath(path []Action, w io.Writer) (*Violation, error)
}

// Replay runs path from the initial state, printing one line per step and the state after it
// when w is not nil, and judges every state as the search did. It returns the first violation,
// or nil, and fails when a step is not enabled where the path takes it.
func Replay(m Model, path []Action, w io.Writer) (*Violation, error) {
	if r, ok := m.(PathReplayer); ok {
		if w == nil {
			w = io.Discard
		}
		return r.ReplayPath(path, w)
	}
	st, err := m.Init()
	if err != nil {
		return nil, err
	}
	say := func(format string, args ...any) {
		if w != nil {
			fmt.Fprintf(w, format, args...)
		}
	}
	say("state 0: %s\n", summarize(st))
	for i, a := range path {
		if v := st.Check(); v != nil {
			return v, nil
		}
		actions, _ := st.Actions(nil)
		enabled := false
		for _, b := range actions {
			enabled = enabled || b == a
		}
		line, detail := m.Describe(st, a)
		if !enabled {
			return nil, fmt.Errorf("step %d (%s) is not enabled: the path does not fit this model or build", i+1, line)
		}
		if st, err = st.Step(a); err != nil {
			return nil, fmt.Errorf("step %d (%s): %w", i+1, line, err)
		}
		if detail != "" {
			line += " (" + detail + ")"
		}
		say("step %d: %s\n  -> %s\n", i+1, line, summarize(st))
	}
	if v := st.Check(); v != nil {
		return v, nil
	}
	actions, cut := st.Actions(nil)
	if len(actions) == 0 {
		say("no action is enabled (a terminal state%s)\n", map[bool]string{true: ", cut by a bound", false: ""}[cut])
		return st.CheckTerminal(cut), nil
	}
	return nil, nil
}

func summarize(st State) string {
	if s, ok := st.(interface{ Summary() string }); ok {
		return s.Summary()
	}
	return fmt.Sprintf("%x", st.Fingerprint())
}

// Settings implements Settings.
func (m *FLEModel) Settings() [][2]string {
	c := m.cfg
	out := [][2]string{
		{"servers", strconv.Itoa(c.Servers)}, {"observers", strconv.Itoa(c.Observers)},
		{"crashes", strconv.Itoa(c.Crashes)}, {"restarts", strconv.Itoa(c.Restarts)},
		{"timeouts", strconv.Itoa(c.Timeouts)}, {"abandons", strconv.Itoa(c.Abandons)},
	}
	if len(c.LastZxids) > 0 {
		out = append(out, [2]string{"zxids", joinInts(c.LastZxids)})
	}
	if len(c.CurrentEpochs) > 0 {
		out = append(out, [2]string{"epochs", joinInts(c.CurrentEpochs)})
	}
	if c.NeverAbandon {
		out = append(out, [2]string{"selftest", "never-abandon"})
	}
	return out
}

func joinInts(v []int64) string {
	parts := make([]string, len(v))
	for i, x := range v {
		parts[i] = "0x" + strconv.FormatInt(x, 16)
	}
	return strings.Join(parts, ",")
}

// ParseInts reads a comma-separated list of integers (decimal or 0x hexadecimal).
func ParseInts(s string) ([]int64, error) {
	var out []int64
	for _, part := range strings.Split(s, ",") {
		v, err := strconv.ParseInt(strings.TrimSpace(part), 0, 64)
		if err != nil {
			return nil, fmt.Errorf("%q: %w", part, err)
		}
		out = append(out, v)
	}
	return out, nil
}

func fleFromSettings(settings map[string]string) (Model, error) {
	var cfg FLEConfig
	ints := map[string]*int{
		"servers": &cfg.Servers, "observers": &cfg.Observers, "crashes": &cfg.Crashes,
		"restarts": &cfg.Restarts, "timeouts": &cfg.Timeouts, "abandons": &cfg.Abandons,
	}
	// Keys are taken in sorted order, so that of several bad settings the same one is reported.
	for _, key := range slices.Sorted(maps.Keys(settings)) {
		value := settings[key]
		if p, ok := ints[key]; ok {
			v, err := strconv.Atoi(value)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", key, err)
			}
			*p = v
			continue
		}
		var err error
		switch key {
		case "zxids":
			cfg.LastZxids, err = ParseInts(value)
		case "epochs":
			cfg.CurrentEpochs, err = ParseInts(value)
		case "selftest":
			if value != "never-abandon" {
				err = fmt.Errorf("unknown self-test %q (known: never-abandon)", value)
			}
			cfg.NeverAbandon = true
		default:
			return nil, fmt.Errorf("unknown setting %q for model fle", key)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", key, err)
		}
	}
	return NewFLE(cfg)
}
