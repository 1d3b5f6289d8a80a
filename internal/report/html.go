package report

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"html"
	"html/template"
	"io"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/zabsim/zabsim/checkers"
	"github.com/zabsim/zabsim/clock"
	"github.com/zabsim/zabsim/scenarios"
	"github.com/zabsim/zabsim/zabmodel"
)

// Meta is what the report says about where the run came from, beyond the run itself.
type Meta struct {
	// Replay is the exact command that replays the run.
	Replay string
	// Build names the binary that made the report (module version and VCS revision).
	Build string
	// CommandLine is the full command line that made the report.
	CommandLine string
	// Visualizations are the file names of porcupine's visualizations beside the report, one per
	// linearizability check, in the order the checks ran.
	Visualizations []string
	// Trace is the file name of the text trace beside the report, or "".
	Trace string
}

//go:embed report.js
var reportScript string

//go:embed report.css
var reportStyle string

// Write renders the report of one run: rep is its verdict, rec what it recorded.
func Write(w io.Writer, rec *Recorder, rep *scenarios.Report, meta Meta) error {
	if !rec.started {
		return fmt.Errorf("report: the recorder saw no run (was it attached to the run's options?)")
	}
	page := buildPage(rec, rep, meta)
	if err := pageTemplate.Execute(w, page); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	return nil
}

// page is the template's data.
type page struct {
	Title          string
	Seed           uint64
	Verdict        string
	Class          string
	Meta           Meta
	Evidence       evidence
	EvidenceTime   string
	EvidenceTitle  string
	EvidenceFields []field
	Explanation    string
	Timeline       template.HTML
	Legend         template.HTML
	ScriptHeader   string
	Actions        []actionRow
	Checks         []checkRow
	ChecksRan      bool
	Porcupine      []porcupineRow
	Data           template.JS
	Script         template.JS
	Style          template.CSS
	Stats          string
	Dropped        int
}

type field struct{ Name, Value string }

type actionRow struct {
	Index  int
	Line   int
	Text   string
	Acted  bool
	At     string
	AtNano int64
	Idle   string
}

type checkRow struct {
	Checker, Status, Summary string
	Failed                   bool
}

type porcupineRow struct {
	Checker, Status, File string
}

func buildPage(rec *Recorder, rep *scenarios.Report, meta Meta) page {
	end := max(rep.Stats.VirtualTime, rep.Outcome.Time, clock.Time(1))
	ev := findEvidence(rep)
	p := page{
		Seed: rep.Seed, Meta: meta, Evidence: ev, Explanation: rep.Explain(),
		Style: template.CSS(reportStyle), Script: template.JS(reportScript), Dropped: rec.dropped,
		Stats: fmt.Sprintf("virtual time %s, %d events, %d operations completed, %d txns committed, %d leaders established, %d faults injected",
			seconds(rep.Stats.VirtualTime), rep.Stats.Events, rep.Stats.OpsCompleted, rep.Stats.Committed, rep.Stats.Leaders, rep.Stats.FaultsInjected),
	}
	p.Class = rep.Failure()
	p.EvidenceTitle = ev.title
	p.Verdict = "PASS"
	if p.Class != "" {
		p.Verdict = "FAIL"
	}
	p.Title = fmt.Sprintf("zabsim seed %d: %s %s", rep.Seed, p.Verdict, p.Class)
	if ev.hasTime {
		p.EvidenceTime = seconds(ev.at)
		p.EvidenceFields = append(p.EvidenceFields, field{"virtual time", seconds(ev.at)})
	}
	if len(rep.Zab) > 0 {
		v := rep.Zab[0]
		p.EvidenceFields = append(p.EvidenceFields, field{"servers", strings.Join(ev.servers, ", ")})
		if len(ev.zxids) > 0 {
			p.EvidenceFields = append(p.EvidenceFields, field{"zxids", strings.Join(ev.zxids, ", ")})
		}
		if v.Epoch != 0 {
			p.EvidenceFields = append(p.EvidenceFields, field{"epoch", fmt.Sprint(v.Epoch)})
		}
		p.EvidenceFields = append(p.EvidenceFields, field{"event", v.Event.String()})
	} else {
		if len(ev.clients) > 0 {
			p.EvidenceFields = append(p.EvidenceFields, field{"clients", strings.Join(ev.clients, ", ")})
		}
		if len(ev.ops) > 0 {
			var refs []string
			for _, op := range ev.ops {
				refs = append(refs, op.String())
			}
			p.EvidenceFields = append(p.EvidenceFields, field{"operations", strings.Join(refs, ", ")})
		}
		if len(ev.zxids) > 0 {
			p.EvidenceFields = append(p.EvidenceFields, field{"zxids", strings.Join(ev.zxids, ", ")})
		}
	}
	p.Timeline, p.Legend = timelineSVG(rec, rep, ev, end)
	if rec.shape.Script != nil {
		s := rec.shape.Script
		p.ScriptHeader = fmt.Sprintf("servers %d\nobservers %d\nclients %d\nworkload %s\nduration %s",
			s.Servers, s.Observers, s.Clients, s.Workload, time.Duration(s.Duration))
		acted := map[int]actedAction{}
		for _, a := range rec.actions {
			acted[a.index] = a
		}
		for i, a := range s.Actions {
			row := actionRow{Index: i, Line: a.Line, Text: a.String()}
			if got, ok := acted[i]; ok {
				row.Acted, row.At, row.AtNano, row.Idle = true, seconds(got.at), int64(got.at), got.idle
			}
			p.Actions = append(p.Actions, row)
		}
	}
	p.ChecksRan = len(rep.Checks.Results) > 0
	linearizability := 0
	for _, res := range rep.Checks.Results {
		p.Checks = append(p.Checks, checkRow{Checker: res.Checker, Status: res.Status.String(), Summary: res.Summary, Failed: res.Failed()})
		if strings.HasPrefix(res.Checker, "linearizability/") {
			row := porcupineRow{Checker: res.Checker, Status: res.Status.String()}
			if res.Status != checkers.Skipped && linearizability < len(meta.Visualizations) {
				row.File = meta.Visualizations[linearizability]
				linearizability++
			}
			p.Porcupine = append(p.Porcupine, row)
		}
	}
	p.Data = messageData(rec, ev, end)
	return p
}

