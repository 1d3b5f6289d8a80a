package report

import "html/template"

var pageTemplate = template.Must(template.New("report").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{{.Title}}</title>
<style>{{.Style}}</style>
</head>
<body>
<header>
<h1>seed {{.Seed}}: <span class="verdict {{.Verdict}}">{{.Verdict}}</span> {{.Class}}</h1>
<table class="meta">
<tr><th>replay</th><td><code id="replay-command">{{.Meta.Replay}}</code></td></tr>
{{if .Meta.CommandLine}}<tr><th>made by</th><td><code>{{.Meta.CommandLine}}</code></td></tr>{{end}}
<tr><th>build</th><td><code id="build">{{.Meta.Build}}</code></td></tr>
<tr><th>run</th><td>{{.Stats}}</td></tr>
{{if .Meta.Trace}}<tr><th>text trace</th><td><a href="{{.Meta.Trace}}">{{.Meta.Trace}}</a></td></tr>{{end}}
</table>
{{if .Class}}
<section id="evidence" class="evidence">
<h2>What broke: {{.EvidenceTitle}}</h2>
<table class="meta">{{range .EvidenceFields}}<tr><th>{{.Name}}</th><td>{{.Value}}</td></tr>{{end}}</table>
<details open><summary>explanation</summary><pre>{{.Explanation}}</pre></details>
{{if .EvidenceTime}}<p><a href="#messages" class="goto" data-time="violation">show the messages around the violation at {{.EvidenceTime}}</a></p>{{end}}
</section>
{{end}}
</header>

<section id="timeline-section">
<h2>Timeline</h2>
<p class="legend">{{.Legend}}</p>
<div class="scroll">{{.Timeline}}</div>
</section>

<section id="messages">
<h2>Messages</h2>
<p class="controls">
<button type="button" id="zoom-in">zoom in</button>
<button type="button" id="zoom-out">zoom out</button>
<button type="button" id="pan-left">◀ earlier</button>
<button type="button" id="pan-right">later ▶</button>
<button type="button" id="goto-violation">the violation</button>
<button type="button" id="whole-run">the whole run</button>
<input type="range" id="scrub" min="0" max="1000" value="1000" aria-label="position in the run">
<span id="window-label"></span>
</p>
<p class="legend">Each arrow is one message, from its sender's lane where it was sent to its receiver's where it was delivered. Sends and deliveries are laid out left to right in the order they happened, one column each, so that a burst within a microsecond stays readable; the axis gives the virtual time. Red arrows are the ones the failure cites; the red line is the violation; dashed orange lines are leaders established. Hover an arrow for its full label. Zoom changes how many messages are in view; the slider moves through the whole run.</p>
{{if .Dropped}}<p class="note">The run delivered more messages than a report keeps: the first {{.Dropped}} are not drawn.</p>{{end}}
<div class="scroll" id="diagram-scroll"><svg id="diagram" xmlns="http://www.w3.org/2000/svg" width="1400" height="100"></svg></div>
</section>

<section id="script">
<h2>Fault script</h2>
<p class="legend">Times count from the start of the fault phase; "acted" gives the run's virtual time. Click a time to see the messages at that moment.</p>
<pre class="script-header">{{.ScriptHeader}}</pre>
<ol class="script-lines" start="0">
{{range .Actions}}<li id="action-{{.Index}}" class="{{if not .Acted}}not-acted{{else if .Idle}}idle{{end}}"><code>{{.Text}}</code>{{if .Line}} <span class="line">(line {{.Line}})</span>{{end}}
{{if .Acted}} acted at <a href="#messages" class="goto" data-time="{{.AtNano}}">{{.At}}</a>{{if .Idle}}: did nothing, {{.Idle}}{{end}}{{else}} never came (the run ended first){{end}}</li>
{{else}}<li>no fault actions</li>{{end}}
</ol>
</section>

<section id="checks">
<h2>Checks</h2>
{{if .ChecksRan}}
<table class="checks"><tr><th>checker</th><th>verdict</th><th>summary</th></tr>
{{range .Checks}}<tr class="{{if .Failed}}failed{{end}}"><td>{{.Checker}}</td><td>{{.Status}}</td><td>{{.Summary}}</td></tr>{{end}}
</table>
{{else}}<p>No client-visible check ran: the run stopped at the failure above, and its history would only echo it.</p>{{end}}
<h3>porcupine visualizations</h3>
{{if .Porcupine}}<ul>{{range .Porcupine}}<li>{{.Checker}}: {{.Status}}{{if .File}}, <a class="porcupine" href="{{.File}}">{{.File}}</a> (faults and leader changes annotated){{end}}</li>{{end}}</ul>
{{else}}<p>None: no linearizability check ran in this run.</p>{{end}}
</section>

<script type="application/json" id="run-data">{{.Data}}</script>
<script>{{.Script}}</script>
</body>
</html>
`))
