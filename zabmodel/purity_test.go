package zabmodel

import (
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// coreTypes are the cores (see ready.go): state plus a step function whose ready lists the
// effects. Their methods read their own state, their memory, their configuration and what their
// view interfaces give them, and call nothing that acts on the world.
var coreTypes = []string{
	"commitCore", "cnxCore", "followerCore", "handlerCore", "leaderCore", "learnerCore",
	"senderCore", "snapshotThread", "syncCore", "syncDecision", "dbCore", "peerCore",
}

// driverTypes are the types whose methods act on the world: the host and the drivers that apply
// the cores' effects through it. A core that called one of their methods would act inline.
var driverTypes = []string{
	"host", "simHost", "peer", "leader", "learner", "learnerHandler", "zkServer", "zkDatabase",
	"syncProcessor", "cnxManager", "clientConn",
}

// timerMethods are the methods of the timer interface (host.go): a core that is its own timer (the
// snapshot thread) has them, and they are the host's entry into the core's driver, not the core.
var timerMethods = []string{"OnTimer", "fire", "TimerName"}

// TestCoresCallNoDriver type-checks the package and checks that no method of a core calls the
// host or a driver: the cores' purity, which the README claims, is checked, not only written.
func TestCoresCallNoDriver(t *testing.T) {
	fset := token.NewFileSet()
	entries, err := os.ReadDir(".")
	require.NoError(t, err)
	var files []*ast.File
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		require.NoError(t, err)
		files = append(files, f)
	}
	found, seen, err := driverCalls(fset, files, importer.ForCompiler(fset, "source", nil), coreTypes, driverTypes)
	require.NoError(t, err)
	assert.Empty(t, found, "a core calls the host or a driver inline")
	// Every core the list names has methods: a renamed core would silently leave the check.
	assert.ElementsMatch(t, coreTypes, seen)
}

// TestDriverCallsFindsAnInlineCall feeds the check a core that arms a timer through its host and
// one that calls a driver's method, and sees both reported, and a pure core not.
func TestDriverCallsFindsAnInlineCall(t *testing.T) {
	const src = `package p

type host interface{ setTimer(d int) }
type driver struct{ h host }
func (d *driver) apply() {}

type impureCore struct{ h host; d *driver }
func (c *impureCore) step() {
	c.h.setTimer(1)
	c.d.apply()
}

type pureCore struct{ n int }
func (c *pureCore) step(d *driver) *driver { c.n++; return d }
`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "p.go", src, 0)
	require.NoError(t, err)
	found, seen, err := driverCalls(fset, []*ast.File{f}, nil, []string{"impureCore", "pureCore"}, []string{"host", "driver"})
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{"impureCore", "pureCore"}, seen)
	assert.Equal(t, []string{
		"p.go:9:2: impureCore.step calls host.setTimer",
		"p.go:10:2: impureCore.step calls driver.apply",
	}, found)
}

// driverCalls type-checks files and returns, for every method of a core type that calls a method
// of a driver type (directly, or through an embedded field), where and what, and the cores whose
// methods it saw.
func driverCalls(fset *token.FileSet, files []*ast.File, imp types.Importer, cores, drivers []string) (found, seen []string, err error) {
	info := &types.Info{Selections: map[*ast.SelectorExpr]*types.Selection{}}
	conf := types.Config{Importer: imp}
	if _, err := conf.Check("p", fset, files, info); err != nil {
		return nil, nil, fmt.Errorf("type-checking: %w", err)
	}
	for _, f := range files {
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Recv == nil || fn.Body == nil {
				continue
			}
			core := receiverName(fn.Recv.List[0].Type)
			if !slices.Contains(cores, core) {
				continue
			}
			if slices.Contains(timerMethods, fn.Name.Name) {
				continue // A core that is its own timer: the host's entry into its driver.
			}
			if !slices.Contains(seen, core) {
				seen = append(seen, core)
			}
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				sel, ok := call.Fun.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				s := info.Selections[sel]
				if s == nil || s.Kind() != types.MethodVal {
					return true
				}
				recv := s.Obj().(*types.Func).Type().(*types.Signature).Recv().Type()
				if p, ok := recv.(*types.Pointer); ok {
					recv = p.Elem()
				}
				named, ok := recv.(*types.Named)
				if !ok || !slices.Contains(drivers, named.Obj().Name()) {
					return true
				}
				found = append(found, fmt.Sprintf("%s: %s.%s calls %s.%s", fset.Position(call.Pos()), core, fn.Name.Name,
					named.Obj().Name(), sel.Sel.Name))
				return true
			})
		}
	}
	return found, seen, nil
}

// receiverName is the name of a method's receiver type, without its pointer.
func receiverName(e ast.Expr) string {
	if star, ok := e.(*ast.StarExpr); ok {
		e = star.X
	}
	if id, ok := e.(*ast.Ident); ok {
		return id.Name
	}
	return ""
}
