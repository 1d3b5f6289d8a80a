package conform

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
)

// Normalize returns a copy of a sequence's results in comparable form:
// every zxid (czxid, mzxid, pzxid, in stats of results and of multi
// results) is replaced by its rank among all distinct zxids of the
// sequence, and ctime and mtime are set to 0. Absolute zxids depend on how
// many transactions a server ran before (session creations, other
// sequences); their order does not.
func Normalize(results []Result) []Result {
	var zxids []int64
	forEachStat(results, func(s *Stat) { zxids = append(zxids, s.Czxid, s.Mzxid, s.Pzxid) })
	slices.Sort(zxids)
	zxids = slices.Compact(zxids)
	rank := make(map[int64]int64, len(zxids))
	for i, zxid := range zxids {
		rank[zxid] = int64(i)
	}
	normalized := make([]Result, len(results))
	for i, r := range results {
		normalized[i] = r.clone()
	}
	forEachStat(normalized, func(s *Stat) {
		s.Czxid, s.Mzxid, s.Pzxid = rank[s.Czxid], rank[s.Mzxid], rank[s.Pzxid]
		s.Ctime, s.Mtime = 0, 0
	})
	return normalized
}

// forEachStat visits every stat of the results, multi results included.
func forEachStat(results []Result, visit func(*Stat)) {
	for i := range results {
		if results[i].Stat != nil {
			visit(results[i].Stat)
		}
		for j := range results[i].Results {
			if results[i].Results[j].Stat != nil {
				visit(results[i].Results[j].Stat)
			}
		}
	}
}

// clone copies a result deeply enough that Normalize can change stats.
func (r Result) clone() Result {
	c := r
	if r.Stat != nil {
		stat := *r.Stat
		c.Stat = &stat
	}
	if r.Results != nil {
		c.Results = make([]MultiResult, len(r.Results))
		for i, m := range r.Results {
			c.Results[i] = m
			if m.Stat != nil {
				stat := *m.Stat
				c.Results[i].Stat = &stat
			}
		}
	}
	return c
}

// Diff is one difference between two normalized result sequences.
type Diff struct {
	// I is the op index; Op and Session are from the wanted result (or the
	// got one when only it exists).
	I       int
	Op      OpKind
	Session string
	// Field names what differs, e.g. "err", "stat.version",
	// "results[1].err", "events.s2" or "result" for a missing line.
	Field string
	// Want and Got are the JSON renderings of the two values; "<absent>"
	// when a side has none.
	Want, Got string
}

func (d Diff) String() string {
	return fmt.Sprintf("op %d (%s %s) %s: want %s, got %s", d.I, d.Session, d.Op, d.Field, d.Want, d.Got)
}

// absent is the rendering of a missing value in a Diff.
const absent = "<absent>"

// Compare normalizes both sequences and reports every field that differs,
// op by op. Times are ignored and zxids compared by rank (see Normalize);
// everything else must be equal. An empty result means the sequences agree.
func Compare(want, got []Result) []Diff {
	want, got = Normalize(want), Normalize(got)
	var diffs []Diff
	for i := 0; i < max(len(want), len(got)); i++ {
		if i >= len(got) {
			diffs = append(diffs, Diff{I: i, Op: want[i].Op, Session: want[i].Session, Field: "result", Want: render(want[i]), Got: absent})
			continue
		}
		if i >= len(want) {
			diffs = append(diffs, Diff{I: i, Op: got[i].Op, Session: got[i].Session, Field: "result", Want: absent, Got: render(got[i])})
			continue
		}
		diffs = append(diffs, compareFields(i, want[i], got[i])...)
	}
	return diffs
}