// seconds renders a virtual time with its unit.
func seconds(t clock.Time) string {
	return fmt.Sprintf("%.6f s", float64(t)/float64(clock.Second))
}

// messageData is the JSON the space-time diagram is drawn from: the lanes, the messages, the
// violation's time and the leader changes. json.Marshal escapes <, > and &, so it is safe inside
// a script element.
func messageData(rec *Recorder, ev evidence, end clock.Time) template.JS {
	lanes := append(slices.Clone(rec.shape.Servers), rec.shape.Clients...)
	index := map[string]int{}
	for i, name := range lanes {
		index[name] = i
	}
	type data struct {
		Lanes     []string `json:"lanes"`
		Messages  [][]any  `json:"messages"`
		End       int64    `json:"end"`
		Violation int64    `json:"violation"`
		Leaders   [][]any  `json:"leaders"`
		Cited     int      `json:"cited"`
	}
	d := data{Lanes: lanes, End: int64(end), Violation: -1, Messages: [][]any{}, Leaders: [][]any{}}
	if ev.hasTime {
		d.Violation = int64(ev.at)
	}
	// The message that triggered the violation is the last one delivered to the server whose
	// event revealed it, at or before that moment.
	trigger := -1
	if ev.hasTime && len(ev.servers) > 0 {
		for i, m := range rec.messages {
			if m.To == ev.servers[0] && m.Delivered <= ev.at {
				trigger = i
			}
		}
	}
	for i, m := range rec.messages {
		from, ok1 := index[m.From]
		to, ok2 := index[m.To]
		if !ok1 || !ok2 {
			continue
		}
		cited := 0
		if i == trigger || ev.cites(m) {
			cited = 1
			d.Cited++
		}
		d.Messages = append(d.Messages, []any{from, to, int64(m.Sent), int64(m.Delivered), shortLabel(m.Label), cited})
	}
	for _, e := range rec.protocol {
		if e.Kind == zabmodel.EventEstablished {
			d.Leaders = append(d.Leaders, []any{int64(e.Time), fmt.Sprintf("zk%d leads epoch %d", e.Server, e.Epoch)})
		}
	}
	b, err := json.Marshal(d)
	if err != nil {
		panic(fmt.Sprintf("report: encoding the message data: %v", err)) // Only plain values are encoded.
	}
	return template.JS(b)
}

// shortLabel turns a describer's label into the diagram's: "PROPOSAL zxid=0x2:0x5 create2"
// becomes "PROPOSAL 0x2:0x5 create2".
func shortLabel(label string) string {
	return strings.ReplaceAll(label, "zxid=", "")
}

// Timeline geometry, in SVG user units (pixels at 100% zoom).
const (
	labelWidth   = 110
	serverHeight = 34
	clientHeight = 18
	laneGap      = 4
	axisHeight   = 24
)

var roleColors = map[zabmodel.Role]string{
	zabmodel.Looking: "#d9d9d9", zabmodel.Following: "#9ecae1", zabmodel.Leading: "#fdae6b", zabmodel.Observing: "#a1d99b",
}

