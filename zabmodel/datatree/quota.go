package datatree

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// The quota node names of org.apache.zookeeper.Quotas.
const (
	procZookeeper   = "/zookeeper"
	quotaZookeeper  = "/zookeeper/quota"
	configZookeeper = "/zookeeper/config"
	quotaLimitNode  = "zookeeper_limits"
	quotaStatNode   = "zookeeper_stats"
)

// errJavaRuntime marks a failure where Java throws an unchecked exception
// (IllegalArgumentException, StringIndexOutOfBoundsException,
// NumberFormatException, ...) that no caller in the modelled code catches.
var errJavaRuntime = errors.New("datatree: Java throws an unchecked exception here")

func quotaStatPath(prefix string) string { return quotaZookeeper + prefix + "/" + quotaStatNode }

// trimQuotaPath is Quotas.trimQuotaPath, substring(len("/zookeeper/quota")),
// which throws on a shorter path.
func trimQuotaPath(path string) (string, error) {
	if len(path) < len(quotaZookeeper) {
		return "", fmt.Errorf("%w: quota path %q is shorter than %q", errJavaRuntime, path, quotaZookeeper)
	}
	return path[len(quotaZookeeper):], nil
}

// trieNode and pathTrie are common.PathTrie, which DataTree uses to find the
// deepest ancestor of a path that has a quota (a zookeeper_limits node).
type trieNode struct {
	value    string
	children map[string]*trieNode
	property bool
	parent   *trieNode
}

type pathTrie struct{ root *trieNode }

func newPathTrie() *pathTrie {
	return &pathTrie{root: &trieNode{value: "/", children: make(map[string]*trieNode)}}
}

// splitTriePath is PathTrie.split: the '/'-separated components that are not
// blank after String.trim.
func splitTriePath(path string) []string {
	var out []string
	for _, part := range strings.Split(path, "/") {
		if javaTrim(part) != "" {
			out = append(out, part)
		}
	}
	return out
}

func (p *pathTrie) addPath(path string) error {
	if path == "" {
		return fmt.Errorf("%w: invalid quota trie path %q", errJavaRuntime, path)
	}
	parent := p.root
	for _, part := range splitTriePath(path) {
		child := parent.children[part]
		if child == nil {
			child = &trieNode{value: part, children: make(map[string]*trieNode), parent: parent}
			parent.children[part] = child
		}
		parent = child
	}
	parent.property = true
	return nil
}

// deletePath is PathTrie.deletePath: it clears the property of the node the
// path names and unlinks it if it is a leaf. A path naming the trie's root
// dereferences its null parent in Java.
func (p *pathTrie) deletePath(path string) error {
	if path == "" {
		return fmt.Errorf("%w: invalid quota trie path %q", errJavaRuntime, path)
	}
	parent := p.root
	for _, part := range splitTriePath(path) {
		if parent.children[part] == nil {
			return nil
		}
		parent = parent.children[part]
	}
	realParent := parent.parent
	if realParent == nil {
		return fmt.Errorf("%w: quota trie path %q names the trie root", errJavaRuntime, path)
	}
	if child := realParent.children[parent.value]; child != nil {
		child.property = false
		if len(child.children) == 0 {
			child.parent = nil
			delete(realParent.children, parent.value)
		}
	}
	return nil
}

// findMaxPrefix returns the deepest path with a property along path, or "/".
func (p *pathTrie) findMaxPrefix(path string) string {
	if len(p.root.children) == 0 {
		return "/" // no quota anywhere: skip splitting the path
	}
	node := p.root
	var deepest *trieNode
	for _, part := range splitTriePath(path) {
		node = node.children[part]
		if node == nil {
			break
		}
		if node.property {
			deepest = node
		}
	}
	if deepest == nil {
		return "/"
	}
	var parts []string
	for n := deepest; n != p.root && n != nil; n = n.parent {
		parts = append(parts, n.value)
	}
	slices.Reverse(parts)
	return "/" + strings.Join(parts, "/")
}

// properties lists the paths with a property, sorted, for comparisons.
func (p *pathTrie) properties() []string {
	var out []string
	var walk func(n *trieNode, prefix string)
	walk = func(n *trieNode, prefix string) {
		names := make([]string, 0, len(n.children))
		for name := range n.children { // determinism:ok sorted below
			names = append(names, name)
		}
		slices.Sort(names)
		for _, name := range names {
			child := n.children[name]
			if child.property {
				out = append(out, prefix+"/"+name)
			}
			walk(child, prefix+"/"+name)
		}
	}
	walk(p.root, "")
	return out
}

// statsTrack is org.apache.zookeeper.StatsTrack, the text format of the
// zookeeper_limits and zookeeper_stats nodes: "count=N,bytes=M", and other
// keys (such as countHardLimit) after an "=" as ";key=value" in sorted order.
type statsTrack struct{ values map[string]int64 }

// parseStatsTrack parses as the StatsTrack(byte[]) constructor: the text is
// split at runs of ',' and ';' (a leading separator yields an empty first
// pair) and each pair at '='; a pair without a value, or a value that
// Long.parseLong rejects, throws in Java and is an error here. An empty value
// between two '=' reads as -1.
func parseStatsTrack(data []byte) (statsTrack, error) {
	s := statsTrack{values: make(map[string]int64)}
	text := javaDecodeUTF8(data)
	if text == "" {
		return s, nil
	}
	for _, pair := range splitPairs(text) {
		kv := javaSplit(pair, "=")
		if len(kv) < 2 {
			return s, fmt.Errorf("%w: quota pair %q has no value", errJavaRuntime, pair)
		}
		value := kv[1]
		if value == "" {
			value = "-1"
		}
		v, ok := parseJavaInteger(value, 64)
		if !ok {
			return s, fmt.Errorf("%w: quota value %q is not a long", errJavaRuntime, value)
		}
		s.values[kv[0]] = v
	}
	return s, nil
}

// splitPairs is Pattern.compile("[,;]+").split(text): the text between runs
// of separators, a leading empty part when the text starts with one, trailing
// empty parts removed, and the text itself when there is no separator.
func splitPairs(text string) []string {
	isSeparator := func(c byte) bool { return c == ',' || c == ';' }
	var parts []string
	start, matched := 0, false
	for i := 0; i < len(text); {
		if !isSeparator(text[i]) {
			i++
			continue
		}
		end := i
		for end < len(text) && isSeparator(text[end]) {
			end++
		}
		parts = append(parts, text[start:i])
		start, i, matched = end, end, true
	}
	if !matched {
		return []string{text}
	}
	parts = append(parts, text[start:])
	for len(parts) > 0 && parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	return parts
}

func (s statsTrack) get(key string) int64 {
	if v, ok := s.values[key]; ok {
		return v
	}
	return -1
}

func (s statsTrack) String() string {
	var b strings.Builder
	b.WriteString("count=" + strconv.FormatInt(s.get("count"), 10))
	b.WriteString(",bytes=" + strconv.FormatInt(s.get("bytes"), 10))
	var keys []string
	for key := range s.values { // determinism:ok sorted below
		if key != "count" && key != "bytes" {
			keys = append(keys, key)
		}
	}
	if len(keys) > 0 {
		slices.SortFunc(keys, javaCompare)
		b.WriteString("=")
		for _, key := range keys {
			b.WriteString(";" + key + "=" + strconv.FormatInt(s.values[key], 10))
		}
	}
	return b.String()
}
