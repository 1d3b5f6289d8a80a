// Package detcheck keeps zabsim's simulated packages deterministic by construction. It parses and
// type-checks their source and reports every construct through which the host could leak into a run:
// reading the wall clock, global or cryptographic randomness, the environment, starting goroutines,
// and ranging over a map (whose order Go randomises on purpose).
//
// A line that is deliberately exempt carries a marker comment with a reason, on the line itself or
// the line above:
//
//	for k := range m { // determinism:ok order-independent: only deletes
//
// Usage (the module's test runs exactly this over every simulated package):
//
//	findings, err := detcheck.CheckDirs(moduleRoot, []string{"sim", "net", "clock", "zabmodel"})
//	for _, f := range findings {
//		fmt.Println(f) // file:line: rule: what was found
//	}
package detcheck

import (
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Marker exempts a line when followed by a reason.
const Marker = "determinism:ok"

// Finding is one construct that could make a run depend on the host.
type Finding struct {
	Pos  token.Position
	Rule string
	What string
}

func (f Finding) String() string { return fmt.Sprintf("%s: %s: %s", f.Pos, f.Rule, f.What) }

// Rules, by name.
const (
	RuleWallClock   = "wall-clock"
	RuleGlobalRand  = "global-randomness"
	RuleCryptoRand  = "crypto-randomness"
	RuleGoroutine   = "goroutine"
	RuleEnvironment = "environment"
	RuleMapRange    = "map-range"
	RuleMarker      = "marker-without-reason"
	// RuleTraceHash: a trace record that depends on whether the trace is rendered (a Note under
	// "if w.Tracing()", or a TraceEvent there without an else), so that a run with its trace on
	// hashes differently from the same run without it.
	RuleTraceHash = "trace-hash"
)

// forbiddenCalls maps an import path to the package-level functions that simulated code must not
// call, with the rule each breaks. An empty set forbids the whole package.
var forbiddenCalls = map[string]struct {
	rule  string
	names []string
	all   bool
	allow []string
}{
	"time":         {rule: RuleWallClock, names: []string{"Now", "Since", "Until", "Sleep", "After", "AfterFunc", "NewTimer", "NewTicker", "Tick"}},
	"math/rand":    {rule: RuleGlobalRand, all: true},
	"math/rand/v2": {rule: RuleGlobalRand, all: true, allow: []string{"New", "NewPCG", "NewChaCha8", "NewZipf"}},
	"crypto/rand":  {rule: RuleCryptoRand, all: true},
	"os":           {rule: RuleEnvironment, names: []string{"Getenv", "LookupEnv", "Environ", "ExpandEnv", "Hostname", "Getpid", "Getwd"}},
	"syscall":      {rule: RuleEnvironment, names: []string{"Getenv", "Environ"}},
}

// checker shares one file set and one importer across packages: importing is the slow part.
type checker struct {
	fset     *token.FileSet
	importer types.Importer
}

func newChecker() *checker {
	fset := token.NewFileSet()
	return &checker{fset: fset, importer: importer.ForCompiler(fset, "gc", nil)}
}

// CheckDirs checks every package under each of dirs (relative to root, recursively), skipping test
// files and testdata. Directories that do not exist are skipped, so the list can name packages that
// are still to come.
func CheckDirs(root string, dirs []string) ([]Finding, error) {
	c := newChecker()
	var pkgDirs []string
	for _, d := range dirs {
		base := filepath.Join(root, d)
		if _, err := os.Stat(base); err != nil {
			continue
		}
		err := filepath.WalkDir(base, func(path string, e fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if e.IsDir() {
				if e.Name() == "testdata" {
					return filepath.SkipDir
				}
				pkgDirs = append(pkgDirs, path)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	var all []Finding
	for _, d := range pkgDirs {
		found, err := c.checkPackage(d)
		if err != nil {
			return nil, err
		}
		all = append(all, found...)
	}
	return all, nil
}

// CheckPackage checks the non-test Go files of one directory.
func CheckPackage(dir string) ([]Finding, error) { return newChecker().checkPackage(dir) }

func (c *checker) checkPackage(dir string) ([]Finding, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	fset := c.fset
	var files []*ast.File
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.ParseComments)
		if err != nil {
			return nil, fmt.Errorf("detcheck: %w", err)
		}
		files = append(files, f)
	}
	if len(files) == 0 {
		return nil, nil
	}
	info := &types.Info{Types: map[ast.Expr]types.TypeAndValue{}, Uses: map[*ast.Ident]types.Object{}}
	conf := types.Config{Importer: c.importer, Error: func(error) {}}
	// Type errors are not this checker's business (the compiler reports them); partial type
	// information still identifies map ranges wherever it exists.
	_, _ = conf.Check(files[0].Name.Name, fset, files, info)

	var out []Finding
	for _, f := range files {
		out = append(out, checkFile(fset, f, info)...)
	}
	slices.SortFunc(out, func(a, b Finding) int {
		if c := strings.Compare(a.Pos.Filename, b.Pos.Filename); c != 0 {
			return c
		}
		if a.Pos.Line != b.Pos.Line {
			return a.Pos.Line - b.Pos.Line
		}
		return a.Pos.Column - b.Pos.Column
	})
	return out, nil
}

func checkFile(fset *token.FileSet, f *ast.File, info *types.Info) []Finding {
	exempt, bad := markedLines(fset, f)
	out := bad
	report := func(pos token.Pos, rule, what string) {
		p := fset.Position(pos)
		if exempt[p.Line] || exempt[p.Line-1] {
			return
		}
		out = append(out, Finding{Pos: p, Rule: rule, What: what})
	}
	imports := map[string]string{} // local name -> import path
	for _, spec := range f.Imports {
		path, _ := strconv.Unquote(spec.Path.Value)
		name := filepath.Base(path)
		if path == "math/rand/v2" {
			name = "rand"
		}
		if spec.Name != nil {
			name = spec.Name.Name
		}
		imports[name] = path
		if rule, ok := forbiddenCalls[path]; ok && rule.all && len(rule.allow) == 0 {
			report(spec.Pos(), rule.rule, "imports "+path)
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.GoStmt:
			report(n.Pos(), RuleGoroutine, "go statement")
		case *ast.SelectorExpr:
			pkg, ok := n.X.(*ast.Ident)
			if !ok {
				return true
			}
			path, ok := imports[pkg.Name]
			if !ok {
				return true
			}
			rule, ok := forbiddenCalls[path]
			if !ok || isTypeOrConst(info, n.Sel) || slices.Contains(rule.allow, n.Sel.Name) {
				return true
			}
			if rule.all || slices.Contains(rule.names, n.Sel.Name) {
				report(n.Pos(), rule.rule, path+"."+n.Sel.Name)
			}
		case *ast.IfStmt:
			if !callsMethod(n.Cond, "Tracing", "Rendering") {
				return true
			}
			// A Note hashes its text, so no Note may depend on rendering. A TraceEvent hashes only
			// its structured fields, so "if Tracing() { with detail } else { without }" is fine,
			// but a TraceEvent with no else branch is written only when rendering.
			hashed := []string{"Note"}
			if n.Else == nil {
				hashed = append(hashed, "TraceEvent")
			}
			ast.Inspect(n, func(m ast.Node) bool {
				if call, ok := m.(*ast.CallExpr); ok && callsMethod(call.Fun, hashed...) {
					report(call.Pos(), RuleTraceHash, "a trace record that depends on whether the trace is rendered: the hash would too")
				}
				return true
			})
		case *ast.RangeStmt:
			if tv, ok := info.Types[n.X]; ok && tv.Type != nil {
				if _, isMap := tv.Type.Underlying().(*types.Map); isMap {
					report(n.Pos(), RuleMapRange, "range over a map: its order is random; sort the keys, or mark why order cannot matter")
				}
			}
		}
		return true
	})
	return out
}

// callsMethod reports whether expression e calls, or is, a selector naming one of names.
func callsMethod(e ast.Expr, names ...string) bool {
	found := false
	ast.Inspect(e, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok && slices.Contains(names, sel.Sel.Name) {
			found = true
		}
		return !found
	})
	return found
}

// isTypeOrConst reports whether a package member is a type or a constant (time.Duration,
// time.Millisecond, the rand.Rand type), which carry no nondeterminism. Without type information the
// member counts as a function, so that a failed import errs on the side of reporting.
func isTypeOrConst(info *types.Info, sel *ast.Ident) bool {
	switch info.Uses[sel].(type) {
	case *types.TypeName, *types.Const:
		return true
	}
	return false
}

// markedLines returns the lines exempted by a marker with a reason, and findings for markers without
// one (an exemption must say why).
func markedLines(fset *token.FileSet, f *ast.File) (map[int]bool, []Finding) {
	exempt := map[int]bool{}
	var bad []Finding
	for _, group := range f.Comments {
		for _, c := range group.List {
			text := strings.TrimSpace(strings.TrimPrefix(strings.TrimPrefix(c.Text, "//"), "/*"))
			idx := strings.Index(text, Marker)
			if idx < 0 {
				continue
			}
			p := fset.Position(c.Pos())
			if strings.TrimSpace(strings.TrimSuffix(text[idx+len(Marker):], "*/")) == "" {
				bad = append(bad, Finding{Pos: p, Rule: RuleMarker, What: "a " + Marker + " marker must give its reason"})
				continue
			}
			exempt[p.Line] = true
		}
	}
	return exempt, bad
}