// timelineSVG draws the timeline: a lane per server (role, epoch, last zxid, up or crashed,
// pauses), the cluster's partitions and clogs as shaded bands, leader changes, and a lane per
// client with its operations; the violation is a red line. It is drawn in Go as inline SVG so that
// it needs no script to be seen.
func timelineSVG(rec *Recorder, rep *scenarios.Report, ev evidence, end clock.Time) (template.HTML, template.HTML) {
	width := math.Max(1400, math.Min(24000, 40*float64(end)/float64(clock.Second)))
	x := func(t clock.Time) float64 { return labelWidth + width*float64(t)/float64(end) }
	servers := rec.serverLanes(end)
	clients := rec.shape.Clients
	top := float64(axisHeight)
	laneY := map[string]float64{}
	laneH := map[string]float64{}
	y := top
	for _, s := range servers {
		laneY[s.name], laneH[s.name] = y, serverHeight
		y += serverHeight + laneGap
	}
	serversBottom := y
	y += 8
	for _, c := range clients {
		laneY[c], laneH[c] = y, clientHeight
		y += clientHeight + laneGap
	}
	height := y + 6
	var b strings.Builder
	fmt.Fprintf(&b, `<svg id="timeline" class="timeline" xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f">`,
		labelWidth+width+20, height, labelWidth+width+20, height)
	b.WriteString(`<defs><pattern id="hatch" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="3" height="6" fill="#555" fill-opacity="0.45"/></pattern>` +
		`<pattern id="unknown" width="5" height="5" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="5" height="5" fill="#c39bd3"/><rect width="2" height="5" fill="#6c3483"/></pattern>` +
		`<pattern id="stall" width="4" height="4" patternUnits="userSpaceOnUse"><rect width="2" height="4" fill="#263238" fill-opacity="0.5"/></pattern></defs>`)
	// The lanes' names are drawn last, over everything, so that they stay legible where the page's
	// script keeps them in view while the timeline scrolls.
	var labels []string
	// The time axis.
	step := tickStep(float64(end)/float64(clock.Second), width)
	for t := 0.0; t <= float64(end)/float64(clock.Second)+1e-9; t += step {
		px := x(clock.Time(t * float64(clock.Second)))
		fmt.Fprintf(&b, `<line class="tick" x1="%.1f" y1="%d" x2="%.1f" y2="%.0f"/><text class="axis" x="%.1f" y="14">%s</text>`,
			px, axisHeight-4, px, height, px+2, html.EscapeString(formatTick(t, step)))
	}
	// Server lanes.
	for _, s := range servers {
		ly := laneY[s.name]
		fmt.Fprintf(&b, `<g class="lane server-lane" data-lane="%s">`, s.name)
		labelClass := "lane-label"
		if slices.Contains(ev.servers, s.name) {
			labelClass += " cited-lane"
		}
		labels = append(labels, fmt.Sprintf(`<text class="%s" x="4" y="%.1f">%s</text>`, labelClass, ly+serverHeight/2+4, s.name))
		for _, seg := range s.segments {
			x1, x2 := x(seg.start), x(seg.end)
			fill := roleColors[seg.role]
			state := seg.role.String()
			if !seg.up {
				fill, state = "url(#hatch)", "CRASHED"
			} else if !seg.serving && seg.role != zabmodel.Looking {
				state += " (syncing)"
			}
			fmt.Fprintf(&b, `<rect class="segment" x="%.2f" y="%.1f" width="%.2f" height="%d" fill="%s"`, x1, ly, math.Max(x2-x1, 0.5), serverHeight, fill)
			if !seg.up {
				b.WriteString(` stroke="#333" stroke-width="0.5"`)
			} else if !seg.serving && seg.role != zabmodel.Looking {
				b.WriteString(` fill-opacity="0.55"`)
			}
			fmt.Fprintf(&b, `><title>%s %s epoch %d, %s to %s</title></rect>`, s.name, state, seg.epoch, seconds(seg.start), seconds(seg.end))
			if x2-x1 > 46 && seg.up {
				fmt.Fprintf(&b, `<text class="seg-label" x="%.1f" y="%.1f">%s e%d</text>`, x1+3, ly+12, roleShort(seg.role), seg.epoch)
			}
		}
		b.WriteString(zxidLine(s, x, ly, end))
		b.WriteString(`</g>`)
	}
	// Bands: partitions and swizzles across the server lanes, clogs, pauses, disk stalls and client
	// crashes on their node's lane.
	for _, bd := range rec.bands(end) {
		x1, x2 := x(bd.start), x(bd.end)
		by, bh := top, serversBottom-top-laneGap
		if bd.lane != "" {
			ly, ok := laneY[bd.lane]
			if !ok {
				continue
			}
			by, bh = ly, laneH[bd.lane]
		}
		fmt.Fprintf(&b, `<rect class="band band-%s" x="%.2f" y="%.1f" width="%.2f" height="%.1f"><title>%s, %s to %s</title></rect>`,
			bd.kind, x1, by, math.Max(x2-x1, 1), bh, html.EscapeString(bd.label), seconds(bd.start), seconds(bd.end))
	}
	// Script actions: a tick at the top linking to the script line.
	for _, a := range rec.sortedActions() {
		px := x(a.at)
		class := "action"
		if a.idle != "" {
			class += " idle"
		}
		fmt.Fprintf(&b, `<a href="#action-%d"><line id="tick-action-%d" class="%s" x1="%.2f" y1="%d" x2="%.2f" y2="%.1f"/><title>%s at %s%s</title></a>`,
			a.index, a.index, class, px, axisHeight-6, px, serversBottom, html.EscapeString(a.action.String()), seconds(a.at), idleNote(a.idle))
	}
	// Leader changes.
	for _, e := range rec.protocol {
		if e.Kind != zabmodel.EventEstablished {
			continue
		}
		px := x(e.Time)
		ly := laneY[fmt.Sprintf("zk%d", e.Server)]
		fmt.Fprintf(&b, `<g class="leader-change"><path d="M%.2f %.1f l5 -7 l-10 0 z"/><title>zk%d established as leader of epoch %d at %s</title></g>`,
			px, ly+serverHeight, e.Server, e.Epoch, seconds(e.Time))
	}
	// Client lanes and their operations.
	var history []checkers.ClientHistory
	if rep.History != nil {
		history = rep.History.Clients
	}
	for i, c := range clients {
		ly := laneY[c]
		labelClass := "lane-label"
		if slices.Contains(ev.clients, c) {
			labelClass += " cited-lane"
		}
		fmt.Fprintf(&b, `<g class="lane client-lane" data-lane="%s">`, c)
		labels = append(labels, fmt.Sprintf(`<text class="%s" x="4" y="%.1f">%s</text>`, labelClass, ly+clientHeight-5, c))
		fmt.Fprintf(&b, `<line class="client-base" x1="%d" y1="%.1f" x2="%.1f" y2="%.1f"/>`, labelWidth, ly+clientHeight/2, labelWidth+width, ly+clientHeight/2)
		if i < len(history) {
			for k, op := range history[i].Ops {
				b.WriteString(opRect(c, k, op, ev, x, ly, end))
			}
		}
		// The moments the finding cites (a lock holder's accesses, a node's deletion) on the lanes
		// of the clients it names.
		if slices.Contains(ev.clients, c) {
			for _, t := range ev.times {
				fmt.Fprintf(&b, `<path class="cited cited-time" d="M%.2f %.1f l5 6 l-5 6 l-5 -6 z"><title>cited by the failure: %s</title></path>`,
					x(t), ly+clientHeight/2-6, seconds(t))
			}
		}
		b.WriteString(`</g>`)
	}
	// The violation.
	if ev.hasTime {
		px := x(ev.at)
		fmt.Fprintf(&b, `<g id="violation-mark" class="violation cited"><line x1="%.2f" y1="%d" x2="%.2f" y2="%.1f"/><text x="%.2f" y="%d" text-anchor="end">%s</text><title>%s at %s</title></g>`,
			px, axisHeight-4, px, height, px-4, axisHeight-8, "✖ "+html.EscapeString(ev.title), html.EscapeString(ev.title), seconds(ev.at))
	}
	b.WriteString(`<g class="lane-labels">` + strings.Join(labels, "") + `</g></svg>`)
	legend := `<span class="key" style="background:#fdae6b"></span>leading <span class="key" style="background:#9ecae1"></span>following ` +
		`<span class="key" style="background:#a1d99b"></span>observing <span class="key" style="background:#d9d9d9"></span>looking ` +
		`(pale: syncing, not serving) <span class="key hatch"></span>crashed <span class="key band-partition"></span>partition ` +
		`<span class="key band-clog"></span>clog / swizzle <span class="key band-pause"></span>paused <span class="key band-stall"></span>disk stalled ▼ leader established ` +
		`| operations: <span class="key" style="background:#43a047"></span>ok <span class="key" style="background:#fbc02d"></span>error reply ` +
		`<span class="key" style="background:#bdbdbd"></span>not applied <span class="key unknown"></span>unknown outcome ` +
		`<span class="key" style="background:#e53935"></span>pending at the end <span class="key cited-key"></span>cited by the failure; ` +
		`the thin line in a server lane is its last logged zxid (higher is later)`
	return template.HTML(b.String()), template.HTML(legend)
}

