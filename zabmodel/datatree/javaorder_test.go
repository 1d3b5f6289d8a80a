package datatree

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zabsim/zabsim/zabmodel/proto"
)

// TestJavaOrders replays the adds and removes that testdata/JavaOrders.java
// made on a HashSet<String> and on a ConcurrentHashMap-backed set of Ids in a
// JDK 17, and requires the emulations to iterate in the recorded orders
// (which the goldens show the server's close-session and auth-expansion
// orders follow).
func TestJavaOrders(t *testing.T) {
	file, err := os.Open(filepath.Join("testdata", "java_orders.txt"))
	require.NoError(t, err)
	defer file.Close()
	scanner := bufio.NewScanner(file)
	scanner.Buffer(make([]byte, 1<<20), 1<<20)
	var set *javaHashSet
	var auth *AuthInfo
	checked := 0
	for scanner.Scan() {
		kind, rest, _ := strings.Cut(scanner.Text(), " ")
		fields := strings.Fields(rest)
		switch kind {
		case "SET":
			set = &javaHashSet{}
			for _, op := range fields {
				if op[0] == '+' {
					set.add(op[1:])
				} else {
					set.remove(op[1:])
				}
			}
		case "ORDER":
			assert.Equal(t, fields, set.keys())
			checked++
		case "CLONE":
			assert.Equal(t, fields, set.clone().keys())
			checked++
		case "CHM":
			auth = &AuthInfo{}
			for _, id := range fields {
				scheme, value, _ := strings.Cut(id, "|")
				auth.Add(proto.ID{Scheme: scheme, ID: value})
			}
		case "CHMORDER":
			var got []string
			for _, id := range auth.IDs() {
				got = append(got, id.Scheme+"|"+id.ID)
			}
			assert.Equal(t, fields, got)
			checked++
		}
	}
	require.NoError(t, scanner.Err())
	assert.Equal(t, 12, checked, "every recorded order was checked")
}

func TestJavaHashSetSmallSet(t *testing.T) {
	s := &javaHashSet{}
	for _, p := range []string{"/e1", "/dir/e2", "/dir/q-0000000001"} {
		s.add(p)
	}
	// JDK 17 prints [/dir/q-0000000001, /e1, /dir/e2] for this set; the
	// sessions golden shows /e1 deleted before /dir/e2.
	assert.Equal(t, []string{"/dir/q-0000000001", "/e1", "/dir/e2"}, s.keys())
	assert.True(t, s.contains("/e1"))
	assert.True(t, s.remove("/e1"))
	assert.False(t, s.remove("/e1"))
	assert.Equal(t, 2, s.len())
	var empty *javaHashSet
	assert.Equal(t, 0, empty.len())
	assert.Empty(t, empty.clone().keys())
}
