package conform

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
)

// WriteOps writes ops as JSON lines in canonical form, for example to save a
// generated sequence as a hand-written case.
func WriteOps(w io.Writer, ops []Op) error {
	return writeLines(w, len(ops), func(i int) any { return ops[i] })
}

// WriteResults writes results as JSON lines.
func WriteResults(w io.Writer, results []Result) error {
	return writeLines(w, len(results), func(i int) any { return results[i] })
}

func writeLines(w io.Writer, n int, item func(int) any) error {
	buffered := bufio.NewWriter(w)
	for i := 0; i < n; i++ {
		line, err := json.Marshal(item(i))
		if err != nil {
			return fmt.Errorf("encode line %d: %w", i+1, err)
		}
		line = append(line, '\n')
		if _, err := buffered.Write(line); err != nil {
			return fmt.Errorf("write line %d: %w", i+1, err)
		}
	}
	if err := buffered.Flush(); err != nil {
		return fmt.Errorf("flush: %w", err)
	}
	return nil
}

// ReadResults reads result lines as WriteResults writes them. Blank lines
// are skipped.
func ReadResults(r io.Reader) ([]Result, error) {
	scanner := bufio.NewScanner(r)
	scanner.Buffer(make([]byte, 64<<10), MaxLineBytes)
	var results []Result
	lineNumber := 0
	for scanner.Scan() {
		lineNumber++
		line := bytes.TrimSpace(scanner.Bytes())
		if len(line) == 0 {
			continue
		}
		var result Result
		if err := json.Unmarshal(line, &result); err != nil {
			return nil, &ParseError{Line: lineNumber, Msg: fmt.Sprintf("bad result: %v", err)}
		}
		results = append(results, result)
	}
	if err := scanner.Err(); err != nil {
		return nil, fmt.Errorf("read results: %w", err)
	}
	return results, nil
}

// ParseFile parses the sequence in a file; errors name the file.
func ParseFile(path string) ([]Op, error) {
	file, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open sequence: %w", err)
	}
	defer file.Close()
	ops, err := Parse(file)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return ops, nil
}

// ReadResultsFile reads a results file; errors name the file.
func ReadResultsFile(path string) ([]Result, error) {
	file, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open results: %w", err)
	}
	defer file.Close()
	results, err := ReadResults(file)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return results, nil
}