func idleNote(idle string) string {
	if idle == "" {
		return ""
	}
	return " (did nothing: " + html.EscapeString(idle) + ")"
}

func roleShort(r zabmodel.Role) string {
	switch r {
	case zabmodel.Leading:
		return "L"
	case zabmodel.Following:
		return "F"
	case zabmodel.Observing:
		return "O"
	}
	return "?"
}

// zxidLine draws a server's last logged zxid as a step line in the lower part of its lane, scaled
// by the zxid's rank among every zxid any server logged, so that servers can be compared.
func zxidLine(s serverLane, x func(clock.Time) float64, ly float64, end clock.Time) string {
	if len(s.zxids) == 0 {
		return ""
	}
	var all []int64
	for _, z := range s.zxids {
		all = append(all, z.zxid)
	}
	slices.Sort(all)
	all = slices.Compact(all)
	maxZxid := float64(all[len(all)-1])
	if maxZxid <= 0 {
		return ""
	}
	level := func(z int64) float64 {
		// Within one lane the line only needs to show the zxid going up or back (a truncation).
		i, _ := slices.BinarySearch(all, z)
		return ly + serverHeight - 2 - float64(serverHeight-16)*float64(i+1)/float64(len(all))
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<polyline class="zxid-line" points="`)
	// A step is drawn only once a pixel further on: a burst of appends within a pixel is one step.
	prev, lastX := ly+serverHeight-2, -1.0
	for _, z := range s.zxids {
		px := x(z.at)
		if px-lastX >= 1 {
			fmt.Fprintf(&b, "%.1f,%.1f %.1f,%.1f ", px, prev, px, level(z.zxid))
			lastX = px
		} else {
			fmt.Fprintf(&b, "%.1f,%.1f ", lastX, level(z.zxid))
		}
		prev = level(z.zxid)
	}
	last := s.zxids[len(s.zxids)-1]
	fmt.Fprintf(&b, `%.1f,%.1f"><title>%s last logged zxid %s at the end</title></polyline>`, x(end), prev, s.name, zabmodel.FormatZxid(last.zxid))
	return b.String()
}

// opRect draws one client operation from its call to its return.
func opRect(client string, k int, op checkers.Operation, ev evidence, x func(clock.Time) float64, ly float64, end clock.Time) string {
	ret := op.Return
	if op.Outcome == checkers.OutcomePending || ret < op.Call {
		ret = end
	}
	fill := "#43a047"
	switch {
	case op.Outcome == checkers.OutcomeReplied && op.Err != 0:
		fill = "#fbc02d"
	case op.Outcome == checkers.OutcomeNotApplied:
		fill = "#bdbdbd"
	case op.Outcome == checkers.OutcomeUnknown:
		fill = "url(#unknown)"
	case op.Outcome == checkers.OutcomePending:
		fill = "#e53935"
	}
	class := "op"
	id := ""
	if ev.citesOp(client, k, op, end) {
		class += " cited"
		id = fmt.Sprintf(` id="cited-op-%s-%d"`, client, k)
	}
	x1, x2 := x(op.Call), x(ret)
	what := op.Kind.String() + " " + op.Path
	result := op.Outcome.String()
	if op.Outcome == checkers.OutcomeReplied || op.Outcome == checkers.OutcomeUnknown {
		result += " " + op.Err.String()
	}
	if op.Outcome == checkers.OutcomeReplied {
		result += " zxid " + zabmodel.FormatZxid(op.Zxid)
	}
	return fmt.Sprintf(`<rect%s class="%s" x="%.2f" y="%.1f" width="%.2f" height="%d" fill="%s"><title>%s#%d %s: %s to %s, %s</title></rect>`,
		id, class, x1, ly+2, math.Max(x2-x1, 1.5), clientHeight-4, fill, client, k, html.EscapeString(what), seconds(op.Call), seconds(ret), html.EscapeString(result))
}

// tickStep picks a round axis step in seconds that leaves about 120 pixels between ticks.
func tickStep(totalSeconds, width float64) float64 {
	want := totalSeconds * 120 / width
	for _, s := range []float64{0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 30, 60, 120, 300, 600} {
		if s >= want {
			return s
		}
	}
	return 1200
}

func formatTick(t, step float64) string {
	if step >= 1 {
		return fmt.Sprintf("%.0f s", t)
	}
	return fmt.Sprintf("%.3f s", t)
}