// compareFields compares two results field by field, in the order of
// flatten, then reports fields only got has.
func compareFields(i int, want, got Result) []Diff {
	wantFields, gotFields := flatten(want), flatten(got)
	gotValues := make(map[string]string, len(gotFields))
	for _, f := range gotFields {
		gotValues[f.name] = f.value
	}
	seen := make(map[string]bool, len(wantFields))
	var diffs []Diff
	for _, f := range wantFields {
		seen[f.name] = true
		value, ok := gotValues[f.name]
		if !ok {
			value = absent
		}
		if value != f.value {
			diffs = append(diffs, Diff{I: i, Op: want.Op, Session: want.Session, Field: f.name, Want: f.value, Got: value})
		}
	}
	for _, f := range gotFields {
		if !seen[f.name] {
			diffs = append(diffs, Diff{I: i, Op: want.Op, Session: want.Session, Field: f.name, Want: absent, Got: f.value})
		}
	}
	return diffs
}

type field struct{ name, value string }

// flatten lists a result's present fields with their JSON renderings in a
// fixed order: scalars, stat fields one by one, lists whole, multi results
// field by field, events per session.
func flatten(r Result) []field {
	fields := []field{
		{"i", render(r.I)}, {"session", render(r.Session)}, {"op", render(r.Op)}, {"err", render(r.Err)},
	}
	add := func(name string, value any) { fields = append(fields, field{name, render(value)}) }
	if r.Path != "" {
		add("path", r.Path)
	}
	if r.Data != nil {
		add("data", *r.Data)
	}
	if r.DataSHA256 != "" {
		add("data_sha256", r.DataSHA256)
	}
	fields = append(fields, flattenStat("stat", r.Stat)...)
	if r.Children != nil {
		add("children", r.Children)
	}
	if r.ACL != nil {
		add("acl", r.ACL)
	}
	if r.Results != nil {
		add("results.length", len(r.Results))
		for j, m := range r.Results {
			prefix := fmt.Sprintf("results[%d].", j)
			add(prefix+"op", m.Op)
			add(prefix+"err", m.Err)
			if m.Path != "" {
				add(prefix+"path", m.Path)
			}
			fields = append(fields, flattenStat(prefix+"stat", m.Stat)...)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(r.Events)) {
		if len(r.Events[name]) > 0 {
			add("events."+name, r.Events[name])
		}
	}
	return fields
}

// flattenStat lists a stat's fields; nothing when the stat is absent.
func flattenStat(prefix string, s *Stat) []field {
	if s == nil {
		return nil
	}
	return []field{
		{prefix + ".czxid", render(s.Czxid)}, {prefix + ".mzxid", render(s.Mzxid)}, {prefix + ".pzxid", render(s.Pzxid)},
		{prefix + ".ctime", render(s.Ctime)}, {prefix + ".mtime", render(s.Mtime)},
		{prefix + ".version", render(s.Version)}, {prefix + ".cversion", render(s.Cversion)},
		{prefix + ".aversion", render(s.Aversion)}, {prefix + ".ephemeralOwner", render(s.EphemeralOwner)},
		{prefix + ".dataLength", render(s.DataLength)}, {prefix + ".numChildren", render(s.NumChildren)},
	}
}

// render is the JSON rendering of a value; values here always encode.
func render(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("<unencodable: %v>", err)
	}
	return string(b)
}

// WriteReport prints diffs readably, one per line, grouped by op, with a
// summary line. maxDiffs > 0 bounds how many are printed.
func WriteReport(w io.Writer, diffs []Diff, maxDiffs int) error {
	var b strings.Builder
	if len(diffs) == 0 {
		b.WriteString("no differences\n")
	}
	lastOp := -1
	for n, d := range diffs {
		if maxDiffs > 0 && n == maxDiffs {
			fmt.Fprintf(&b, "... and %d more differences\n", len(diffs)-n)
			break
		}
		if d.I != lastOp {
			fmt.Fprintf(&b, "op %d: %s %s\n", d.I, d.Session, d.Op)
			lastOp = d.I
		}
		fmt.Fprintf(&b, "    %s:\n        want %s\n        got  %s\n", d.Field, d.Want, d.Got)
	}
	if len(diffs) > 0 {
		fmt.Fprintf(&b, "%d differences\n", len(diffs))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// Report is WriteReport into a string, at most 50 differences.
func Report(diffs []Diff) string {
	var b strings.Builder
	_ = WriteReport(&b, diffs, 50) // A strings.Builder never fails.
	return b.String()
}
