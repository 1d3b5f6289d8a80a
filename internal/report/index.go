package report

import (
	"fmt"
	"html/template"
	"io"
	"slices"
)

// IndexEntry is one failing seed in a sweep's index.
type IndexEntry struct {
	Seed     uint64
	Class    string
	Label    string // what the seed was run for, e.g. the bug a hunt found, or ""
	Headline string // the first line of the explanation
	Replay   string
	// Report is the path of the seed's report.html relative to the index, or "" when no artifacts
	// were written for the seed (past --out-max).
	Report string
}

// IndexMeta says which sweep the index is of.
type IndexMeta struct {
	Title       string // e.g. "simrun run: seeds 1..1000"
	Build       string
	CommandLine string
	Summary     string // the sweep's counts, in a line or two
	// MaxPerClass bounds the seeds listed under each class (0: 500); the first seed of every
	// class is always listed, and the count says how many there were.
	MaxPerClass int
}

type indexClass struct {
	Class   string
	Count   int
	First   IndexEntry
	Rest    []IndexEntry
	Omitted int
}

// WriteIndex writes the index page of a sweep's failing seeds: one section per failure class, in
// order of class name, each with its count and its first seed at the top, however many seeds
// the sweep found, and links to the seeds' reports.
func WriteIndex(w io.Writer, meta IndexMeta, entries []IndexEntry) error {
	limit := meta.MaxPerClass
	if limit <= 0 {
		limit = 500
	}
	byClass := map[string][]IndexEntry{}
	for _, e := range entries {
		byClass[e.Class] = append(byClass[e.Class], e)
	}
	var classes []indexClass
	for _, class := range sortedKeys(byClass) {
		list := byClass[class]
		slices.SortStableFunc(list, func(a, b IndexEntry) int {
			switch {
			case a.Seed < b.Seed:
				return -1
			case a.Seed > b.Seed:
				return 1
			}
			return 0
		})
		c := indexClass{Class: class, Count: len(list), First: list[0]}
		rest := list[1:]
		if len(rest) > limit-1 {
			c.Omitted = len(rest) - (limit - 1)
			rest = rest[:limit-1]
		}
		c.Rest = rest
		classes = append(classes, c)
	}
	data := struct {
		Meta    IndexMeta
		Classes []indexClass
		Total   int
		Style   template.CSS
	}{meta, classes, len(entries), template.CSS(reportStyle)}
	if err := indexTemplate.Execute(w, data); err != nil {
		return fmt.Errorf("report: index: %w", err)
	}
	return nil
}

var indexTemplate = template.Must(template.New("index").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{{.Meta.Title}}</title>
<style>{{.Style}}
.class-list li { margin: 2px 0; }
</style>
</head>
<body>
<h1>{{.Meta.Title}}</h1>
<table class="meta">
{{if .Meta.CommandLine}}<tr><th>command</th><td><code>{{.Meta.CommandLine}}</code></td></tr>{{end}}
<tr><th>build</th><td><code>{{.Meta.Build}}</code></td></tr>
{{if .Meta.Summary}}<tr><th>summary</th><td>{{.Meta.Summary}}</td></tr>{{end}}
</table>
{{if not .Classes}}<p>No seed failed.</p>{{else}}
<h2>{{.Total}} failing seeds in {{len .Classes}} classes</h2>
<ul>{{range .Classes}}<li><a href="#class-{{.Class}}">{{.Class}}</a>: {{.Count}}</li>{{end}}</ul>
{{range .Classes}}
<section class="failure-class" id="class-{{.Class}}">
<h2>{{.Class}} ({{.Count}} seeds)</h2>
<ul class="class-list">
{{with .First}}<li class="first">{{if .Label}}<b>{{.Label}}</b> {{end}}seed {{.Seed}}{{if .Report}}: <a href="{{.Report}}">report</a>{{end}} <code>{{.Replay}}</code><br>{{.Headline}}</li>{{end}}
{{range .Rest}}<li>{{if .Label}}<b>{{.Label}}</b> {{end}}seed {{.Seed}}{{if .Report}}: <a href="{{.Report}}">report</a>{{end}} <code>{{.Replay}}</code></li>{{end}}
{{if .Omitted}}<li>... and {{.Omitted}} more seeds of this class (the JSON output of the sweep lists every one)</li>{{end}}
</ul>
</section>
{{end}}{{end}}
</body>
</html>
`))
