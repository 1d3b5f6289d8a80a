package main

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
)

// memoryBudget is the --max-memory of simrun check: the most memory a search may use, in bytes
// (0: no bound). A model checker's visited set grows until the bounds are exhausted or the
// machine runs out, and a process the kernel kills for memory prints nothing, so a search stops
// at its budget and says it was cut by memory, as it does at --max-states or --time-limit.
//
// The budget is kept in two ways. The Go runtime's soft memory limit is set to it, so the
// collector works harder as the heap nears it whatever GOGC says (simrun runs with a high GOGC,
// which would otherwise let garbage take five times the live heap). And the search stops once
// the live heap reaches half of it: past that point the collector would spend most of the
// process's time keeping the heap under the limit.
type memoryBudget struct {
	bytes int64
	// auto is true when the budget was derived from the machine's memory, not given.
	auto bool
}

// memoryUnits are the suffixes --max-memory takes, longest first so that "MiB" is not read as
// "B" after "Mi".
var memoryUnits = []struct {
	suffix string
	scale  int64
}{
	{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40},
	{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12},
	{"B", 1},
}

// Set parses a size such as 8GiB, 500MB, 1.5GiB or 1048576 (bytes).
func (b *memoryBudget) Set(text string) error {
	number, scale := strings.TrimSpace(text), int64(1)
	for _, u := range memoryUnits {
		if strings.HasSuffix(number, u.suffix) {
			number, scale = strings.TrimSpace(strings.TrimSuffix(number, u.suffix)), u.scale
			break
		}
	}
	value, err := strconv.ParseFloat(number, 64)
	if err != nil || math.IsNaN(value) || math.IsInf(value, 0) || value < 0 {
		return fmt.Errorf("a size is a number of bytes with an optional unit (KiB, MiB, GiB, TiB, KB, MB, GB, TB), not %q", text)
	}
	size := value * float64(scale)
	if size > math.MaxInt64/2 {
		return fmt.Errorf("size %q is too large", text)
	}
	if size != 0 && size < 64<<20 {
		return fmt.Errorf("size %q is below 64 MiB, less than a search needs to start (0 means no bound)", text)
	}
	b.bytes, b.auto = int64(size), false
	return nil
}

func (b *memoryBudget) String() string {
	if b == nil || b.bytes == 0 {
		return "0"
	}
	return formatBytes(b.bytes)
}

// describe says what the budget is and where it came from, for the search's header.
func (b *memoryBudget) describe() string {
	switch {
	case b.bytes == 0 && b.auto:
		return "none (this machine's memory is unknown; set --max-memory)"
	case b.bytes == 0:
		return "none (--max-memory 0)"
	case b.auto:
		return formatBytes(b.bytes) + ", half this machine's memory (--max-memory changes it)"
	}
	return formatBytes(b.bytes)
}

// liveHeapBound is the live heap at which the search stops (modelcheck.Options.MaxMemory).
func (b *memoryBudget) liveHeapBound() int64 { return b.bytes / 2 }

// hold sets the runtime's soft memory limit to the budget and returns what restores the
// previous one (the tests run many commands in one process).
func (b *memoryBudget) hold() func() {
	if b.bytes == 0 {
		return func() {}
	}
	previous := debug.SetMemoryLimit(b.bytes)
	return func() { debug.SetMemoryLimit(previous) }
}

// defaultMemoryBudget is half the machine's memory, or no bound (said in the header) where the
// machine's memory cannot be read.
func defaultMemoryBudget() memoryBudget {
	total, err := physicalMemory()
	if err != nil {
		return memoryBudget{auto: true}
	}
	return memoryBudget{bytes: total / 2, auto: true}
}

// physicalMemory reads MemTotal from /proc/meminfo (Linux; elsewhere it fails).
func physicalMemory() (int64, error) {
	file, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0, err
	}
	defer file.Close()
	scanner := bufio.NewScanner(file)
	for scanner.Scan() {
		fields := strings.Fields(scanner.Text())
		if len(fields) == 3 && fields[0] == "MemTotal:" && fields[2] == "kB" {
			kilobytes, err := strconv.ParseInt(fields[1], 10, 64)
			if err != nil || kilobytes <= 0 {
				return 0, fmt.Errorf("/proc/meminfo: MemTotal %q", fields[1])
			}
			return kilobytes << 10, nil
		}
	}
	if err := scanner.Err(); err != nil {
		return 0, err
	}
	return 0, fmt.Errorf("/proc/meminfo has no MemTotal line")
}

// formatBytes prints a size in the largest binary unit that keeps it at least 1, to a tenth.
func formatBytes(n int64) string {
	for _, u := range []struct {
		suffix string
		scale  int64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n >= u.scale {
			return strings.TrimSuffix(fmt.Sprintf("%.1f", float64(n)/float64(u.scale)), ".0") + " " + u.suffix
		}
	}
	return strconv.FormatInt(n, 10) + " B"
}
